"""Helpers for the trainer tests: a home whose buffer holds samples of captured turns, built through the real
trajectory store and sample buffer, and a fake of the Tinker client's methods (the service is unreachable)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from metaclaw_plugin.store import Database, ledger
from metaclaw_plugin.store.trajectories import TrajectoryStore
from metaclaw_plugin.training.buffer import SampleBuffer
from metaclaw_plugin.types import Sample, Turn, new_id

FAST_SCHEDULER = {  # the scheduler of mode rl checking often, with no sleep window or idle wait in the way
    "interval_seconds": 0.1,
    "idle_sources": ["host"],
    "present_minutes": 0,
    "min_window_minutes": 0,
    "sleep_enabled": False,
}
PROMPT = [
    {"role": "system", "content": "You are a helpful assistant.\n<skills>Always answer briefly.</skills>"},
    {"role": "user", "content": "Did the deploy succeed?"},
]
ANSWER_A = "yes"
ANSWER_B = "no"


def capture(
    db_file: Path, rows: list[tuple[list[dict[str, Any]], str, float]], generation: int = 0, tenant: str = "default"
) -> list[str]:
    """Store each (messages, answer, reward) as a captured turn of ``tenant`` and queue it as a query sample."""
    store = TrajectoryStore(db_file)
    store.open()
    ids = []
    for messages, answer, _ in rows:
        turn = Turn(
            turn_id=new_id(),
            session_id="s-" + new_id()[:8],
            tenant=tenant,
            kind="main",
            messages=messages,
            response={"role": "assistant", "content": answer},
            skill_generation=generation,
        )
        store.append_turn(turn)
        ids.append(turn.turn_id)
    store.flush()
    store.close()
    buffer = SampleBuffer(Database(db_file))
    for turn_id, (_, _, reward) in zip(ids, rows):
        assert buffer.add(Sample(turn_id, "s", tenant, generation, reward))
    return ids


def mark_task_type(db_file: Path, ids: list[str], task_type: str) -> None:
    """The turns are of ``task_type`` in the ledger, as the learning loop writes it (a verifier of it scores them)."""
    db = Database(db_file)
    store = TrajectoryStore(db_file)
    store.open()
    with db.transaction() as c:
        for i, turn_id in enumerate(ids):
            turn = store.get_turn(turn_id)
            assert turn is not None
            ledger.insert_turn(c, turn, i + 1, time.time(), task_type=task_type)
    store.close()


def a_and_b(n: int) -> list[tuple[list[dict[str, Any]], str, float]]:
    """n batches of four: answer A rewarded (+1), answer B punished (-1), same prompt."""
    return [(PROMPT, ANSWER_A if i % 2 == 0 else ANSWER_B, 1.0 if i % 2 == 0 else -1.0) for i in range(4 * n)]


# The inputs each of the service's losses reads (Tinker's loss documentation; the SDK's own
# ``forward_backward_custom`` sends cross_entropy its ``target_tokens`` and ``weights``).
REQUIRED_INPUTS = {
    "cross_entropy": {"target_tokens", "weights"},
    "importance_sampling": {"target_tokens", "logprobs", "advantages"},
    "ppo": {"target_tokens", "logprobs", "advantages"},
    "cispo": {"target_tokens", "logprobs", "advantages"},
}


class _Done:
    def __init__(self, value: Any):
        self.value = value

    def result(self) -> Any:
        return self.value


class _Failed:
    """A future whose request the service rejected (``result()`` raises, as the SDK's futures do)."""

    def __init__(self, error: Exception):
        self.error = error

    def result(self) -> Any:
        raise self.error


def _bind(cls: str, method: str, *args: Any, **kwargs: Any) -> None:
    """The real SDK method's own signature takes these arguments (raises TypeError if it would not); read from the
    SDK's modules, which a test that swaps ``tinker.ServiceClient`` for the fake leaves alone."""
    import importlib
    import inspect

    module = {
        "ServiceClient": "service_client",
        "TrainingClient": "training_client",
        "RestClient": "rest_client",
        "SamplingClient": "sampling_client",
    }
    real = getattr(importlib.import_module(f"tinker.lib.public_interfaces.{module[cls]}"), cls)
    inspect.signature(getattr(real, method)).bind(None, *args, **kwargs)


TEN_YEARS = 10 * 365 * 24 * 3600


class FakeTrainingClient:
    """The methods of ``tinker.TrainingClient`` the backend calls, checking that what it sends is valid SDK data.

    Like the service, it keeps a version of its weights (optimiser steps applied since the run began from a base
    or a full state), rejects an optimiser step with no gradients staged, and can lose the result of a step it
    applied (``lose_optim_result``: a dropped connection after the service stepped)."""

    def __init__(self, service: FakeService, model_id: str, version: int = 0, loaded_from: str | None = None):
        self.service = service
        self.tokenizer = service.tokenizer
        self.calls = service.calls
        self.model_id = model_id
        self.version = version
        self.loaded_from = loaded_from
        self.sent: list[Any] = []
        self.adam: list[Any] = []  # the AdamParams of each step
        self.staged_gradients = 0
        self.reject_forward_backward = 0  # the next n forward_backward requests fail on the service
        self.lose_optim_result = 0  # the next n optimiser steps are applied, and their result is lost
        self.reject_save_state = 0  # the next n save_state requests fail

    def _check(self, data: list[Any], loss_fn: str, config: Any = None) -> None:
        """What the SDK itself would accept and send: the loss named by its ``LossFnType``, the config its
        request type allows, every datum encoded to the wire by its own proto writer, and the inputs the
        service's loss requires (:data:`REQUIRED_INPUTS`)."""
        import pydantic
        from tinker import types
        from tinker.proto.request_conv import forward_backward_request_to_proto

        pydantic.TypeAdapter(types.LossFnType).validate_python(loss_fn)
        pydantic.TypeAdapter(dict[str, float | str] | None).validate_python(config, strict=True)
        assert data, "an empty request"
        request = types.ForwardBackwardRequest(types.ForwardBackwardInput(data, loss_fn, config), "fake-model", 1)
        forward_backward_request_to_proto(request)  # raises on what the wire cannot carry
        for d in data:
            assert isinstance(d, types.Datum) and isinstance(d.model_input, types.ModelInput)
            assert set(d.loss_fn_inputs) == REQUIRED_INPUTS[loss_fn], (loss_fn, d.loss_fn_inputs.keys())
            n = d.model_input.length
            for key, td in d.loss_fn_inputs.items():
                assert isinstance(td, types.TensorData) and td.shape == [n], (key, td.shape, n)
            assert d.loss_fn_inputs["target_tokens"].dtype == "int64"
            assert d.model_input.to_ints()[1:] == d.loss_fn_inputs["target_tokens"].tolist()[:-1]

    def forward(self, data: list[Any], loss_fn: str) -> _Done:
        from tinker import types

        self.calls.append("forward")
        assert loss_fn == "cross_entropy"
        self._check(data, loss_fn)
        assert all(not any(d.loss_fn_inputs["weights"].tolist()) for d in data), "a logprob-only pass has no loss"
        outputs = [
            {
                "logprobs": types.TensorData(
                    data=[-1.0] * d.model_input.length, dtype="float32", shape=[d.model_input.length]
                )
            }
            for d in data
        ]
        return _Done(types.ForwardBackwardOutput(loss_fn_output_type="ArrayRecord", loss_fn_outputs=outputs))

    def forward_backward(self, data: list[Any], loss_fn: str, config: Any = None) -> _Done:
        from tinker import types

        self.calls.append(f"forward_backward:{loss_fn}")
        assert loss_fn in ("importance_sampling", "ppo", "cispo")
        assert (config is None) == (loss_fn == "importance_sampling")
        if config is not None:  # Tinker's clipped losses take ratio bounds around 1
            assert set(config) == {"clip_low_threshold", "clip_high_threshold"}
            assert config["clip_low_threshold"] < 1.0 < config["clip_high_threshold"]
        self._check(data, loss_fn, config)
        if self.reject_forward_backward:
            self.reject_forward_backward -= 1
            return _Failed(RuntimeError("forward_backward failed on the service"))  # nothing staged
        self.sent.extend(data)
        self.staged_gradients += 1
        return _Done(types.ForwardBackwardOutput("ArrayRecord", [], metrics={"loss:sum": -0.25, "clip_frac": 0.1}))

    def optim_step(self, params: Any) -> _Done | _Failed:
        from tinker import types

        _bind("TrainingClient", "optim_step", params)
        assert isinstance(params, types.AdamParams) and self.staged_gradients, "a step without gradients"
        types.AdamParams.model_validate(params.model_dump(), strict=True)
        self.adam.append(params)
        self.calls.append("optim_step")
        self.staged_gradients = 0
        self.version += 1
        if self.lose_optim_result:
            self.lose_optim_result -= 1
            return _Failed(ConnectionError("connection lost while retrieving the optim_step result"))
        return _Done(types.OptimStepResponse(metrics={"lr": params.learning_rate}))

    def save_weights_for_sampler(self, name: str, ttl_seconds: int | None = None) -> _Done:
        from tinker import types

        _bind("TrainingClient", "save_weights_for_sampler", name, ttl_seconds)
        self.calls.append("save_weights_for_sampler")
        path = self.service.keep(f"tinker://{self.model_id}/sampler_weights/{name}", self.version, ttl_seconds)
        return _Done(types.SaveWeightsForSamplerResponse(path=path))

    def save_state(self, name: str, ttl_seconds: int | None = None) -> _Done | _Failed:
        from tinker import types

        _bind("TrainingClient", "save_state", name, ttl_seconds)
        self.calls.append("save_state")
        if self.reject_save_state:
            self.reject_save_state -= 1
            return _Failed(RuntimeError("save_state failed on the service"))
        path = self.service.keep(f"tinker://{self.model_id}/weights/{name}", self.version, ttl_seconds)
        return _Done(types.SaveWeightsResponse(path=path))

    def get_tokenizer(self) -> Any:
        return self.tokenizer

    def save_weights_and_get_sampling_client(self, name: str | None = None) -> _Done:
        _bind("TrainingClient", "save_weights_and_get_sampling_client", name)
        self.calls.append("save_weights_and_get_sampling_client")
        return _Done(FakeGateSampler(self.service, self.version))


class FakeGateSampler:
    """``tinker.SamplingClient`` of a run's weights at ``version`` (optimiser steps since its base): it answers
    ``service.answers[version]`` and gives every token ``service.logprob[version]``, checking the SDK's types."""

    def __init__(self, service: FakeService, version: int):
        self.service = service
        self.version = version

    def sample(self, prompt: Any, num_samples: int, sampling_params: Any) -> _Done:
        import numpy as np
        from tinker import types

        assert isinstance(prompt, types.ModelInput) and isinstance(sampling_params, types.SamplingParams)
        assert num_samples == 1 and sampling_params.seed is not None
        types.SamplingParams.model_validate(sampling_params.model_dump(), strict=True)
        self.service.seeds.append(sampling_params.seed)
        tok = self.service.tokenizer
        ids = tok.encode(self.service.answers[self.version], add_special_tokens=False) + [tok.eos_token_id]
        lp = [self.service.logprob[self.version]] * len(ids)
        seq = types.SampledSequence(
            stop_reason="stop",
            sequence_id="s",
            tokens_np=np.array(ids, dtype=np.int64),
            logprobs_np=np.array(lp, dtype=np.float32),
        )
        return _Done(types.SampleResponse(sequences=[seq]))

    def compute_logprobs(self, prompt: Any) -> _Done:
        from tinker import types

        assert isinstance(prompt, types.ModelInput)
        return _Done([None] + [self.service.logprob[self.version]] * (prompt.length - 1))


class FakeRestClient:
    """``tinker.RestClient``'s TTL call, with the service's checks: a known checkpoint, a TTL in its range."""

    def __init__(self, service: FakeService):
        self.service = service

    def set_checkpoint_ttl_from_tinker_path(self, tinker_path: str, ttl_seconds: int | None) -> _Done | _Failed:
        _bind("RestClient", "set_checkpoint_ttl_from_tinker_path", tinker_path, ttl_seconds)
        self.service.calls.append(f"ttl:{ttl_seconds}")
        if tinker_path not in self.service.checkpoints:
            return _Failed(RuntimeError(f"404: checkpoint {tinker_path} not found"))
        if ttl_seconds is not None and not 3600 <= ttl_seconds <= TEN_YEARS:
            return _Failed(RuntimeError(f"400: ttl_seconds {ttl_seconds} out of range"))
        self.service.checkpoints[tinker_path]["ttl"] = ttl_seconds
        return _Done(None)


BASE_LOGPROB = -2.0  # the fake base model's logprob of every token it scores


class FakeSamplingClient:
    """``tinker.SamplingClient``'s scoring call, for the base model: every token but the first (and those before the
    last ``prompt_logprobs_last_n``) gets :data:`BASE_LOGPROB`; ``fail`` makes it fail as a service error would."""

    def __init__(self, service: FakeService, base_model: str):
        self.service = service
        self.base_model = base_model
        self.fail = False

    def compute_logprobs(self, prompt: Any, prompt_logprobs_last_n: int | None = None) -> _Done | _Failed:
        from tinker import types

        _bind("SamplingClient", "compute_logprobs", prompt, prompt_logprobs_last_n)
        assert isinstance(prompt, types.ModelInput)
        n = prompt.length
        assert prompt_logprobs_last_n is None or 1 <= prompt_logprobs_last_n <= n - 1  # the SDK's documented range
        self.service.calls.append("compute_logprobs")
        if self.fail:
            return _Failed(RuntimeError("503: sampler unavailable"))
        scored = n - 1 if prompt_logprobs_last_n is None else prompt_logprobs_last_n
        return _Done([None] * (n - scored) + [BASE_LOGPROB] * scored)


class FakeService:
    """``tinker.ServiceClient``: hands out fake training clients, each a run of its own, and keeps the checkpoints
    they save (a state of an unknown run, or one that expired, cannot be loaded)."""

    def __init__(self, tokenizer: Any):
        self.tokenizer = tokenizer
        self.calls: list[str] = []
        self.clients: list[FakeTrainingClient] = []
        self.checkpoints: dict[str, dict[str, Any]] = {}  # tinker path -> {"version", "ttl"}
        self.samplers: list[FakeSamplingClient] = []
        self.answers: dict[int, str] = {}  # what the weights of each version answer (the behaviour gate samples)
        self.logprob: dict[int, float] = {}  # and the logprob they give every token
        self.seeds: list[int] = []  # the seed of each sampling request

    def keep(self, path: str, version: int, ttl: int | None) -> str:
        assert path not in self.checkpoints, f"{path} saved twice"  # the service refuses a name it holds
        self.checkpoints[path] = {"version": version, "ttl": ttl}
        return path

    def expire(self, path: str) -> None:
        """The TTL of ``path`` ran out: the service deleted it."""
        assert self.checkpoints[path]["ttl"] is not None, f"{path} has no TTL: it never expires"
        del self.checkpoints[path]

    def _new_client(self, version: int = 0, loaded_from: str | None = None) -> FakeTrainingClient:
        self.clients.append(FakeTrainingClient(self, f"fake-run-{len(self.clients)}", version, loaded_from))
        return self.clients[-1]

    def create_lora_training_client(
        self, base_model: str, rank: int, seed: int | None, *, train_mlp: bool, train_attn: bool, train_unembed: bool
    ) -> _Done:
        # the service's own signature: the flags the SDK takes, nothing it does not
        _bind(
            "ServiceClient",
            "create_lora_training_client",
            base_model,
            rank,
            seed,
            train_mlp=train_mlp,
            train_attn=train_attn,
            train_unembed=train_unembed,
        )
        assert base_model and rank == 32
        self.lora = {"train_mlp": train_mlp, "train_attn": train_attn, "train_unembed": train_unembed}
        self.calls.append("create_lora_training_client")
        return _Done(self._new_client())

    def create_training_client_from_state_with_optimizer(self, path: str) -> _Done | _Failed:
        from tinker import types

        _bind("ServiceClient", "create_training_client_from_state_with_optimizer", path)
        types.ParsedCheckpointTinkerPath.from_tinker_path(path)  # raises on what is not a tinker path
        self.calls.append("create_training_client_from_state_with_optimizer")
        saved = self.checkpoints.get(path)
        if saved is None or "/weights/" not in path:
            return _Failed(RuntimeError(f"404: no training checkpoint {path}"))
        return _Done(self._new_client(saved["version"], loaded_from=path))

    def create_rest_client(self) -> FakeRestClient:
        return FakeRestClient(self)

    def create_sampling_client(self, model_path: str | None = None, base_model: str | None = None) -> _Done:
        _bind("ServiceClient", "create_sampling_client", model_path, base_model)
        assert (model_path is None) != (base_model is None), "a sampling client of a base model or of saved weights"
        self.calls.append("create_sampling_client")
        self.samplers.append(FakeSamplingClient(self, base_model or str(model_path)))
        return _Done(self.samplers[-1])
