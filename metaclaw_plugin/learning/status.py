"""The learning side's figures from the database alone, for ``metaclaw-plugin status``."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from typing import Any

from ..hostmodel import HOST_MODEL_KEY
from ..store import budget, connect, ledger, runtime_state
from ..store.activity import rewards_by_source
from ..store.backend import Query, postgres_of
from ..store.jobs import EVOLVE, JUDGE
from ..store.postgres import PostgresDatabase
from ..training.buffer import SampleBuffer, read_stats
from .llm import HOST, day_start, utc_day


def status_from_db(settings: Any) -> dict[str, Any]:
    """Learning figures for ``status``, read-only (works without a running plugin, creates nothing)."""
    pg = postgres_of(settings)
    if pg is not None:
        return _status_postgres(settings, pg)
    db = settings.db_file
    out: dict[str, Any] = {"buffer": read_stats(db), "rewards_today": {}, "budget": {}, "queues": {}, "counters": {}}
    used: dict[str, tuple[int, int]] = {}
    if db.exists():
        try:
            conn = connect(db, readonly=True)
            try:

                def q(sql: str, args: Iterable[Any] = ()) -> list[Any]:
                    try:
                        return conn.execute(sql, tuple(args)).fetchall()
                    except sqlite3.OperationalError:
                        return []  # table not created yet

                used = _figures(q, out)
            finally:
                conn.close()
        except sqlite3.Error:
            pass
    _budget(settings, used, out)
    return out


def _status_postgres(settings: Any, pg: PostgresDatabase) -> dict[str, Any]:
    out: dict[str, Any] = {"buffer": {}, "rewards_today": {}, "budget": {}, "queues": {}, "counters": {}}
    used: dict[str, tuple[int, int]] = {}
    try:
        out["buffer"] = SampleBuffer(pg).stats().as_dict()
        used = _figures(lambda sql, args=(): [tuple(r) for r in pg.query(sql, args)], out)
        elected = runtime_state.get(pg, "learner")
        if elected is not None:
            out["learner"] = {**elected.value, "heartbeat_age_s": round(time.time() - elected.updated_at, 1)}
    except Exception as e:  # unreachable server: status still answers, and says so
        out["error"] = f"{pg.where}: {type(e).__name__}: {e}"
    finally:
        pg.close()
    _budget(settings, used, out)
    return out


def _figures(q: Query, out: dict[str, Any]) -> dict[str, tuple[int, int]]:
    noted = runtime_state.values(q, [HOST_MODEL_KEY]).get(HOST_MODEL_KEY)
    out["host_model"] = noted if isinstance(noted, dict) else None  # as the host's process noted it
    out["rewards_today"] = rewards_by_source(q, day_start())
    out["queues"] = {"judge": JUDGE.counts(q), "evolution": EVOLVE.counts(q)}
    out["counters"] = ledger.counters(q)
    return budget.spent(q, utc_day())


def _budget(settings: Any, used: dict[str, tuple[int, int]], out: dict[str, Any]) -> None:
    limits = {
        "judge": (settings.reward.daily_calls, settings.reward.daily_tokens),
        "evolver": (settings.evolution.daily_calls, settings.evolution.daily_tokens),
        "memory": (settings.memory.daily_calls, settings.memory.daily_tokens),
        HOST: (settings.learning.daily_calls, settings.learning.daily_tokens),  # all roles on the host's model
    }
    for purpose, (lc, lt) in limits.items():
        c, t = used.get(purpose, (0, 0))
        out["budget"][purpose] = {
            "calls_used": c,
            "tokens_used": t,
            "calls_left": max(0, lc - c) if lc else None,
            "tokens_left": max(0, lt - t) if lt else None,
        }
