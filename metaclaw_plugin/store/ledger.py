"""The learning side's turn ledger: which turns exist for learning (``fl_turns``), the rewards the jobs read back
at once (``fl_rewards``, a mirror of the trajectory store's record) and the counters (``fl_counters``). Owns the
three tables. ``c`` below is the database, or a transaction whose other writes the change joins."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..types import Turn
from .backend import AnyDatabase, Query


def bump(c: Any, key: str, n: int = 1) -> None:
    """Add ``n`` to a counter."""
    c.execute(
        "INSERT INTO fl_counters(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = value + excluded.value",
        [key, n],
    )


def counters(query: Query) -> dict[str, int]:
    return {str(r[0]): int(r[1]) for r in query("SELECT key, value FROM fl_counters")}


def put_reward(c: Any, turn_id: str, source: str, score: float, now: float) -> None:
    """A turn's reward from one source (a later one from the same source replaces it)."""
    c.execute(
        "INSERT INTO fl_rewards(turn_id, source, score, created_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(turn_id, source) DO UPDATE SET score = excluded.score",
        [turn_id, source, float(score), now],
    )


def rewards(db: AnyDatabase, turn_id: str) -> dict[str, float]:
    """A turn's rewards: source -> score."""
    return {r[0]: float(r[1]) for r in db.query("SELECT source, score FROM fl_rewards WHERE turn_id = ?", [turn_id])}


def next_seq(c: Any, tenant: str, session_id: str) -> int:
    """The number the session's next turn takes (1 for its first)."""
    sql = "SELECT COALESCE(MAX(seq), 0) + 1 FROM fl_turns WHERE tenant = ? AND session_id = ?"
    return int(c.execute(sql, [tenant, session_id]).fetchone()[0])


def insert_turn(c: Any, turn: Turn, seq: int, now: float, task_type: str | None = None) -> None:
    """A turn's row, numbered ``seq`` in its session (a turn already there keeps its row)."""
    c.execute(
        "INSERT OR IGNORE INTO fl_turns(turn_id, tenant, session_id, kind, seq, generation, task_type, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [turn.turn_id, turn.tenant, turn.session_id, turn.kind, seq, turn.skill_generation, task_type, now],
    )


def turn(db: AnyDatabase, turn_id: str) -> Any:
    """A turn's row, or None."""
    rows = db.query("SELECT * FROM fl_turns WHERE turn_id = ?", [turn_id])
    return rows[0] if rows else None


def turns(db: AnyDatabase, turn_ids: Sequence[str]) -> list[Any]:
    if not turn_ids:
        return []
    return db.query(f"SELECT * FROM fl_turns WHERE turn_id IN ({','.join('?' * len(turn_ids))})", turn_ids)


def main_before(c: Any, tenant: str, session_id: str, seq: int) -> str | None:
    """The session's last main turn numbered before ``seq``, or None."""
    row = c.execute(
        "SELECT turn_id FROM fl_turns WHERE tenant = ? AND session_id = ? AND kind = 'main' AND seq < ? "
        "ORDER BY seq DESC LIMIT 1",
        [tenant, session_id, seq],
    ).fetchone()
    return None if row is None else str(row[0])


def last_main(db: AnyDatabase, tenant: str, session_id: str) -> str | None:
    """The session's last main turn, or None."""
    rows = db.query(
        "SELECT turn_id FROM fl_turns WHERE tenant = ? AND session_id = ? AND kind = 'main' ORDER BY seq DESC LIMIT 1",
        [tenant, session_id],
    )
    return str(rows[0][0]) if rows else None


def unreviewed_main(db: AnyDatabase, tenant: str, session_id: str) -> list[Any]:
    """The session's main turns not reviewed yet, in order."""
    return db.query(
        "SELECT * FROM fl_turns WHERE tenant = ? AND session_id = ? AND kind = 'main' AND reviewed = 0 ORDER BY seq",
        [tenant, session_id],
    )


def set_score(db: AnyDatabase, turn_id: str, score: float, source: str) -> None:
    db.execute("UPDATE fl_turns SET score = ?, source = ? WHERE turn_id = ?", [score, source, turn_id])


def settle_turn(db: AnyDatabase, turn_id: str, score: float | None, source: str | None) -> None:
    """The turn's judging is over, with its effective reward (or none)."""
    db.execute("UPDATE fl_turns SET settled = 1, score = ?, source = ? WHERE turn_id = ?", [score, source, turn_id])


def mark_reviewed(db: AnyDatabase, turn_ids: Sequence[str]) -> None:
    db.execute(f"UPDATE fl_turns SET reviewed = 1 WHERE turn_id IN ({','.join('?' * len(turn_ids))})", turn_ids)


def scored_main(db: AnyDatabase, limit: int) -> list[Any]:
    """The newest scored main turns: ``tenant``, ``injected`` (the skills' names, a JSON array) and ``score``."""
    return db.query(
        "SELECT t.tenant, t.injected, f.score FROM fl_turns f JOIN turns t ON t.turn_id = f.turn_id "
        "WHERE f.kind = 'main' AND f.score IS NOT NULL ORDER BY f.created_at DESC LIMIT ?",
        [limit],
    )


def task_types(query: Callable[[str, list[str]], Sequence[Any]], turn_ids: Sequence[str]) -> dict[str, str]:
    """Each of ``turn_ids`` that has a task type (``metadata.task_type`` as stored: the trainer groups advantages
    by it, the evolution queue keeps a support set to one), read with ``query`` (a database's or a transaction's)
    in chunks
    of 500 ids."""
    out: dict[str, str] = {}
    for i in range(0, len(turn_ids), 500):
        part = list(turn_ids[i : i + 500])
        rows = query(f"SELECT turn_id, task_type FROM fl_turns WHERE turn_id IN ({','.join('?' * len(part))})", part)
        out.update({r["turn_id"]: str(r["task_type"]) for r in rows if r["task_type"]})
    return out
