"""The scheduler's transitions (``sched_transitions``): every move of its state machine, for ``status`` and the
dashboard."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .backend import AnyDatabase, Query
from .sqlite import read_file

_RECENT = "SELECT at, from_state, to_state, reason FROM sched_transitions ORDER BY id DESC LIMIT ?"


def add(db: AnyDatabase, at: float, from_state: str, to_state: str, reason: str) -> None:
    db.execute(
        "INSERT INTO sched_transitions(at, from_state, to_state, reason) VALUES (?, ?, ?, ?)",
        (at, from_state, to_state, reason),
    )


def recent(db: AnyDatabase | Path, limit: int = 20) -> list[dict[str, Any]]:
    """The latest transitions, newest first. ``db`` may be a database file's path (read read-only, never created:
    none when there is no file or no table yet)."""
    rows = read_file(db, _RECENT, (limit,)) if isinstance(db, Path) else db.query(_RECENT, (limit,))
    return [dict(r) for r in rows]


def every(query: Query) -> list[dict[str, Any]]:
    """Every move of the scheduler's state machine, oldest first."""
    return [dict(r) for r in query("SELECT * FROM sched_transitions ORDER BY at, id")]
