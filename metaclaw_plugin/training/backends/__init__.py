"""Training backends behind one interface (:class:`Backend`): ``local`` (torch + PEFT) and ``tinker`` (the cloud SDK).

The trainer drives both the same way, one step at a time:

1. ``forward_backward(micro_batch, loss, norm)`` once per micro-batch: gradients accumulate;
2. ``discard()`` if the step is abandoned (a pause, or a batch that went stale): nothing is applied;
3. ``optim_step()`` to apply the accumulated gradients (Adam);
4. ``save_sampler(step)`` to write weights a served policy can sample from, ``save_state(step)`` for a full
   checkpoint (weights and optimiser) and ``load_state(path)`` to resume from one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..samples import TrainSample


class StepInDoubt(RuntimeError):
    """The optimiser step was sent but its outcome was lost (the service may or may not have applied it): the
    trainer restores the last full state before its batch is retried, so the batch is never applied twice."""


@dataclass(frozen=True)
class Hyper:
    """What bounds an update and shapes the LoRA weights, the same on both backends (``training.*`` settings).

    One ``learning_rate`` means one Adam: betas, epsilon and weight decay are passed to both (torch's AdamW
    locally, Tinker's ``AdamParams`` remotely) instead of each library's own defaults (beta2 0.999 and 0.95)."""

    learning_rate: float = 1e-4
    adam_beta1: float = 0.9
    adam_beta2: float = 0.95
    adam_eps: float = 1e-8
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0  # 0: no clipping
    clip_low: float = 0.8
    clip_high: float = 1.2
    kl_coef: float = 0.01  # the KL anchor to the base model (a loss term locally, in the advantages on Tinker)
    lora_rank: int = 32
    lora_alpha: int | None = None  # None: lora_rank
    lora_dropout: float = 0.0
    target_modules: Any = "all-linear"
    dtype: str = "auto"
    gradient_checkpointing: bool = False
    seed: int = 0
    keep_adapters: int = 5  # local: published LoRA weights folders kept (train rollback's reach; the setting's name)
    checkpoint_ttl_hours: float = 168.0  # tinker: how long a superseded sampler checkpoint or full state is kept

    @classmethod
    def from_settings(cls, t: Any) -> Hyper:
        return cls(**{f: getattr(t, f) for f in cls.__dataclass_fields__})


class Backend(Protocol):
    name: str
    base_model: str

    def forward_backward(self, samples: Sequence[TrainSample], loss_fn: str, norm: float) -> float:
        """Accumulate the gradient of the micro-batch's loss (divided by ``norm``); returns that loss."""
        ...

    def discard(self) -> None: ...

    def optim_step(self) -> float | None:
        """Apply the accumulated gradients; returns the step's loss when only the step knows it (tinker)."""
        ...

    def step_metrics(self) -> dict[str, Any]:
        """What the last step measured beyond its loss (gradient norm, KL to the base): for ``train_steps``."""
        ...

    def save_sampler(self, step: int) -> str: ...

    def save_state(self, step: int) -> str: ...

    def load_state(self, path: str) -> None: ...
