"""What the dashboard shows, read-only from the skills folder and the database (one short connection a page).

Every figure is computed in SQL over indexed tables, so a page stays fast with tens of thousands of turns
(benchmarks/dashboard_load.py measures it)."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..learning.approval import label, trial_evidence
from ..skillbank.store import SkillStore
from ..store import connect


@contextmanager
def _reader(db: Path) -> Iterator[sqlite3.Connection | None]:
    if not db.exists():
        yield None
        return
    conn = connect(db, readonly=True)
    conn.row_factory = sqlite3.Row
    try:
        yield conn
    finally:
        conn.close()


def _rows(conn: sqlite3.Connection | None, sql: str, args: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
    if conn is None:
        return []
    try:
        return conn.execute(sql, args).fetchall()
    except sqlite3.OperationalError:
        return []  # a table not created yet (an older schema, or nothing recorded)


# A turn's reward: the mean of its rewards (judge, correction, feedback, outcome, verifier); by the rewards_by_turn index.
_SCORE = "(SELECT AVG(score) FROM rewards WHERE rewards.turn_id = t.turn_id)"


@dataclass
class SkillRow:
    name: str
    description: str
    kind: str
    status: str  # the label a person reads: active, trial, quarantined, retired, "active (v3 review)"
    origin: str
    version: int
    generation: int
    uses: int
    reward_with: float | None
    reward_without: float | None
    trial: dict[str, Any] | None
    can_approve: bool
    can_retire: bool
    can_rollback: bool


def skills(skills_dir: Path, db: Path) -> list[SkillRow]:
    result = SkillStore(skills_dir).load()
    with _reader(db) as conn:
        used = {
            r["name"]: (r["uses"], r["n"], r["total"])
            for r in _rows(
                conn,
                f"SELECT j.value AS name, COUNT(*) AS uses, COUNT(t.score) AS n, TOTAL(t.score) AS total "
                f"FROM (SELECT t.injected, {_SCORE} AS score FROM turns t WHERE t.kind = 'main' "
                "AND t.injected IS NOT NULL AND t.injected != '[]') t, json_each(t.injected) j GROUP BY j.value",
            )
        }
        overall = _rows(
            conn,
            f"SELECT COUNT(score) AS n, TOTAL(score) AS total FROM (SELECT {_SCORE} AS score FROM turns t "
            "WHERE t.kind = 'main')",
        )
    n_all, total_all = (overall[0]["n"], overall[0]["total"]) if overall else (0, 0.0)
    trials = trial_evidence(db, result)
    out = []
    for name, s in sorted(result.skills.items()):
        pending = result.pending.get(name)
        uses, n, total = used.get(name, (0, 0, 0.0))
        lab = label(s, pending)
        version = int(s.extra_metadata.get("version", 1) or 1)
        out.append(
            SkillRow(
                name=name,
                description=s.description,
                kind=s.kind,
                status=lab,
                origin=s.origin,
                version=version,
                generation=s.generation,
                uses=uses,
                reward_with=total / n if n else None,
                reward_without=(total_all - total) / (n_all - n) if n_all - n > 0 else None,
                trial=trials.get(name),
                can_approve=s.status != "active" or pending is not None,
                can_retire=s.status != "retired",
                can_rollback=version > 1,
            )
        )
    return out


def sessions(db: Path, *, limit: int = 50, offset: int = 0) -> tuple[int, list[dict[str, Any]]]:
    """The most recent sessions with their turn count, mean reward and the skills their turns carried."""
    with _reader(db) as conn:
        total = _rows(conn, "SELECT COUNT(*) AS n FROM sessions")
        rows = _rows(
            conn,
            "SELECT tenant, session_id, host, started_at, last_at, ended_at, outcome, turn_count FROM sessions "
            "ORDER BY last_at DESC LIMIT ? OFFSET ?",
            (limit, offset),
        )
        out = []
        for r in rows:
            turns = _rows(
                conn,
                f"SELECT t.injected, {_SCORE} AS score FROM turns t WHERE t.tenant = ? AND t.session_id = ?",
                (r["tenant"], r["session_id"]),
            )
            scores = [t["score"] for t in turns if t["score"] is not None]
            injected = sorted({n for t in turns for n in json.loads(t["injected"] or "[]")})
            out.append(
                {
                    **dict(r),
                    "outcome": json.loads(r["outcome"]) if r["outcome"] else None,
                    "mean_reward": sum(scores) / len(scores) if scores else None,
                    "scored": len(scores),
                    "injected": injected,
                }
            )
    return (total[0]["n"] if total else 0), out


def session_rewards(db: Path, turn_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {t: [] for t in turn_ids}
    if not turn_ids:
        return out
    with _reader(db) as conn:
        marks = ",".join("?" * len(turn_ids))
        for r in _rows(
            conn, f"SELECT turn_id, source, score FROM rewards WHERE turn_id IN ({marks}) ORDER BY id", tuple(turn_ids)
        ):
            out[r["turn_id"]].append({"source": r["source"], "score": r["score"]})
    return out


def train_steps(db: Path) -> list[dict[str, Any]]:
    with _reader(db) as conn:
        return [dict(r) for r in _rows(conn, "SELECT * FROM train_steps ORDER BY step")]


def transitions(db: Path) -> list[dict[str, Any]]:
    with _reader(db) as conn:
        return [dict(r) for r in _rows(conn, "SELECT * FROM sched_transitions ORDER BY at, id")]


def windows(rows: list[dict[str, Any]], now: float | None = None) -> list[dict[str, Any]]:
    """Each state the scheduler was in, from one transition to the next (the last one until now)."""
    now = time.time() if now is None else now
    out = []
    for i, r in enumerate(rows):
        end = rows[i + 1]["at"] if i + 1 < len(rows) else now
        out.append({"state": r["to_state"], "start": r["at"], "end": max(end, r["at"]), "reason": r["reason"]})
    return out
