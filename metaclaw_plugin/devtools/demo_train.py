"""The demo's slow-loop stage: a scripted idle window opens, the real scheduler runs a real LoRA step on the tiny
model, and the served policy hot-swaps to the LoRA weights it published.

Every part is the one a user runs: :class:`~metaclaw_plugin.scheduling.omls.Omls` (its state machine, driven by
``tick()`` as its APScheduler job would; transitions stored in ``sched_transitions``), the trainer
:func:`~metaclaw_plugin.training.runtime.build_trainer` makes from the home's settings, and a
:class:`~metaclaw_plugin.serving.policy.ServedPolicy` that the trainer's ``publish`` swaps. Only the idle signal
is scripted (a demo cannot wait half an hour for the user to leave). The result is read back from the store.
"""

from __future__ import annotations

import importlib.util
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Settings
from ..scheduling.attach import file_activity
from ..scheduling.lock import TrainerLock
from ..scheduling.omls import Omls
from ..scheduling.signals import Gate, Reading
from ..skillbank.files import SkillStore
from ..store import Database
from ..training.buffer import SampleBuffer, read_stats
from ..training.weights import WeightsRef, latest

EXPECTED = [
    ("IDLE_WAIT", "WINDOW_OPEN"),
    ("WINDOW_OPEN", "UPDATING"),
    ("UPDATING", "WINDOW_OPEN"),
    ("WINDOW_OPEN", "IDLE_WAIT"),
]
PROMPT = [{"role": "user", "content": "split the csv export invoices-7.csv by its delimiter and count the rows"}]


class SlowLoopFailed(RuntimeError):
    """The step, the swap or their records are not what the stage claims."""


def missing_extra() -> str | None:
    """Why the local trainer cannot run here (None when it can): the ``train-local`` extra's modules."""
    for mod in ("torch", "transformers", "peft", "tokenizers"):
        if importlib.util.find_spec(mod) is None:
            return f"{mod} is not installed (pip install 'metaclaw-plugin[train-local]')"
    return None


class ScriptedIdle:
    """The demo's idle detector: it reads what the stage sets (present, then away, then back)."""

    name = "scripted-idle"
    activity = True  # an idle detector: it may veto a window, like the real ones

    def __init__(self) -> None:
        self.reading = Reading(away=False, present=True, detail="scripted: the user is at the machine")

    def read(self, now: float) -> Reading:
        return self.reading


@dataclass
class SlowLoopResult:
    step: int
    loss: float
    samples_used: int
    samples_dropped: int
    batch_size: int
    adapter: str  # the LoRA weights folder it published (the name is the key of demo --json's report)
    step_seconds: float
    transitions: list[tuple[str, str]]
    served_before: str  # the served policy's weights label before the swap ("base")
    served_after: str  # ... and after: the LoRA weights folder
    answer_step: int | None  # the trainer step of the weights that answered the same prompt after the swap

    def as_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "transitions": [f"{a} -> {b}" for a, b in self.transitions]}


def demo_settings(home: Path, **overrides: Any) -> Settings:
    """The demo home's settings and ``overrides``, never the caller's ``METACLAW_*`` variables (as for its proxy):
    the settings read the environment, so it is hidden while they load."""
    hidden = {k: os.environ.pop(k) for k in [k for k in os.environ if k.startswith("METACLAW_")]}
    try:
        return Settings.load(home / "config.yaml", home=home, **overrides)
    finally:
        os.environ.update(hidden)


def run_slow_loop(home: Path, timeout: float = 120.0) -> SlowLoopResult:
    """Train one step on the current generation's query samples in a scripted idle window, and hot-swap."""
    db = Database(home / "metaclaw.db")
    skills = SkillStore(home / "skills")
    fresh = SampleBuffer(db, generation_fn=lambda: skills.generation).fresh_count()
    if fresh < 1:
        raise SlowLoopFailed("no query sample of the current generation to train on")
    from transformers.utils import logging as hf_logging

    from ..serving.policy import ServedPolicy
    from ..training.runtime import build_trainer
    from .tinymodel import build_tiny_model

    hf_logging.disable_progress_bar()  # its bars on stderr tear the demo's stage lines
    tiny = build_tiny_model(home / "tiny-model", seed=0)
    # One step over every sample the day accrued: the batch is what is there (the default 4 would leave some).
    # The demo's answers came from the upstream model, not from this policy: trained in the REINFORCE form, with
    # advantages over the batch (a group of the tiny policy's resampled answers beside the upstream's would compare
    # unlike things; the groups are shown by the tests of training/groups.py).
    settings = demo_settings(
        home,
        training={
            "backend": "local",
            "base_model": str(tiny),
            "device": "cpu",
            "batch_size": fresh,
            "lora_rank": 8,
            "off_policy": "reinforce",
            "advantage": "batch",
        },
    )
    off = settings.training.off_reason()
    if off:
        raise SlowLoopFailed(f"training cannot run: {off}")

    scope = settings.training.scope_in_effect()[0]  # the demo's turns are the default tenant's: its weights
    policy = ServedPolicy(str(tiny), name="demo", device="cpu", db=None, poll_interval=None, scope=scope)
    swaps: list[Any] = []
    try:
        before = policy.wait_ready(timeout)
        trainer = build_trainer(settings, publish=lambda ref: swaps.append(policy.swap(ref)))
        idle = ScriptedIdle()
        started = time.time()
        omls = Omls(
            db,
            Gate([idle], settings.scheduler.min_window_minutes * 60),
            lambda: trainer,
            mode=lambda: "auto",
            lock=TrainerLock(home),
            last_activity=file_activity(settings.activity_path),  # the proxy's host-request signal
            interval_s=settings.scheduler.interval_seconds,
            max_steps=1,
        )
        omls.tick()  # the user is at the machine: no window
        if omls.state.value != "IDLE_WAIT":
            raise SlowLoopFailed(f"the scheduler left IDLE_WAIT while the user was present ({omls.status()})")
        idle.reading = Reading(
            away=True, until=time.time() + 3600, detail="scripted: no input for 30 min, predicted 60 min more"
        )
        omls.tick()  # a window opens and, with a fresh batch, the trainer starts in the scheduler's thread
        if not omls.wait_idle(timeout):
            omls.stop(5)
            raise SlowLoopFailed(f"the step did not finish within {timeout:.0f}s")
        idle.reading = Reading(away=False, present=True, detail="scripted: the user is back")
        omls.tick()  # the window closes
        if omls.errors:
            raise SlowLoopFailed(f"the scheduler counted errors: {omls.errors} (note: {omls.note})")
        if not swaps:
            raise SlowLoopFailed(f"the trainer published no weights (report: {omls.last_report})")
        swapped = swaps[-1].result(timeout)
        answer = policy.generate(PROMPT, max_tokens=8, temperature=0)
        return _verify(db, started, before.label, swapped.ref, answer.step, answer.weights, fresh)
    finally:
        policy.close()


def _verify(
    db: Database,
    started: float,
    served_before: str,
    served: WeightsRef | None,
    answer_step: int | None,
    answer_weights: str,
    batch: int,
) -> SlowLoopResult:
    """What the stage claims, read back from the store (and the served policy's current weights)."""
    rows = db.query("SELECT * FROM train_steps ORDER BY step DESC LIMIT 1")
    if not rows:
        raise SlowLoopFailed("no row in train_steps")
    step = dict(rows[0])
    published = latest(db)
    if published is None or published.step != step["step"] or published.path != step["weights"]:
        raise SlowLoopFailed(f"the published weights {published} are not the step's ({step['weights']})")
    if served != published:
        raise SlowLoopFailed(f"the served policy holds {served}, not the published {published}")
    if answer_step != published.step or answer_weights != published.path:
        raise SlowLoopFailed(f"the answer came from {answer_weights} (step {answer_step}), not the new LoRA weights")
    if not (Path(published.path) / "adapter_config.json").is_file():
        raise SlowLoopFailed(f"{published.path} is not a folder of PEFT LoRA weights")
    stats = read_stats(db.path)
    if stats.get("trained", 0) < step["samples_used"] or stats.get("pending", 0):
        raise SlowLoopFailed(f"the buffer does not show the step's samples as trained: {stats}")
    trans = [
        (r["from_state"], r["to_state"])
        for r in db.query("SELECT from_state, to_state FROM sched_transitions WHERE at >= ? ORDER BY id", [started])
    ]
    if trans != EXPECTED:
        raise SlowLoopFailed(f"the scheduler's recorded transitions are {trans}, expected {EXPECTED}")
    return SlowLoopResult(
        step=int(step["step"]),
        loss=float(step["loss"]),
        samples_used=int(step["samples_used"]),
        samples_dropped=int(step["samples_dropped"]),
        batch_size=batch,
        adapter=published.path,
        step_seconds=round(float(step["step_seconds"]), 2),
        transitions=trans,
        served_before=served_before,
        served_after=answer_weights,
        answer_step=answer_step,
    )
