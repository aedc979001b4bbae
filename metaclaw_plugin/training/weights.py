"""The trainer's published weights, and where a served policy in any process finds the latest.

A :class:`WeightsRef` names sampler weights: for the ``local`` backend a folder of LoRA weights written with
PEFT's ``save_pretrained``; for ``tinker`` the service's sampler path. The trainer hands each new one to its
``publish`` callback (an in-process served policy swaps at once) and stores it under the run-time key
``policy.weights``, so a served policy in another process (``metaclaw-plugin serve``, a proxy worker) sees
it on its next check.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..store import AnyDatabase, runtime_state

KEY = "policy.weights"


@dataclass(frozen=True)
class WeightsRef:
    step: int
    backend: str  # "local" | "tinker"
    base_model: str
    path: str  # LoRA weights folder (local) or sampler path (tinker)


def store_latest(db: AnyDatabase, ref: WeightsRef) -> None:
    runtime_state.put(db, KEY, asdict(ref))


def latest(db: AnyDatabase) -> WeightsRef | None:
    got = runtime_state.get(db, KEY)
    return WeightsRef(**got.value) if got else None
