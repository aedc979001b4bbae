"""OMLS state machine under a fake clock and scripted signals, with the fake trainer on the real SampleBuffer.

The tick is called directly (APScheduler drives it in production; tests/learning/test_sched_runtime.py runs it for
real); training runs in the scheduler's worker thread as in production, and the tests join it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from sched_support import FakeClock, FakeTrainer, Scripted, add_samples

from metaclaw_plugin.scheduling.lock import TrainerLock
from metaclaw_plugin.scheduling.omls import Omls, State
from metaclaw_plugin.scheduling.signals import Gate, Reading
from metaclaw_plugin.store import Database
from metaclaw_plugin.training import SampleBuffer

AWAY_8H = 8 * 3600


class Rig:
    def __init__(self, home: Path, mode: str = "auto", **trainer_kw):
        self.clock = FakeClock()
        self.db = Database(home / "metaclaw.db")
        self.buffer = SampleBuffer(self.db)
        self.sleep = Scripted("sleep")
        self.host = Scripted("host", activity=True, reading=Reading(away=False, detail="idle 10 min"))
        self.activity = 0.0
        self.mode = mode
        self.trainer = FakeTrainer(self.buffer, **trainer_kw)
        self.lock = TrainerLock(home)
        self.omls = Omls(
            self.db,
            Gate([self.sleep, self.host], 15 * 60),
            lambda: self.trainer,
            mode=lambda: self.mode,
            lock=self.lock,
            last_activity=lambda: self.activity,
            clock=self.clock,
        )

    def away(self, seconds: float = AWAY_8H) -> None:
        self.sleep.reading = Reading(away=True, until=self.clock() + seconds, detail="sleep window")

    def back(self) -> None:
        self.sleep.reading = Reading(away=False, detail="outside the sleep window")

    def tick(self) -> State:
        self.omls.tick()
        assert self.omls.wait_idle(10)
        return self.omls.state

    def user_request(self) -> None:
        self.clock.t += 1
        self.activity = self.clock()

    def transitions(self) -> list[tuple[str, str, str]]:
        rows = self.db.query("SELECT from_state, to_state, reason FROM sched_transitions ORDER BY id")
        return [(r["from_state"], r["to_state"], r["reason"]) for r in rows]

    def states(self) -> list[tuple[str, str]]:
        return [(a, b) for a, b, _ in self.transitions()]


@pytest.fixture()
def rig(home: Path) -> Rig:
    return Rig(home)


def test_every_transition_and_a_window_that_closes_mid_step(rig: Rig) -> None:
    first, second, third = (add_samples(rig.buffer, 2, 0, start=k * 2) for k in range(3))
    assert rig.tick() == State.IDLE_WAIT  # nobody is away
    assert rig.omls.decision is not None and "no signal says the user is away" in rig.omls.decision.reason

    # the user comes back in the second step's second micro-batch
    rig.trainer.on_micro = lambda step, micro: rig.user_request() if (step, micro) == (1, 1) else None
    rig.away()
    assert rig.tick() == State.IDLE_WAIT
    assert rig.states() == [
        ("IDLE_WAIT", "WINDOW_OPEN"),
        ("WINDOW_OPEN", "UPDATING"),
        ("UPDATING", "PAUSING"),
        ("PAUSING", "IDLE_WAIT"),
    ]
    assert rig.transitions()[2][2] == "user activity: a host request"
    assert rig.trainer.applied == [first]  # step 1 applied; step 2 never reached its optimiser step
    assert rig.trainer.released == [second]
    assert rig.buffer.stats().queued == 4 and rig.buffer.stats().pending == 0  # the batch is kept
    assert rig.lock.holder() is None  # the lock goes with the run
    assert rig.omls.last_pause is not None and rig.omls.last_pause["stop_latency_s"] == 0.0

    # the next window resumes with the kept batch, then runs out of batches: UPDATING -> WINDOW_OPEN
    rig.trainer.on_micro = None
    rig.clock.t += 60
    assert rig.tick() == State.WINDOW_OPEN
    assert rig.trainer.applied == [first, second, third]
    assert rig.states()[4:] == [("IDLE_WAIT", "WINDOW_OPEN"), ("WINDOW_OPEN", "UPDATING"), ("UPDATING", "WINDOW_OPEN")]

    # the window ends (WINDOW_OPEN -> IDLE_WAIT)
    rig.back()
    assert rig.tick() == State.IDLE_WAIT
    assert rig.transitions()[-1][:2] == ("WINDOW_OPEN", "IDLE_WAIT")


def test_window_closing_at_a_tick_mid_step_keeps_the_batch_and_stale_samples_are_still_dropped(rig: Rig) -> None:
    gen0 = add_samples(rig.buffer, 2, 0)

    def window_ends(step: int, micro: int) -> None:
        if (step, micro) == (0, 1):  # the sleep window ends while the first step runs; the tick comes meanwhile
            rig.back()
            rig.omls.tick()

    rig.trainer.on_micro = window_ends
    rig.away()
    assert rig.tick() == State.IDLE_WAIT
    assert rig.transitions()[2][:2] == ("UPDATING", "PAUSING") and "window closed" in rig.transitions()[2][2]
    assert rig.trainer.applied == [] and rig.trainer.released == [gen0]

    # evolution bumps the generation while training waits: the kept batch is stale now and is dropped
    dropped = rig.buffer.on_generation(1)
    assert dropped == 2
    gen1 = add_samples(rig.buffer, 2, 1)
    rig.trainer.on_micro = None
    rig.away()
    assert rig.tick() == State.WINDOW_OPEN
    assert rig.trainer.applied == [gen1]  # only fresh samples were trained
    st = rig.buffer.stats()
    assert st.dropped_stale == 2 and st.trained == 2 and st.queued == 0


def test_a_window_too_short_does_not_open(rig: Rig) -> None:
    add_samples(rig.buffer, 2, 0)
    rig.away(10 * 60)  # < min_window_minutes (15)
    assert rig.tick() == State.IDLE_WAIT
    assert rig.omls.decision is not None and "predicted to last 10.0 min < minimum" in rig.omls.decision.reason
    assert rig.trainer.applied == []


def test_present_user_vetoes_and_an_unknown_detector_counts_as_present(rig: Rig) -> None:
    add_samples(rig.buffer, 2, 0)
    rig.away()
    rig.host.reading = Reading(away=False, present=True, detail="idle 0.5 min")
    assert rig.tick() == State.IDLE_WAIT
    assert rig.omls.decision is not None and rig.omls.decision.reason.startswith("user present (host: idle 0.5 min")

    def broken(now: float) -> Reading:
        raise OSError("detector crashed")

    rig.host.read = broken  # type: ignore[method-assign]
    assert rig.tick() == State.IDLE_WAIT
    assert "unknown (OSError: detector crashed); treated as present" in rig.omls.decision.reason
    assert rig.trainer.applied == []


def test_open_window_without_a_batch_waits_then_trains_when_one_arrives(rig: Rig) -> None:
    rig.away()
    assert rig.tick() == State.WINDOW_OPEN
    assert rig.omls.note == "waiting for a fresh batch"
    add_samples(rig.buffer, 2, 0)
    assert rig.tick() == State.WINDOW_OPEN
    assert len(rig.trainer.applied) == 1
    assert rig.states() == [("IDLE_WAIT", "WINDOW_OPEN"), ("WINDOW_OPEN", "UPDATING"), ("UPDATING", "WINDOW_OPEN")]


def test_modes_rl_trains_regardless_of_signals_and_activity_skills_only_never(home: Path) -> None:
    rig = Rig(home, mode="rl")
    add_samples(rig.buffer, 4, 0)
    rig.host.reading = Reading(away=False, present=True, detail="typing")
    rig.trainer.on_micro = lambda step, micro: rig.user_request()  # activity does not pause rl
    assert rig.tick() == State.WINDOW_OPEN
    assert len(rig.trainer.applied) == 2 and rig.trainer.released == []
    assert rig.transitions()[0][2] == "mode rl: the window is always open"

    rig.mode = "skills_only"
    assert rig.tick() == State.IDLE_WAIT
    assert rig.transitions()[-1][2] == "mode skills_only: no training"
    add_samples(rig.buffer, 2, 0, start=10)
    assert rig.tick() == State.IDLE_WAIT and len(rig.trainer.applied) == 2


def test_switching_to_skills_only_mid_run_pauses_between_steps(home: Path) -> None:
    rig = Rig(home, mode="rl")
    add_samples(rig.buffer, 2, 0)

    def switch(step: int, micro: int) -> None:
        if micro == 1:
            rig.mode = "skills_only"
            rig.omls.tick()

    rig.trainer.on_micro = switch
    assert rig.tick() == State.IDLE_WAIT
    assert ("UPDATING", "PAUSING", "mode changed to skills_only") in rig.transitions()
    assert rig.trainer.applied == [] and len(rig.trainer.released) == 1


def test_trainer_failure_is_counted_and_releases_the_lock(rig: Rig) -> None:
    add_samples(rig.buffer, 2, 0)

    def boom(step: int, micro: int) -> None:
        raise RuntimeError("CUDA out of memory")

    rig.trainer.on_micro = boom
    rig.away()
    assert rig.tick() == State.WINDOW_OPEN
    assert rig.omls.errors == {"trainer.run": 1}
    assert rig.transitions()[-1] == ("UPDATING", "WINDOW_OPEN", "the trainer failed: RuntimeError: CUDA out of memory")
    assert rig.lock.holder() is None


def test_a_live_lock_holder_blocks_training_and_a_stale_one_is_taken_over(rig: Rig, home: Path) -> None:
    add_samples(rig.buffer, 2, 0)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        theirs = TrainerLock(home)
        theirs.me = {"pid": other.pid, "host": theirs.me["host"]}
        assert theirs.acquire()
        rig.away()
        assert rig.tick() == State.WINDOW_OPEN
        assert rig.omls.note == f"another process trains on this home (pid {other.pid} on {theirs.me['host']})"
        assert rig.trainer.applied == []
        other.kill()
        other.wait()
        assert rig.tick() == State.WINDOW_OPEN  # its PID is gone: the lock is taken over
        assert len(rig.trainer.applied) == 1
    finally:
        other.kill()


def test_lock_with_an_old_heartbeat_is_stale(home: Path) -> None:
    a, b = TrainerLock(home, stale_s=0.2), TrainerLock(home, stale_s=0.2)
    b.me = {"pid": 1, "host": "another-host"}  # alive or not, another host's PID cannot be checked
    assert b.acquire()
    assert not a.acquire()
    import time

    time.sleep(0.3)
    assert a.acquire() and a.holder() == {**a.me, "heartbeat": a.holder()["heartbeat"]}  # type: ignore[index]
    assert not b.heartbeat()  # b learns it lost the lock
    a.release()
    assert a.holder() is None


def test_the_train_command_refuses_while_another_process_trains_the_home(home: Path) -> None:
    """`metaclaw-plugin train` takes the same lock as the scheduler: never two trainers on one home."""
    from click.testing import CliRunner

    from metaclaw_plugin.cli import main as cli_main

    (home / "config.yaml").write_text("training:\n  base_model: /nonexistent/model\n")
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        theirs = TrainerLock(home)
        theirs.me = {"pid": other.pid, "host": theirs.me["host"]}
        assert theirs.acquire()
        out = CliRunner().invoke(cli_main, ["train"], env={"METACLAW_HOME": str(home)})
        assert out.exit_code == 1
        assert f"another process trains this home (pid {other.pid}" in " ".join(out.output.split())
        assert theirs.holder()["pid"] == other.pid  # type: ignore[index]  # untouched
    finally:
        other.kill()
        other.wait()
    out = CliRunner().invoke(cli_main, ["train"], env={"METACLAW_HOME": str(home)})
    assert out.exit_code == 1 and "another process" not in out.output  # the lock was free: it got to the model
    assert TrainerLock(home).holder() is None  # and released it
