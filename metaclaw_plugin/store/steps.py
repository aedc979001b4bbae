"""The trainer's steps (``train_steps``): one row of metrics per optimiser step, with the weights it published and
its full checkpoint. Step numbers are unique across tenants; a step's ``tenant`` says whose weights it trained
(None: every tenant's, ``training.scope: global``), so a tenant's versions are its steps. A rollback deletes the
steps of that tenant after the one it goes back to."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, fields
from typing import Any

from .backend import AnyDatabase, Query


@dataclass(frozen=True)
class Step:
    step: int
    backend: str
    loss: float
    mean_reward: float
    success_rate: float
    samples_used: int
    samples_dropped: int
    step_seconds: float
    tokens_per_s: float | None
    weights: str
    checkpoint: str | None
    detail: dict[str, Any]
    tenant: str | None = None
    created_at: float = field(default_factory=time.time)


_COLS = [f.name for f in fields(Step)]
_UPSERT = (
    f"INSERT INTO train_steps({', '.join(_COLS)}) VALUES ({', '.join('?' * len(_COLS))}) "
    f"ON CONFLICT(step) DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in _COLS[1:])}"
)


def record(db: AnyDatabase, s: Step) -> None:
    """Store ``s``, replacing a row of the same step number (a step redone after a rollback)."""
    db.execute(_UPSERT, [json.dumps(s.detail) if c == "detail" else getattr(s, c) for c in _COLS])


def last(query: Query, n: int = 1) -> list[dict[str, Any]]:
    """The latest ``n`` steps, newest first, ``detail`` decoded; ``query`` is a database's or a report's."""
    rows = query("SELECT * FROM train_steps ORDER BY step DESC LIMIT ?", [int(n)])
    return [{**dict(r), "detail": json.loads(r["detail"]) if r["detail"] else None} for r in rows]


def _of(tenant: str | None) -> tuple[str, list[Any]]:
    return ("tenant IS NULL", []) if tenant is None else ("tenant = ?", [tenant])


def weights(db: AnyDatabase, tenant: str | None = None) -> dict[int, str | None]:
    """Each step's published weights (a LoRA weights folder or a sampler path) of ``tenant`` (None: the steps of
    every tenant's weights), newest step first."""
    where, args = _of(tenant)
    rows = db.query(f"SELECT step, weights FROM train_steps WHERE {where} ORDER BY step DESC", args)
    return {int(r["step"]): r["weights"] for r in rows}


def checkpoints(db: AnyDatabase, tenant: str | None = None) -> dict[int, tuple[str | None, str | None]]:
    """Each step's (published weights, full state) of ``tenant`` (None: every tenant's weights), newest step
    first."""
    where, args = _of(tenant)
    rows = db.query(f"SELECT step, weights, checkpoint FROM train_steps WHERE {where} ORDER BY step DESC", args)
    return {int(r["step"]): (r["weights"], r["checkpoint"]) for r in rows}


def published(db: AnyDatabase, tenant: str | None = None, n: int = 50) -> dict[int, float]:
    """When each of the latest ``n`` steps of ``tenant`` (None: every tenant's weights) that published weights
    was recorded, newest step first."""
    where, args = _of(tenant)
    rows = db.query(
        f"SELECT step, created_at FROM train_steps WHERE weights IS NOT NULL AND weights <> '' AND {where} ORDER BY step DESC LIMIT ?",
        [*args, int(n)],
    )
    return {int(r["step"]): float(r["created_at"]) for r in rows}


def after(db: AnyDatabase, step: int, tenant: str | None = None) -> list[dict[str, Any]]:
    """A summary (step, loss, mean reward) of each step of ``tenant`` after ``step``, oldest first."""
    where, args = _of(tenant)
    rows = db.query(
        f"SELECT step, loss, mean_reward FROM train_steps WHERE step > ? AND {where} ORDER BY step", [step, *args]
    )
    return [dict(r) for r in rows]


def delete_after(c: Any, step: int, tenant: str | None = None) -> None:
    where, args = _of(tenant)
    c.execute(f"DELETE FROM train_steps WHERE step > ? AND {where}", (step, *args))


def newest(query: Query) -> int:
    """The highest step number recorded (0: none): the next step of any tenant is numbered after it."""
    rows = query("SELECT MAX(step) AS n FROM train_steps", [])
    return int(rows[0][0] or 0) if rows else 0


def by_tenant(query: Query) -> list[dict[str, Any]]:
    """Per tenant (None: every tenant's weights): its latest step, its step count and when it last stepped."""
    rows = query(
        "SELECT tenant, MAX(step) AS step, COUNT(*) AS steps, MAX(created_at) AS at FROM train_steps "
        "GROUP BY tenant ORDER BY tenant",
        [],
    )
    return [{"tenant": r[0], "step": int(r[1]), "steps": int(r[2]), "at": float(r[3])} for r in rows]


def every(query: Query) -> list[dict[str, Any]]:
    """Every training step's row, in step order."""
    return [dict(r) for r in query("SELECT * FROM train_steps ORDER BY step")]


def since(query: Query, since: float) -> list[Any]:
    """(step, created_at) of the training steps taken since ``since``."""
    return query("SELECT step, created_at FROM train_steps WHERE created_at >= ?", (since,))
