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

With ``training.scope: tenant`` (local only: tinker trains one set for every tenant) a rollback is one tenant's
(``--tenant``): that tenant's weights go back, its later steps are abandoned, its full state newer than the target is
forgotten, and every other tenant's weights stay as they are.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..store import AnyDatabase, runtime_state, steps
from .tenants import checkpoint_of, store_checkpoint
from .trainer import CHECKPOINT_KEY
from .weights import WeightsRef, by_tenant, latest, store_latest

ROLLBACKS_KEY = "training.rollbacks"


class RollbackError(ValueError):
    """A rollback that cannot be done as asked; the message says why and what can be."""


def available(db: AnyDatabase, backend: str = "local", tenant: str | None = None) -> list[int]:
    """The earlier steps of ``tenant``'s weights (None: every tenant's) a rollback can reach, newest first: on local
    those whose LoRA weights folder is still on disk, on tinker those that saved a full state with their sampler
    weights."""
    if backend == "tinker":
        return [s for s, (w, c) in steps.checkpoints(db, tenant).items() if w and c]
    return [
        step
        for step, path in steps.weights(db, tenant).items()
        if path and (Path(path) / "adapter_config.json").is_file()
    ]


def whose(db: AnyDatabase, scope: str, tenant: str | None) -> str | None:
    """The tenant a rollback is for: ``tenant``, or under scope tenant the one tenant with weights (None: scope
    global, every tenant's weights; ``scope`` is the one in effect: tinker's is global)."""
    if scope != "tenant":
        if tenant is not None:
            raise RollbackError("--tenant needs training.scope tenant: this home trains one set for every tenant")
        return None
    if tenant is not None:
        return tenant
    have = sorted(by_tenant(db))
    if len(have) == 1:
        return have[0]
    raise RollbackError(
        "training.scope is tenant: name whose weights go back with --tenant"
        + (f" (tenants with weights: {', '.join(have)})" if have else " (no tenant has published weights yet)")
    )


def rollback(
    db: AnyDatabase,
    to: int | None = None,
    keep: Callable[[Sequence[str]], None] | None = None,
    tenant: str | None = None,
) -> dict[str, Any]:
    """Publish step ``to``'s weights (default: the step before the latest) of ``tenant`` (None: every tenant's
    weights) as its latest weights; other tenants' weights are untouched. ``keep`` (tinker) clears the TTL of the
    target's checkpoints on the service, and raises when they are gone."""
    current = latest(db, tenant) if tenant is not None else latest(db)
    if current is None or current.tenant != tenant:
        whom = f"tenant {tenant!r}" if tenant is not None else "every tenant (training.scope global)"
        raise RollbackError(f"no weights were published yet for {whom}: nothing to roll back")
    earlier = [s for s in available(db, current.backend, tenant) if s < current.step]
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
    path, state = steps.checkpoints(db, tenant)[target]
    ref = WeightsRef(step=target, backend=current.backend, base_model=current.base_model, path=str(path), tenant=tenant)
    if current.backend == "tinker":
        if keep is None:
            raise RollbackError("a tinker rollback needs the service, to keep the target's checkpoints")
        try:
            keep([ref.path, str(state)])
        except Exception as e:
            raise RollbackError(f"cannot keep step {target}'s checkpoints on the service (expired?): {e}") from e
    abandoned = steps.after(db, target, tenant)
    with db.transaction() as c:
        if tenant is not None:  # local: the tenant's trainer slot resumes from the target (TenantSlots.activate)
            saved = checkpoint_of(c, tenant)
            if saved is not None and saved["step"] > target:
                store_checkpoint(c, tenant, None)
        elif current.backend == "tinker":  # the trainer resumes from the target's full state (it loads no weights)
            value = {"step": target, "path": state, "backend": current.backend, "base_model": current.base_model}
            runtime_state.put(c, CHECKPOINT_KEY, value)
        else:
            got = runtime_state.get(c, CHECKPOINT_KEY)
            if got is not None and got.value["step"] > target:
                runtime_state.delete(c, CHECKPOINT_KEY)  # resume from the target
        steps.delete_after(c, target, tenant)
        row = runtime_state.get(c, ROLLBACKS_KEY)
        history = row.value if row else []
        event = {"from": current.step, "to": target, "at": time.time(), "abandoned": abandoned, "tenant": tenant}
        runtime_state.put(c, ROLLBACKS_KEY, [*history, event][-50:])
    store_latest(db, ref)
    return {
        "from": current.step,
        "to": target,
        "tenant": tenant,
        "weights": asdict(ref),
        "abandoned_steps": [a["step"] for a in abandoned],
    }
