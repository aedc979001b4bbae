"""Test doubles for the scheduler: a fake clock, scripted signals, and a trainer that honours the slow loop's
``Trainer`` contract on the real SampleBuffer, with scripted steps (fast and exact state-machine tests; the real
trainer is driven in test_sched_e2e.py).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from metaclaw_plugin.scheduling.signals import Reading
from metaclaw_plugin.training import SampleBuffer
from metaclaw_plugin.types import Sample


class FakeClock:
    def __init__(self, t: float = 1_800_000_000.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


class Scripted:
    """A signal whose reading the test sets."""

    def __init__(self, name: str, activity: bool = False, reading: Reading | None = None):
        self.name, self.activity = name, activity
        self.reading = reading or Reading(away=False, detail="scripted: not away")
        self.reads = 0

    def read(self, now: float) -> Reading:
        self.reads += 1
        return self.reading


def add_samples(buf: SampleBuffer, n: int, gen: int, start: int = 0) -> list[str]:
    ids = [f"t{gen}-{start + i}" for i in range(n)]
    for i, tid in enumerate(ids):
        assert buf.add(Sample(tid, "s", "default", gen, 1.0, created_at=float(start + i)))
    return ids


class FakeTrainer:
    """The Trainer contract: ``should_continue`` before each step and between micro-batches; a pause before the
    optimiser step releases the batch; a batch that went stale is not applied. ``on_micro(step, micro)`` runs in
    the trainer's thread (tests script user activity there); ``step_s`` is the time one micro-batch takes."""

    def __init__(
        self,
        buffer: SampleBuffer,
        batch_size: int = 2,
        micro: int = 3,
        step_s: float = 0.0,
        on_micro: Callable[[int, int], Any] | None = None,
        log_file: Path | None = None,
    ):
        self.buffer, self.batch_size, self.micro, self.step_s = buffer, batch_size, micro, step_s
        self.on_micro = on_micro
        self.log_file = log_file
        self.applied: list[list[str]] = []
        self.released: list[list[str]] = []
        self.stale: list[list[str]] = []
        self.steps = 0

    def ready(self) -> bool:
        gen = self.buffer.generation
        rows = self.buffer.db.query(
            "SELECT COUNT(*) AS n FROM buffer_samples WHERE state = 'queued' AND generation = ?", [gen]
        )
        return int(rows[0]["n"]) >= self.batch_size

    def run(self, should_continue: Callable[[], bool], max_steps: int | None = None) -> dict[str, Any]:
        report: dict[str, Any] = {"steps": 0, "paused": False}
        while max_steps is None or report["steps"] < max_steps:
            if not should_continue():
                report["paused"] = True
                break
            batch = self.buffer.drain(self.batch_size)
            if not batch:
                break
            ids = [s.turn_id for s in batch]
            t0 = time.time()
            for m in range(self.micro):
                if self.on_micro is not None:
                    self.on_micro(self.steps, m)
                if self.step_s:
                    time.sleep(self.step_s)
                if not should_continue():
                    self.buffer.release(ids)
                    self.released.append(ids)
                    report["paused"] = True
                    return report
            if self.buffer.is_fresh(ids):
                self.buffer.ack(ids)
                self.applied.append(ids)
                self.steps += 1
                report["steps"] += 1
                if self.log_file is not None:
                    with sqlite3.connect(self.log_file, timeout=30) as c:
                        c.execute("CREATE TABLE IF NOT EXISTS steps (pid INTEGER, t0 REAL, t1 REAL)")
                        c.execute("INSERT INTO steps VALUES (?, ?, ?)", (__import__("os").getpid(), t0, time.time()))
            else:
                self.stale.append(ids)
        return report
