"""The judge's answers by what they judged (a hash of the model, the votes asked, the temperature and the turn),
so that the same turn is never paid for twice. Owns ``reward_cache``."""

from __future__ import annotations

import json
from typing import Any

from .backend import AnyDatabase


def cached(db: AnyDatabase, key: str) -> tuple[float, list[Any]] | None:
    """(score, votes) judged under ``key``, or None."""
    rows = db.query("SELECT score, votes FROM reward_cache WHERE key = ?", [key])
    return (float(rows[0][0]), json.loads(rows[0][1])) if rows else None


def remember(db: AnyDatabase, key: str, score: float, votes: list[Any], model: str | None, now: float) -> None:
    db.execute(
        "INSERT INTO reward_cache(key, score, votes, model, created_at) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT(key) DO UPDATE SET score = excluded.score, votes = excluded.votes, "
        "model = excluded.model, created_at = excluded.created_at",
        [key, score, json.dumps(votes), model, now],
    )
