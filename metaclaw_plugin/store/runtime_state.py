"""Run-time state that outlives a process (``runtime_state``): one JSON value per key, read by every process on the
home. The keys are their owners' (the mode set at run time, the latest published weights, the trainer's checkpoint
and skip counts, the scheduler's snapshot); the values are stored here as JSON and read back decoded."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .backend import Query
from .sqlite import read_file

_GET = "SELECT value, updated_at FROM runtime_state WHERE key = ?"


@dataclass(frozen=True)
class Entry:
    value: Any  # decoded from JSON
    updated_at: float


def put(c: Any, key: str, value: Any, at: float | None = None) -> None:
    """Store ``value`` under ``key`` (dated ``at``, default now), on a database or inside a transaction ``c``."""
    c.execute(
        "INSERT INTO runtime_state(key, value, updated_at) VALUES (?, ?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        (key, json.dumps(value), time.time() if at is None else at),
    )


def get(c: Any, key: str) -> Entry | None:
    """The entry under ``key``, or None. ``c``: a database, a transaction, or a database file's path (read
    read-only, never created: None when there is no file or no table yet)."""
    if isinstance(c, Path):
        rows = read_file(c, _GET, (key,))
    elif hasattr(c, "query"):  # a database: its query reads under its lock
        rows = c.query(_GET, (key,))
    else:
        rows = c.execute(_GET, (key,)).fetchall()
    return Entry(json.loads(rows[0]["value"]), float(rows[0]["updated_at"])) if rows else None


def delete(c: Any, key: str) -> None:
    c.execute("DELETE FROM runtime_state WHERE key = ?", (key,))


def values(query: Query, keys: Sequence[str]) -> dict[str, Any]:
    """The values of those of ``keys`` that are set, through a report's ``query`` (:func:`.backend.reading`)."""
    marks = ", ".join("?" * len(keys))
    rows = query(f"SELECT key, value FROM runtime_state WHERE key IN ({marks})", list(keys))
    return {str(r[0]): json.loads(r[1]) for r in rows}
