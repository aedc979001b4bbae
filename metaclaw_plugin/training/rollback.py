"""``train rollback``: serve (and train on from) earlier published LoRA weights, the weights' twin of
``skills rollback``.

The earlier step's LoRA weights become the latest published weights (``policy.weights``): every served policy swaps
to them through its watcher, requests in flight finishing on the weights they started with. The trainer follows: a
full state newer than the target is forgotten, and a running trainer loads the target's weights before its next
step (:meth:`~.trainer.Trainer.follow_rollback`), so the next step builds on them. The abandoned steps' rows leave
``train_steps`` and are kept, summarised, in the ``training.rollbacks`` record.

Only the ``local`` backend can roll back: its LoRA weights are folders the trainer keeps (``training.keep_adapters``).
"""

from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..store import AnyDatabase, runtime_state, steps
from .trainer import CHECKPOINT_KEY
from .weights import WeightsRef, latest, store_latest

ROLLBACKS_KEY = "training.rollbacks"


class RollbackError(ValueError):
    """A rollback that cannot be done as asked; the message says why and what can be."""


def check_backend(backend: str) -> None:
    """Refuse before touching anything on a home whose settings train elsewhere than locally."""
    if backend != "local":
        raise RollbackError(
            f"train rollback needs the local backend; this home trains on {backend} (training.backend), whose "
            "sampler weights the service keeps: there are no LoRA weights folders here to go back to"
        )


def available(db: AnyDatabase) -> list[int]:
    """The earlier steps whose LoRA weights folders are still on disk, newest first."""
    return [step for step, path in steps.weights(db).items() if path and (Path(path) / "adapter_config.json").is_file()]


def rollback(db: AnyDatabase, to: int | None = None) -> dict[str, Any]:
    """Publish step ``to``'s LoRA weights (default: the step before the latest) as the latest weights."""
    current = latest(db)
    if current is None:
        raise RollbackError("no weights were published yet: nothing to roll back")
    if current.backend != "local":
        raise RollbackError("train rollback needs the local backend (Tinker's sampler weights cannot be trained on)")
    earlier = [s for s in available(db) if s < current.step]
    target = to if to is not None else (earlier[0] if earlier else None)
    if target is None or target not in earlier:
        have = ", ".join(map(str, earlier)) or "none"
        want = f"step {target}" if target is not None else "an earlier step"
        raise RollbackError(
            f"cannot roll back from step {current.step} to {want}: LoRA weights on disk for steps {have} "
            "(older ones were pruned: training.keep_adapters)"
        )
    path = steps.weights(db)[target]
    ref = WeightsRef(step=target, backend=current.backend, base_model=current.base_model, path=str(path))
    abandoned = steps.after(db, target)
    with db.transaction() as c:
        saved = runtime_state.get(c, CHECKPOINT_KEY)
        if saved is not None and saved.value["step"] > target:
            runtime_state.delete(c, CHECKPOINT_KEY)  # resume from the target
        steps.delete_after(c, target)
        row = runtime_state.get(c, ROLLBACKS_KEY)
        history = row.value if row else []
        event = {"from": current.step, "to": target, "at": time.time(), "abandoned": abandoned}
        runtime_state.put(c, ROLLBACKS_KEY, [*history, event][-50:])
    store_latest(db, ref)
    return {
        "from": current.step,
        "to": target,
        "weights": asdict(ref),
        "abandoned_steps": [a["step"] for a in abandoned],
    }
