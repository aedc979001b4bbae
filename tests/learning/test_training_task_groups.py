"""``training.advantage: task``: answers to different requests of one task family (the host's
``metadata.task_type``) form one group, so a family's rewards compare with each other, not with another family's
and not only within one request (where each captured request has one answer)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("peft")

from training_support import capture

from metaclaw_plugin import Settings
from metaclaw_plugin.devtools.tinymodel import build_tiny_model
from metaclaw_plugin.store import Database
from metaclaw_plugin.training.runtime import build_trainer


def _rows() -> list[tuple[list[dict[str, Any]], str, float]]:
    return [
        ([{"role": "user", "content": "Name the capital of Peru"}], "Lima.", 1.0),
        ([{"role": "user", "content": "Which language is spoken in Peru?"}], "Many languages are spoken there", -1.0),
    ]


def _mark(db_file: Path, ids: list[str], task_type: str) -> None:
    db = Database(db_file)
    for i, turn_id in enumerate(ids):
        db.execute(
            "INSERT INTO fl_turns(turn_id, tenant, session_id, kind, seq, generation, task_type, created_at) "
            "VALUES (?, 'default', ?, 'main', 0, 0, ?, ?)",
            [turn_id, f"s{i}", task_type, time.time()],
        )


@pytest.mark.parametrize(("advantage", "steps"), [("group", 0), ("task", 1)])
def test_task_groups_compare_answers_to_different_requests_of_one_family(
    home: Path, tmp_path: Path, advantage: str, steps: int
) -> None:
    tiny = build_tiny_model(tmp_path / "tiny", seed=0)
    ids = capture(home / "metaclaw.db", _rows())
    _mark(home / "metaclaw.db", ids, "short")
    settings = Settings(
        home=home,
        training={
            "base_model": str(tiny),
            "device": "cpu",
            "batch_size": 2,
            "off_policy": "reinforce",
            "advantage": advantage,
        },
    )
    report = build_trainer(settings).run(lambda: True)
    # by request, each group has one answer: no signal, skipped; by task, one group with both rewards: a step
    assert (report.steps, report.skipped_batches) == (steps, 1 - steps)
