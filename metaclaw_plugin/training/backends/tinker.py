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
  together (pipelined, as the SDK recommends). ``discard`` drops the staged datums.
* Samples without behaviour logprobs get the current policy's logprobs from a ``forward`` pass
  (``cross_entropy``, no gradient), so their ratio is 1: the on-policy REINFORCE form, as locally.

None of this has run against the real service (unreachable here); the tests drive a fake of the
client's methods.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from ..losses import CLIP_HIGH, CLIP_LOW
from ..samples import TrainSample


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


class TinkerBackend:
    name = "tinker"

    def __init__(
        self,
        base_model: str,
        *,
        lora_rank: int = 32,
        learning_rate: float = 1e-4,
        seed: int | None = 0,
        service: Any = None,
    ):
        import tinker

        self.base_model = base_model
        self.learning_rate = learning_rate
        self.service = service if service is not None else tinker.ServiceClient()
        self.client = self.service.create_lora_training_client(
            base_model=base_model, rank=lora_rank, seed=seed
        ).result()
        self._staged: list[Any] = []
        self._loss_fn = "importance_sampling"

    def _current_logprobs(self, samples: Sequence[TrainSample]) -> list[list[float]]:
        from tinker import types

        data = [
            types.Datum(
                model_input=types.ModelInput.from_ints(s.tokens[:-1]),
                loss_fn_inputs={"target_tokens": _targets(s.tokens)},
            )
            for s in samples
        ]
        out = self.client.forward(data, "cross_entropy").result()
        return [
            [float(x) for x in o["logprobs"].tolist()][len(s.prompt_ids) - 1 :]
            for o, s in zip(out.loss_fn_outputs, samples)
        ]

    def forward_backward(self, samples: Sequence[TrainSample], loss_fn: str, norm: float) -> float:
        missing = [s for s in samples if s.logprobs is None]
        current = iter(self._current_logprobs(missing) if missing else [])
        for s in samples:
            behaviour = s.logprobs if s.logprobs is not None else next(current)
            self._staged.append(make_datum(s, behaviour, max(norm, 1.0)))
        self._loss_fn = loss_fn
        return 0.0  # the service reports the loss with the step (optim_step)

    def discard(self) -> None:
        self._staged = []

    def optim_step(self) -> float | None:
        from tinker import types

        data, self._staged = self._staged, []
        clipped = self._loss_fn != "importance_sampling"
        config = {"clip_low_threshold": CLIP_LOW, "clip_high_threshold": CLIP_HIGH} if clipped else None
        fb = self.client.forward_backward(data, cast(types.LossFnType, self._loss_fn), config)
        step = self.client.optim_step(types.AdamParams(learning_rate=self.learning_rate))
        result = fb.result()
        step.result()
        return float(result.metrics.get("loss:sum", 0.0))

    def save_sampler(self, step: int) -> str:
        return str(self.client.save_weights_for_sampler(f"metaclaw-step-{step:06d}").result().path)

    def save_state(self, step: int) -> str:
        return str(self.client.save_state(f"metaclaw-state-{step:06d}").result().path)

    def load_state(self, path: str) -> None:
        self.client = self.service.create_training_client_from_state_with_optimizer(path).result()
