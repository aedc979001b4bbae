"""The trainer's published weights, and where a served policy in any process finds the latest.

A :class:`WeightsRef` names sampler weights: for the ``local`` backend a PEFT adapter folder written with
``save_pretrained``; for ``tinker`` the service's sampler path. The trainer hands each new one to its
``publish`` callback (an in-process served policy swaps at once) and stores it under the run-time key
``policy.weights``, so a served policy in another process (``metaclaw-plugin serve``, a proxy worker) sees
it on its next check.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass

from ..store import AnyDatabase

KEY = "policy.weights"


@dataclass(frozen=True)
class WeightsRef:
    step: int
    backend: str  # "local" | "tinker"
    base_model: str
    path: str  # adapter folder (local) or sampler path (tinker)


def store_latest(db: AnyDatabase, ref: WeightsRef) -> None:
    db.execute(
        "INSERT INTO runtime_state(key, value, updated_at) VALUES (?, ?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        (KEY, json.dumps(asdict(ref)), time.time()),
    )


def latest(db: AnyDatabase) -> WeightsRef | None:
    rows = db.query("SELECT value FROM runtime_state WHERE key = ?", [KEY])
    return WeightsRef(**json.loads(rows[0]["value"])) if rows else None
