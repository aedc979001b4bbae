"""The learning side's figures from the database alone, for ``metaclaw-plugin status``."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

from ..store import connect
from ..training.buffer import read_stats
from .llm import day_start, utc_day


def status_from_db(settings: Any) -> dict[str, Any]:
    """Learning figures for ``status``, read-only (works without a running plugin, creates nothing)."""
    db = settings.db_file
    out: dict[str, Any] = {"buffer": read_stats(db), "rewards_today": {}, "budget": {}, "queues": {}, "counters": {}}
    limits = {
        "judge": (settings.reward.daily_calls, settings.reward.daily_tokens),
        "evolver": (settings.evolution.daily_calls, settings.evolution.daily_tokens),
    }
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

                out["rewards_today"] = dict(
                    q("SELECT source, COUNT(*) FROM rewards WHERE created_at >= ? GROUP BY source", [day_start()])
                )
                for purpose, calls, tokens in q(
                    "SELECT purpose, calls, tokens FROM llm_budget WHERE day = ?", [utc_day()]
                ):
                    used[purpose] = (int(calls), int(tokens))
                out["queues"] = {
                    "judge": dict(q("SELECT state, COUNT(*) FROM fl_judge_queue GROUP BY state")),
                    "evolution": dict(q("SELECT state, COUNT(*) FROM fl_evolve_queue GROUP BY state")),
                }
                out["counters"] = dict(q("SELECT key, value FROM fl_counters"))
            finally:
                conn.close()
        except sqlite3.Error:
            pass
    for purpose, (lc, lt) in limits.items():
        c, t = used.get(purpose, (0, 0))
        out["budget"][purpose] = {
            "calls_used": c,
            "tokens_used": t,
            "calls_left": max(0, lc - c) if lc else None,
            "tokens_left": max(0, lt - t) if lt else None,
        }
    return out
