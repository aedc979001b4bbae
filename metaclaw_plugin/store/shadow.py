"""The evidence of shadow trials: which arm of which trial each turn was in, and its score once reviewed. Owns
``fl_shadow``. ``c`` below is the database, or a transaction whose other writes the change joins."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .backend import AnyDatabase, Query


def note_arm(c: Any, turn_id: str, skill: str, generation: int, arm: str, now: float) -> None:
    """The turn was in ``arm`` (with, without) of the trial of ``skill`` at ``generation``; a turn keeps its first."""
    c.execute(
        "INSERT OR IGNORE INTO fl_shadow(turn_id, skill, skill_generation, arm, created_at) VALUES (?, ?, ?, ?, ?)",
        [turn_id, skill, generation, arm, now],
    )


def score(db: AnyDatabase, turn_id: str, value: float) -> None:
    db.execute("UPDATE fl_shadow SET score = ? WHERE turn_id = ?", [value, turn_id])


def on_trial(db: AnyDatabase, turn_ids: Sequence[str]) -> set[str]:
    """The turns among these that are some trial's evidence."""
    if not turn_ids:
        return set()
    marks = ",".join("?" * len(turn_ids))
    return {str(r[0]) for r in db.query(f"SELECT DISTINCT turn_id FROM fl_shadow WHERE turn_id IN ({marks})", turn_ids)}


def arm_scores(query: Query, skill: str, generation: int) -> list[tuple[str, float]]:
    """(arm, score) of the scored turns of the trial of ``skill`` at ``generation``."""
    rows = query(
        "SELECT arm, score FROM fl_shadow WHERE skill = ? AND skill_generation = ? AND score IS NOT NULL",
        [skill, generation],
    )
    return [(str(r[0]), float(r[1])) for r in rows]
