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
from typing import Protocol

from ..samples import TrainSample


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

    def save_sampler(self, step: int) -> str: ...

    def save_state(self, step: int) -> str: ...

    def load_state(self, path: str) -> None: ...
