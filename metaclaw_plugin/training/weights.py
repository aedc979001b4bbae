"""The trainer's published weights, and where a served policy in any process finds the latest.

A :class:`WeightsRef` names sampler weights: for the ``local`` backend a folder of LoRA weights written with
PEFT's ``save_pretrained``; for ``tinker`` the service's sampler path. Its ``tenant`` is whose they are
(``training.scope: tenant``: trained on that tenant's samples only, served to that tenant only), or None for
weights of every tenant (``scope: global``). The trainer hands each new one to its ``publish`` callback (an
in-process served policy swaps at once) and stores it in two run-time keys: ``policy.weights``, the newest
published of any tenant, and ``policy.weights.tenants``, the latest of each tenant. A served policy in another
process (``metaclaw-plugin serve``, a proxy worker) reads them on its next check.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import asdict, dataclass

from ..store import AnyDatabase, runtime_state

KEY = "policy.weights"
TENANTS_KEY = "policy.weights.tenants"


@dataclass(frozen=True)
class WeightsRef:
    step: int
    backend: str  # "local" | "tinker"
    base_model: str
    path: str  # LoRA weights folder (local) or sampler path (tinker)
    tenant: str | None = None  # whose weights (scope tenant); None: every tenant's (scope global)


def tenant_dir(tenant: str) -> str:
    """A folder (and vLLM LoRA) name for a tenant's weights: readable, and unique by a hash of the whole name
    (tenant ids such as ``team:x`` or ``key:...`` hold characters a path or a name should not)."""
    readable = re.sub(r"[^A-Za-z0-9._-]", "_", tenant)[:40]
    return f"{readable}-{hashlib.sha256(tenant.encode()).hexdigest()[:8]}"


def store_latest(db: AnyDatabase, ref: WeightsRef) -> None:
    """``ref`` is the newest published; a tenant's is also that tenant's latest (one transaction)."""
    with db.transaction() as c:
        runtime_state.put(c, KEY, asdict(ref))
        if ref.tenant is not None:
            got = runtime_state.get(c, TENANTS_KEY)
            by_tenant = dict(got.value) if got else {}
            by_tenant[ref.tenant] = asdict(ref)
            runtime_state.put(c, TENANTS_KEY, by_tenant)


def latest(db: AnyDatabase, tenant: str | None = None) -> WeightsRef | None:
    """The newest published weights of any tenant, or ``tenant``'s latest when given."""
    if tenant is not None:
        return by_tenant(db).get(tenant)
    got = runtime_state.get(db, KEY)
    return WeightsRef(**got.value) if got else None


def by_tenant(db: AnyDatabase) -> dict[str, WeightsRef]:
    """Each tenant's latest published weights (``scope: tenant``)."""
    got = runtime_state.get(db, TENANTS_KEY)
    return {t: WeightsRef(**v) for t, v in (got.value if got else {}).items()}
