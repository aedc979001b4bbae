"""``train rollback``: serve (and train on from) earlier published weights, the weights' twin of
``skills rollback``.

The earlier step's LoRA weights become the latest published weights (``policy.weights``): every served policy swaps
to them through its watcher, requests in flight finishing on the weights they started with. The trainer follows: a
full state newer than the target is forgotten, and a running trainer loads the target's weights before its next
step (:meth:`~.trainer.Trainer.follow_rollback`), so the next step builds on them. The abandoned steps' rows leave
``train_steps`` and are kept, summarised, in the ``training.rollbacks`` record.

On ``local`` the targets are the LoRA weights folders the trainer keeps (``training.keep_adapters``). On ``tinker``
every step saved its sampler weights and a full state on the service, so the targets are the steps whose two
checkpoints the service still holds (superseded ones expire after ``training.checkpoint_ttl_hours``): the target's
full state becomes the one the trainer resumes from, and its two checkpoints are kept from expiring (``keep``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..store import AnyDatabase, runtime_state, steps
from .trainer import CHECKPOINT_KEY
from .weights import WeightsRef, latest, store_latest

ROLLBACKS_KEY = "training.rollbacks"


class RollbackError(ValueError):
    """A rollback that cannot be done as asked; the message says why and what can be."""


def available(db: AnyDatabase, backend: str = "local") -> list[int]:
    """The earlier steps a rollback can reach, newest first: on local those whose LoRA weights folder is still on
    disk, on tinker those that saved a full state with their sampler weights."""
    if backend == "tinker":
        return [s for s, (w, c) in steps.checkpoints(db).items() if w and c]
    return [step for step, path in steps.weights(db).items() if path and (Path(path) / "adapter_config.json").is_file()]


def rollback(
    db: AnyDatabase, to: int | None = None, keep: Callable[[Sequence[str]], None] | None = None
) -> dict[str, Any]:
    """Publish step ``to``'s weights (default: the step before the latest) as the latest weights. ``keep`` (tinker)
    clears the TTL of the target's checkpoints on the service, and raises when they are gone."""
    current = latest(db)
    if current is None:
        raise RollbackError("no weights were published yet: nothing to roll back")
    earlier = [s for s in available(db, current.backend) if s < current.step]
    target = to if to is not None else (earlier[0] if earlier else None)
    if target is None or target not in earlier:
        have = ", ".join(map(str, earlier)) or "none"
        want = f"step {target}" if target is not None else "an earlier step"
        where = (
            "sampler weights and a full state on the service" if current.backend == "tinker" else "LoRA weights on disk"
        )
        raise RollbackError(
            f"cannot roll back from step {current.step} to {want}: {where} for steps {have} "
            "(older ones were pruned: training.keep_adapters, or saved without a full state)"
        )
    path, state = steps.checkpoints(db)[target]
    ref = WeightsRef(step=target, backend=current.backend, base_model=current.base_model, path=str(path))
    if current.backend == "tinker":
        if keep is None:
            raise RollbackError("a tinker rollback needs the service, to keep the target's checkpoints")
        try:
            keep([ref.path, str(state)])
        except Exception as e:
            raise RollbackError(f"cannot keep step {target}'s checkpoints on the service (expired?): {e}") from e
    abandoned = steps.after(db, target)
    with db.transaction() as c:
        saved = runtime_state.get(c, CHECKPOINT_KEY)
        if current.backend == "tinker":  # the trainer resumes from the target's full state (it loads no weights)
            value = {"step": target, "path": state, "backend": current.backend, "base_model": current.base_model}
            runtime_state.put(c, CHECKPOINT_KEY, value)
        elif saved is not None and saved.value["step"] > target:
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
