"""When the learning side reviews a session, and the window of reviewed turns a low success rate evolves from.

Owns ``fl_sessions`` (each session's main turns, whether it ended, and its review mark: ``review_due``, why, and
since when it waits) and ``fl_window`` (scored turns per tenant, taken in batches). ``c`` below is the database,
or a transaction whose other writes the change joins."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .backend import AnyDatabase

_MARK = "review_due = ?, review_reason = ?, review_since = COALESCE(review_since, ?)"


def count_main_turn(c: Any, tenant: str, session_id: str, now: float) -> int:
    """One more main turn in the session. Returns its main turns since the last review."""
    c.execute(
        "INSERT INTO fl_sessions(tenant, session_id, main_turns, since_review, last_at) VALUES (?, ?, 1, 1, ?) "
        "ON CONFLICT(tenant, session_id) DO UPDATE SET main_turns = main_turns + 1, since_review = since_review + 1, "
        "last_at = excluded.last_at",
        [tenant, session_id, now],
    )
    row = c.execute(
        "SELECT since_review FROM fl_sessions WHERE tenant = ? AND session_id = ?", [tenant, session_id]
    ).fetchone()
    return int(row[0]) if row else 0


def mark(c: Any, tenant: str, session_id: str, reason: str, now: float, *, ended: bool = False) -> None:
    """The session is due for review now (its wait counted from the first mark since the last review); ``ended``:
    it is over too."""
    sets = f"ended = 1, {_MARK}" if ended else _MARK
    c.execute(
        f"UPDATE fl_sessions SET {sets} WHERE tenant = ? AND session_id = ?", [now, reason, now, tenant, session_id]
    )


def end(c: Any, tenant: str, session_id: str, success: bool | None, now: float) -> None:
    """The session ended (``success``: its outcome, when known): due for review."""
    c.execute(
        "INSERT INTO fl_sessions(tenant, session_id, last_at) VALUES (?, ?, ?) ON CONFLICT(tenant, session_id) DO NOTHING",
        [tenant, session_id, now],
    )
    c.execute(
        f"UPDATE fl_sessions SET ended = 1, success = ?, {_MARK} WHERE tenant = ? AND session_id = ?",
        [None if success is None else int(success), now, "session_end", now, tenant, session_id],
    )


def postpone(db: AnyDatabase, tenant: str, session_id: str, until: float) -> None:
    """Look at the session's review again at ``until`` (it waits for judge votes), unless a new mark comes first."""
    db.execute(
        "UPDATE fl_sessions SET review_due = ? WHERE tenant = ? AND session_id = ? AND review_due IS NOT NULL",
        [until, tenant, session_id],
    )


def due(db: AnyDatabase, now: float) -> list[Any]:
    """Sessions due for review by ``now``."""
    return db.query("SELECT * FROM fl_sessions WHERE review_due IS NOT NULL AND review_due <= ?", [now])


def close(db: AnyDatabase, tenant: str, session_id: str, ended: bool) -> None:
    """The session's review is done: no mark, and its count since then restarts (at the newest turn, which waited
    for its evidence, when the session goes on)."""
    db.execute(
        "UPDATE fl_sessions SET review_due = NULL, review_reason = NULL, review_since = NULL, "
        "since_review = CASE WHEN ? = 1 THEN 0 ELSE 1 END WHERE tenant = ? AND session_id = ?",
        [int(ended), tenant, session_id],
    )


def idle(db: AnyDatabase, before: float) -> list[tuple[str, str]]:
    """(tenant, session id) of the sessions not ended whose last turn came before ``before``."""
    rows = db.query("SELECT tenant, session_id FROM fl_sessions WHERE ended = 0 AND last_at < ?", [before])
    return [(str(r[0]), str(r[1])) for r in rows]


def add_to_window(db: AnyDatabase, tenant: str, turn_id: str, success: bool, now: float) -> None:
    db.execute(
        "INSERT OR IGNORE INTO fl_window(tenant, turn_id, success, created_at) VALUES (?, ?, ?, ?)",
        [tenant, turn_id, int(success), now],
    )


def window(db: AnyDatabase, tenant: str, n: int) -> list[Any]:
    """The tenant's oldest ``n`` turns of the window not in a batch yet."""
    return db.query("SELECT * FROM fl_window WHERE tenant = ? AND batched = 0 ORDER BY created_at LIMIT ?", [tenant, n])


def batched(db: AnyDatabase, turn_ids: Sequence[str]) -> None:
    """These turns of the window made a batch."""
    db.execute(f"UPDATE fl_window SET batched = 1 WHERE turn_id IN ({','.join('?' * len(turn_ids))})", turn_ids)
