"""Each tenant's own LoRA weights on one training backend (``training.scope: tenant``).

One tenant's rule must never move another's answers, so a step trains one tenant's weights on that tenant's samples
only. The backend holds one model; before a tenant's step its weights and optimiser moments are put in
(:meth:`TenantSlots.activate`), and the LoRA weights it writes go to that tenant's own folder. The last few tenants'
weights and moments stay in memory between their steps (:data:`RESIDENT`); another is resumed the way a restarted
trainer resumes: from the LoRA's initial weights, then its latest full state, then its later published weights.

A window trains the tenants with a ready batch in turn (:meth:`TenantSlots.next`: by name, after the last one
trained), so a busy tenant cannot starve a quiet one. Needs a backend that can load and restore weights (local).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Any

from ..store import AnyDatabase, runtime_state
from .weights import WeightsRef, latest, tenant_dir

log = logging.getLogger(__name__)

CHECKPOINTS_KEY = "training.checkpoint.tenants"
RESIDENT = 4  # tenants whose weights and optimiser moments stay in memory between their steps


def checkpoint_of(c: Any, tenant: str) -> dict[str, Any] | None:
    """The tenant's latest full state, ``{"step", "path", "backend", "base_model"}``, from a database or inside a
    transaction ``c``."""
    got = runtime_state.get(c, CHECKPOINTS_KEY)
    return (got.value if got else {}).get(tenant)


def store_checkpoint(c: Any, tenant: str, value: dict[str, Any] | None) -> None:
    """Record (or with None, forget) the tenant's full state, on a database or inside a transaction ``c``."""
    got = runtime_state.get(c, CHECKPOINTS_KEY)
    states = dict(got.value) if got else {}
    if value is None:
        states.pop(tenant, None)
    else:
        states[tenant] = value
    runtime_state.put(c, CHECKPOINTS_KEY, states)


class TenantSlots:
    """Which tenant's weights the backend holds, and the others' kept aside."""

    def __init__(self, backend: Any, db: AnyDatabase):
        for need in ("snapshot", "restore", "load_weights", "load_state"):
            if not hasattr(backend, need):
                raise ValueError(f"training.scope tenant needs a backend that can load weights ({backend.name} cannot)")
        self.backend = backend
        self.db = db
        self.fresh = backend.snapshot()  # the LoRA's initial weights and no moments: where a new tenant starts
        self.active: str | None = None
        self.step = 0  # the version of the active tenant's loaded weights (0: none published)
        self.resume_errors: list[str] = []
        self._kept: OrderedDict[str, tuple[int, Any]] = OrderedDict()
        self._last: str | None = None

    def next(self, ready: list[str]) -> str | None:
        """The tenant whose turn it is among those with a ready batch: the first by name after the last trained."""
        if not ready:
            return None
        later = [t for t in sorted(ready) if self._last is not None and t > self._last]
        return (later or sorted(ready))[0]

    def activate(self, tenant: str) -> None:
        """Put ``tenant``'s weights and moments in the backend (a rollback of its weights is followed)."""
        ref = self._published(tenant)
        published = ref.step if ref is not None else 0
        if self.active == tenant and self.step == published:
            return
        if self.active is not None and self.active != tenant:
            self._kept[self.active] = (self.step, self.backend.snapshot())
            while len(self._kept) > RESIDENT:
                self._kept.popitem(last=False)
        kept = self._kept.pop(tenant, None)
        if kept is not None and kept[0] == published:
            self.backend.restore(kept[1])
            self.step = published
        else:
            self.step = self._resume(tenant, ref)
        self.backend.subdir = tenant_dir(tenant)
        self.active = tenant

    def trained(self, step: int) -> None:
        """The active tenant's weights are now version ``step``."""
        self.step = step
        self._last = self.active

    def _published(self, tenant: str) -> WeightsRef | None:
        ref = latest(self.db, tenant)
        ok = ref is not None and ref.backend == self.backend.name and ref.base_model == self.backend.base_model
        return ref if ok else None

    def _resume(self, tenant: str, ref: WeightsRef | None) -> int:
        """As a restarted trainer: the initial weights, the tenant's latest full state, then its newer published
        weights (moments stay those of the full state). Returns the version loaded."""
        self.backend.restore(self.fresh)
        step = 0
        saved = checkpoint_of(self.db, tenant)
        if (
            saved is not None
            and saved["backend"] == self.backend.name
            and saved["base_model"] == self.backend.base_model
        ):
            try:
                self.backend.load_state(saved["path"])
                step = int(saved["step"])
            except Exception as e:  # deleted or torn by hand: the published weights still load
                self.resume_errors.append(f"cannot resume tenant {tenant!r} from {saved['path']}: {e}")
                log.error("%s; its optimiser state is lost", self.resume_errors[-1])
                self.backend.restore(self.fresh)
        if ref is not None and ref.step > step:
            try:
                self.backend.load_weights(ref.path)
                step = ref.step
            except Exception as e:
                self.resume_errors.append(f"cannot load tenant {tenant!r}'s weights {ref.path}: {e}")
                log.error("%s; training it on from step %d", self.resume_errors[-1], step)
        return step
