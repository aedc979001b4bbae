"""What was recorded, read for people to look at (the dashboard, status): sessions, their turns' skills and rewards,
the training steps and the scheduler's transitions. Read-only, through :func:`.backend.reading`'s query (SQLite's
dialect, translated on PostgreSQL); the tables are written by their owners (the trajectory store, the trainer, the
scheduler).

Every figure is computed in SQL over indexed tables, so a page stays fast with tens of thousands of turns
(benchmarks/dashboard_load.py measures it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .backend import Query

# A turn's reward: the mean of its rewards (judge, correction, feedback, outcome, verifier). For a few turns, one
# lookup each by the rewards_by_turn index; for all of them, one grouping joined once (both engines hash or merge
# it; a lookup per turn and skill was 2x slower on SQLite, 25x on PostgreSQL).
_SCORE = "(SELECT AVG(score) FROM rewards WHERE rewards.turn_id = t.turn_id)"
_SCORES = "(SELECT turn_id, AVG(score) AS score FROM rewards GROUP BY turn_id) r ON r.turn_id = t.turn_id"


def skill_uses(query: Query) -> dict[str, tuple[int, int, float]]:
    """Per skill carried by main turns: (turns that carried it, those of them scored, the sum of their scores)."""
    return {
        r["name"]: (r["uses"], r["n"], r["total"])
        for r in query(
            f"SELECT j.value AS name, COUNT(*) AS uses, COUNT(r.score) AS n, COALESCE(SUM(r.score), 0) AS total "
            f"FROM turns t LEFT JOIN {_SCORES}, json_each(t.injected) j WHERE t.kind = 'main' "
            "AND t.injected IS NOT NULL AND t.injected != '[]' GROUP BY j.value",
        )
    }


def scored_main_turns(query: Query) -> tuple[int, float]:
    """(main turns scored, the sum of their scores)."""
    rows = query(
        f"SELECT COUNT(*) AS n, COALESCE(SUM(r.score), 0) AS total FROM turns t JOIN {_SCORES} WHERE t.kind = 'main'",
    )
    return (rows[0]["n"], rows[0]["total"]) if rows else (0, 0.0)


def session_count(query: Query) -> int:
    rows = query("SELECT COUNT(*) AS n FROM sessions")
    return rows[0]["n"] if rows else 0


def latest_sessions(query: Query, limit: int, offset: int) -> list[Any]:
    """A page of sessions, the last active first: tenant, session_id, host, started_at, last_at, ended_at, outcome
    (JSON text), turn_count."""
    return query(
        "SELECT tenant, session_id, host, started_at, last_at, ended_at, outcome, turn_count FROM sessions "
        "ORDER BY last_at DESC LIMIT ? OFFSET ?",
        (limit, offset),
    )


def session_turns(query: Query, tenant: str, session_id: str) -> list[Any]:
    """The session's turns: the skills each carried (``injected``, JSON text) and its ``score`` (None unscored)."""
    return query(
        f"SELECT t.injected, {_SCORE} AS score FROM turns t WHERE t.tenant = ? AND t.session_id = ?",
        (tenant, session_id),
    )


def rewards_of(query: Query, turn_ids: Sequence[str]) -> list[Any]:
    """The rewards (turn_id, source, score) of the turns, in the order they were recorded."""
    marks = ",".join("?" * len(turn_ids))
    return query(f"SELECT turn_id, source, score FROM rewards WHERE turn_id IN ({marks}) ORDER BY id", tuple(turn_ids))


def main_rewards_since(query: Query, since: float) -> list[Any]:
    """Every reward (turn_id, created_at of the turn, source, score) of the main turns made since ``since``."""
    return query(
        "SELECT t.turn_id, t.created_at, r.source, r.score FROM turns t JOIN rewards r ON r.turn_id = t.turn_id "
        "WHERE t.kind = 'main' AND t.created_at >= ?",
        (since,),
    )


def rewards_by_source(query: Query, since: float) -> dict[str, int]:
    """How many rewards each source recorded since ``since``."""
    rows = query("SELECT source, COUNT(*) FROM rewards WHERE created_at >= ? GROUP BY source", [since])
    return {str(r[0]): int(r[1]) for r in rows}
