"""The mode in effect: the one set at run time (``metaclaw-plugin mode``, the local API), else the config's.

It is stored under the run-time key ``mode`` in ``runtime_state``, so every process on the home sees a change
on its next scheduler tick (and the process that served the API call at once), without a restart.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from ..store import AnyDatabase, Database, connect
from ..store.postgres import PostgresDatabase

KEY = "mode"
Mode = Literal["skills_only", "rl", "auto"]
MODES: tuple[Mode, ...] = ("skills_only", "rl", "auto")


@dataclass(frozen=True)
class ModeInEffect:
    mode: Mode
    source: str  # "stored" (set at run time) or "config"
    set_at: float | None = None
    configured: Mode = "skills_only"

    def as_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "source": self.source, "set_at": self.set_at, "configured": self.configured}


def store_mode(db: AnyDatabase, mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    db.execute(
        "INSERT INTO runtime_state(key, value, updated_at) VALUES (?, ?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        (KEY, json.dumps(mode), time.time()),
    )


def _stored(rows: list[Any]) -> tuple[Mode, float] | None:
    if not rows:
        return None
    mode = json.loads(rows[0]["value"])
    return (cast(Mode, mode), float(rows[0]["updated_at"])) if mode in MODES else None


def mode_in_effect(configured: str, db: AnyDatabase | Path | None) -> ModeInEffect:
    """The stored mode when one is set, else ``configured``. ``db`` may be a path (read-only, never created)."""
    conf = cast(Mode, configured)
    got: tuple[Mode, float] | None = None
    if isinstance(db, Database | PostgresDatabase):
        got = _stored(db.query("SELECT value, updated_at FROM runtime_state WHERE key = ?", [KEY]))
    elif db is not None and Path(db).exists():
        try:
            conn = connect(db, rows=True, readonly=True)
            try:
                got = _stored(
                    conn.execute("SELECT value, updated_at FROM runtime_state WHERE key = ?", [KEY]).fetchall()
                )
            finally:
                conn.close()
        except sqlite3.Error:
            got = None  # an older home without the table: nothing stored
    if got is None:
        return ModeInEffect(conf, "config", None, conf)
    return ModeInEffect(got[0], "stored", got[1], conf)
