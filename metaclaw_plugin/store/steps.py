"""The trainer's steps (``train_steps``): one row of metrics per optimiser step, with the weights it published and
its full checkpoint. A rollback deletes the steps after the one it goes back to."""

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


def weights(db: AnyDatabase) -> dict[int, str | None]:
    """Each step's published weights (a LoRA weights folder or a sampler path), newest step first."""
    return {int(r["step"]): r["weights"] for r in db.query("SELECT step, weights FROM train_steps ORDER BY step DESC")}


def checkpoints(db: AnyDatabase) -> dict[int, tuple[str | None, str | None]]:
    """Each step's (published weights, full state), newest step first."""
    rows = db.query("SELECT step, weights, checkpoint FROM train_steps ORDER BY step DESC")
    return {int(r["step"]): (r["weights"], r["checkpoint"]) for r in rows}


def after(db: AnyDatabase, step: int) -> list[dict[str, Any]]:
    """A summary (step, loss, mean reward) of each step after ``step``, oldest first."""
    rows = db.query("SELECT step, loss, mean_reward FROM train_steps WHERE step > ? ORDER BY step", [step])
    return [dict(r) for r in rows]


def delete_after(c: Any, step: int) -> None:
    c.execute("DELETE FROM train_steps WHERE step > ?", (step,))


def every(query: Query) -> list[dict[str, Any]]:
    """Every training step's row, in step order."""
    return [dict(r) for r in query("SELECT * FROM train_steps ORDER BY step")]


def since(query: Query, since: float) -> list[Any]:
    """(step, created_at) of the training steps taken since ``since``."""
    return query("SELECT step, created_at FROM train_steps WHERE created_at >= ?", (since,))
