"""The ``tinker`` backend: LoRA training on Thinking Machines' Tinker service through its SDK.

Datums are the SDK's own types: ``Datum(model_input=ModelInput.from_ints(tokens[:-1]),
loss_fn_inputs={"target_tokens", "logprobs", "advantages"})``, one row per predicted token. Tokens outside
the loss mask (the prompt, tool results) get advantage 0, so the service's built-in losses
(``importance_sampling``, ``ppo``, ``cispo``, which sum over tokens) give the same value as the local
backend once advantages are divided by the batch's trained-token count.

Two differences from the local backend, both forced by the service:

* Tinker accumulates gradients on the server until ``optim_step`` and has no call to drop them, so an
  abandoned step (a pause, a stale batch) must never have sent its ``forward_backward``. Micro-batches
  are therefore staged here, and ``optim_step`` submits their ``forward_backward`` and the optimiser step
  together; the ``forward_backward`` result is read before the optimiser step is sent, so a rejected one is
  never followed by a step. ``discard`` drops the staged datums.
* Samples without behaviour logprobs, or whose logprobs were sampled at a temperature other than 1 (the
  service computes the loss's logprobs at temperature 1, so those ratios would be off before any update),
  get the current policy's logprobs from a ``forward`` pass (``cross_entropy`` with zero ``weights``, as the
  service requires; no gradient), so their ratio is 1: the on-policy REINFORCE form.
* Adam is the same as the local backend's (:class:`~.Hyper`: betas, epsilon, weight decay, gradient clipping
  sent in ``AdamParams``), and the clipped losses take the same bounds. ``step_metrics`` keeps the service's own
  metrics of the step (the forward_backward's, and the optimiser step's as ``optim:*``).
* The KL anchor (``training.kl_coef``): the service's losses have no reference term, so it is folded into each
  trained token's advantage, ``A_t - kl_coef * (log p_behaviour(t) - log p_base(t))``, with the base model's
  logprobs of the sample's own tokens from a sampling client of the base model (``compute_logprobs``), as
  on-policy distillation folds a teacher's. ``step_metrics``' ``kl`` is the mean of that difference over the
  trained tokens. A base call that fails leaves the batch without the term (fail open, logged, and the step's
  metrics say why: ``kl_error``).
* An optimiser step whose result is lost after it was sent raises :class:`~.StepInDoubt`: the trainer restores
  the last full state (saved with every step) before the batch is retried.
* The LoRA takes what the SDK's ``LoraConfig`` has: rank, seed and the parts (:func:`lora_parts`); alpha,
  dropout and named modules are not in it (``status`` and ``doctor`` say so, :mod:`metaclaw_plugin.config`).
* Checkpoints are saved without a TTL; one a newer one supersedes gets ``training.checkpoint_ttl_hours`` through
  the SDK's REST client (:meth:`TinkerBackend.expire`), so the latest (served, resumed from) never expires.

None of this has run against the real service (unreachable here); the tests drive a fake of the client's
methods that checks the SDK's own types and signatures and rejects what the service would.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, cast

from .. import chat
from ..gate import Draw
from ..samples import TrainSample
from . import Hyper, StepInDoubt

log = logging.getLogger(__name__)

ATTENTION = frozenset({"q_proj", "k_proj", "v_proj", "o_proj", "qkv_proj", "c_attn", "out_proj"})
MLP = frozenset({"gate_proj", "up_proj", "down_proj", "gate_up_proj", "fc1", "fc2", "c_fc", "c_proj"})


def lora_parts(target_modules: Any) -> dict[str, bool]:
    """The service's ``train_attn``/``train_mlp``/``train_unembed`` for the local backend's ``target_modules``:
    ``all-linear`` (PEFT: every linear layer but the output head) is attention and MLP without the unembedding,
    which the service would otherwise train by default; a list of names adapts the parts it names."""
    if isinstance(target_modules, str) and target_modules == "all-linear":
        return {"train_attn": True, "train_mlp": True, "train_unembed": False}
    names = {target_modules} if isinstance(target_modules, str) else {str(n) for n in target_modules}
    return {
        "train_attn": bool(names & ATTENTION),
        "train_mlp": bool(names & MLP),
        "train_unembed": bool(names & {"lm_head", "embed_out", "unembed"}),
    }


def make_datum(sample: TrainSample, behaviour: Sequence[float], norm: float) -> Any:
    """The SDK datum of a sample: input tokens[:-1], and per target token its behaviour logprob and advantage
    (0 outside the loss mask, divided by ``norm``)."""
    import numpy as np
    from tinker import types

    tokens = sample.tokens
    zeros = [0.0] * (len(sample.prompt_ids) - 1)
    advantages = [a * m / norm for a, m in zip(sample.advantages(), sample.mask)]
    return types.Datum(
        model_input=types.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={
            "target_tokens": _targets(tokens),
            "logprobs": types.TensorData.from_numpy(np.asarray(zeros + list(behaviour), dtype=np.float32)),
            "advantages": types.TensorData.from_numpy(np.asarray(zeros + advantages, dtype=np.float32)),
        },
    )


def _targets(tokens: Sequence[int]) -> Any:
    import numpy as np
    from tinker import types

    return types.TensorData.from_numpy(np.asarray(tokens[1:], dtype=np.int64))


def _usable(sample: TrainSample) -> bool:
    """Behaviour logprobs the service's losses can use: known, and sampled at temperature 1."""
    return sample.logprobs is not None and sample.temperature in (0.0, 1.0)


class TinkerBackend:
    name = "tinker"

    def __init__(
        self,
        base_model: str,
        *,
        lora_rank: int | None = None,
        learning_rate: float | None = None,
        seed: int | None = None,
        service: Any = None,
        hyper: Hyper | None = None,
    ):
        import tinker

        h = hyper or Hyper()
        overrides: dict[str, Any] = {"lora_rank": lora_rank, "learning_rate": learning_rate, "seed": seed}
        self.hyper = h = replace(h, **{k: v for k, v in overrides.items() if v is not None})
        self.base_model = base_model
        self.learning_rate = h.learning_rate
        self.service = service if service is not None else tinker.ServiceClient()
        self._client: Any = None  # made on first use: a resume loads its state instead of opening an unused run
        self._staged: list[Any] = []
        self._loss_fn = "importance_sampling"
        self._service_metrics: dict[str, float] = {}
        self._rest: Any = None
        self._run: dict[str, Any] | None = None
        self._base: Any = None  # the base model's sampling client (the KL anchor's reference), made on first use
        self._kl = [0.0, 0.0]  # this step's log p_behaviour - log p_base: sum over trained tokens, and their count
        self._kl_error: str | None = None  # why this step's batch went without the anchor (its base logprobs failed)
        self._step_kl: dict[str, Any] = {"kl": None}  # the last step's mean log p_behaviour - log p_base, or why none
        self._state: str | None = None  # the full state of the current weights (None: a new run's)

    @property
    def client(self) -> Any:
        """The training run: a new LoRA run on first use, unless :meth:`load_state` resumed one first."""
        if self._client is None:
            h = self.hyper
            parts = lora_parts(h.target_modules)
            self._client = self.service.create_lora_training_client(
                base_model=self.base_model,
                rank=h.lora_rank,
                seed=h.seed,
                train_mlp=parts["train_mlp"],
                train_attn=parts["train_attn"],
                train_unembed=parts["train_unembed"],
            ).result()
            self._run = {"id": str(self._client.model_id), "continues": None, "state": None}
            log.info("new Tinker training run %s (no full state to continue)", self._client.model_id)
        return self._client

    def tokenizer(self) -> Any:
        """The run's tokenizer, fetched on first use: by then a resume has loaded its state, so building a trainer
        opens no run of its own."""
        return _Deferred(lambda: self.client.get_tokenizer())

    def adam(self) -> Any:
        """The step's ``AdamParams``: the local backend's optimiser, term for term."""
        from tinker import types

        h = self.hyper
        return types.AdamParams(
            learning_rate=h.learning_rate,
            beta1=h.adam_beta1,
            beta2=h.adam_beta2,
            eps=h.adam_eps,
            weight_decay=h.weight_decay,
            grad_clip_norm=h.max_grad_norm,
        )

    def _current_logprobs(self, samples: Sequence[TrainSample]) -> list[list[float]]:
        import numpy as np
        from tinker import types

        data = [
            types.Datum(
                model_input=types.ModelInput.from_ints(s.tokens[:-1]),
                loss_fn_inputs={
                    "target_tokens": _targets(s.tokens),
                    # the service's cross_entropy requires weights; zeros: no loss, only the logprobs
                    "weights": types.TensorData.from_numpy(np.zeros(len(s.tokens) - 1, dtype=np.float32)),
                },
            )
            for s in samples
        ]
        out = self.client.forward(data, "cross_entropy").result()
        return [
            [float(x) for x in o["logprobs"].tolist()][len(s.prompt_ids) - 1 :]
            for o, s in zip(out.loss_fn_outputs, samples)
        ]

    def forward_backward(self, samples: Sequence[TrainSample], loss_fn: str, norm: float) -> float:
        missing = [s for s in samples if not _usable(s)]
        current = iter(self._current_logprobs(missing) if missing else [])
        behaviours = [s.logprobs if _usable(s) and s.logprobs is not None else next(current) for s in samples]
        base = self._base_logprobs(samples) if self.hyper.kl_coef > 0 else None
        for i, (s, behaviour) in enumerate(zip(samples, behaviours)):
            if base is not None:
                s = self._anchored(s, behaviour, base[i])
            self._staged.append(make_datum(s, behaviour, max(norm, 1.0)))
        self._loss_fn = loss_fn
        return 0.0  # the service reports the loss with the step (optim_step)

    def _base_logprobs(self, samples: Sequence[TrainSample]) -> list[list[float | None]] | None:
        """The base model's logprob of each answer token of each sample (None: the batch goes without the anchor)."""
        from tinker import types

        try:
            if self._base is None:
                self._base = self.service.create_sampling_client(base_model=self.base_model).result()
            futures = [
                self._base.compute_logprobs(
                    types.ModelInput.from_ints(s.tokens), prompt_logprobs_last_n=len(s.tokens) - len(s.prompt_ids)
                )
                for s in samples
            ]
            return [list(f.result())[len(s.prompt_ids) :] for f, s in zip(futures, samples)]
        except Exception as e:
            self._kl_error = f"{type(e).__name__}: {e}"
            log.warning("the base model's logprobs failed; this batch trains without the KL anchor", exc_info=True)
            return None

    def _anchored(self, s: TrainSample, behaviour: Sequence[float], base: Sequence[float | None]) -> TrainSample:
        """``s`` with the KL anchor folded into its token advantages (a token the base did not score keeps its own)."""
        coef = self.hyper.kl_coef
        out = []
        for a, m, b, r in zip(s.advantages(), s.mask, behaviour, base):
            if m and r is not None:
                self._kl[0] += b - r
                self._kl[1] += 1
                a -= coef * (b - r)
            out.append(a)
        return replace(s, token_advantages=out)

    def discard(self) -> None:
        self._staged = []
        self._kl, self._kl_error = [0.0, 0.0], None

    def optim_step(self) -> float | None:
        from tinker import types

        data, self._staged = self._staged, []
        kl_sum, kl_n = self._kl
        self._step_kl = {"kl": kl_sum / kl_n if kl_n else None} | (
            {"kl_error": self._kl_error} if self._kl_error else {}
        )
        self._kl, self._kl_error = [0.0, 0.0], None
        clipped = self._loss_fn != "importance_sampling"
        bounds = {"clip_low_threshold": self.hyper.clip_low, "clip_high_threshold": self.hyper.clip_high}
        fb = self.client.forward_backward(data, cast(types.LossFnType, self._loss_fn), bounds if clipped else None)
        # Read before the optimiser step is sent: a rejected forward_backward raises here, with nothing applied;
        # queued behind it, the step would have applied the earlier gradients, or this batch twice once retried.
        result = fb.result()
        self._service_metrics = {str(k): float(v) for k, v in (result.metrics or {}).items()}
        try:
            step = self.client.optim_step(self.adam()).result()
        except Exception as e:  # sent, outcome unknown: the trainer reloads the last full state before a retry
            raise StepInDoubt(f"the optimiser step's outcome was lost: {type(e).__name__}: {e}") from e
        self._service_metrics.update({f"optim:{k}": float(v) for k, v in (step.metrics or {}).items()})
        return float(result.metrics.get("loss:sum", 0.0))

    def step_metrics(self) -> dict[str, Any]:
        # the service reports no gradient norm; its own metrics of the step are kept as sent
        return {"grad_norm": None, **self._step_kl, "service": dict(self._service_metrics)}

    def save_sampler(self, step: int) -> str:
        return str(self.client.save_weights_for_sampler(f"metaclaw-step-{step:06d}").result().path)

    def save_state(self, step: int) -> str:
        self._state = str(self.client.save_state(f"metaclaw-state-{step:06d}").result().path)
        return self._state

    def load_state(self, path: str) -> None:
        """Go on from a full state. The SDK binds a training run to the session that made it (its id is the
        session's) and loads a state only into a new run, so a restart (or a restore, a rollback) continues the
        saved run's weights and optimiser in a run of its own, made here instead of a fresh LoRA run;
        :meth:`run_info` names the run it continues."""
        from tinker import types

        self._client = self.service.create_training_client_from_state_with_optimizer(path).result()
        self._state = path
        continues = types.ParsedCheckpointTinkerPath.from_tinker_path(path).training_run_id
        self._run = {"id": str(self._client.model_id), "continues": continues, "state": path}
        log.info("Tinker training run %s continues run %s from %s", self._client.model_id, continues, path)

    # The behaviour gate -----------------------------------------------------------------------------
    def snapshot(self) -> str | None:
        """Where :meth:`restore` goes back to: the full state of the current weights (every published step saved
        one), or None before the run's first step."""
        return self._state

    def restore(self, snap: str | None) -> None:
        """Undo the steps since :meth:`snapshot`: its full state loaded (weights and optimiser), or, before any
        state, a new LoRA run on first use (the base weights and a fresh optimiser, as before the first step)."""
        if snap is None:
            self._client, self._run = None, None
        else:
            self.load_state(snap)

    def gate_policy(self) -> _GatePolicy:
        """The current weights, frozen in a sampling client (the service's snapshot of them)."""
        sampler = self.client.save_weights_and_get_sampling_client().result()
        return _GatePolicy(sampler, chat.stop_ids(self.client.get_tokenizer()))

    def keep(self, paths: Sequence[str]) -> None:
        """Clear the TTL of checkpoints (a rollback's target); raises when one is gone."""
        clear_ttl(self.rest(), paths)

    def run_info(self) -> dict[str, Any] | None:
        """The training run stepped (``id``), the run whose full state it continues and that state (None: a new
        LoRA run); None before the run is opened."""
        return self._run

    def expire(self, path: str) -> None:
        """Set the TTL (``training.checkpoint_ttl_hours``) of a sampler checkpoint or full state a newer one
        superseded, through the SDK's REST client: old weights expire, the latest never does."""
        self.rest().set_checkpoint_ttl_from_tinker_path(path, int(self.hyper.checkpoint_ttl_hours * 3600)).result()

    def rest(self) -> Any:
        if self._rest is None:
            self._rest = self.service.create_rest_client()
        return self._rest


def keep_checkpoints(paths: Sequence[str]) -> None:
    """Clear the TTL of checkpoints on the service (a rollback's target, served and trained on again); raises
    when one is gone."""
    import tinker

    clear_ttl(tinker.ServiceClient().create_rest_client(), paths)


def clear_ttl(rest: Any, paths: Sequence[str]) -> None:
    for path in paths:
        rest.set_checkpoint_ttl_from_tinker_path(path, None).result()


class _GatePolicy:
    """A sampling client of the trained weights, answering and scoring for the behaviour gate."""

    def __init__(self, sampler: Any, stop: frozenset[int]):
        self.sampler = sampler
        self.stop = stop

    def generate(self, prompts: list[list[int]], draw: Draw, go_on: Callable[[], bool]) -> list[list[int]]:
        """One request per prompt, each sent only while ``go_on()`` (a pause leaves the rest unasked), the i-th from
        the draw's seed plus i: a prompt repeated (a group's answers) draws different answers, and the same draw the
        same ones."""
        from tinker import types

        out = []
        for i, prompt in enumerate(prompts):
            if not go_on():
                break
            params = types.SamplingParams(
                max_tokens=draw.max_new_tokens,
                temperature=draw.temperature,
                seed=(draw.seed + i) % 2**31,
                stop=sorted(self.stop),
            )
            resp = self.sampler.sample(prompt=types.ModelInput.from_ints(prompt), num_samples=1, sampling_params=params)
            out.append([int(t) for t in resp.result().sequences[0].tokens])
        return out

    def logprobs(self, prompt: list[int], completion: list[int]) -> list[float]:
        from tinker import types

        got = self.sampler.compute_logprobs(types.ModelInput.from_ints(prompt + completion)).result()
        return [float(x) for x in got[len(prompt) :]]


class _Deferred:
    """An object made on first use (a tokenizer that needs the training run), standing in for it."""

    def __init__(self, make: Any) -> None:
        self._make = make
        self._obj: Any = None

    def _get(self) -> Any:
        if self._obj is None:
            self._obj = self._make()
        return self._obj

    def __getattr__(self, name: str) -> Any:
        return getattr(self._get(), name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._get()(*args, **kwargs)
