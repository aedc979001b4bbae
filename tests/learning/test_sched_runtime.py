"""The scheduler for real: APScheduler ticks, a host request pauses training at once, the mode changes at run
time through the CLI and the API, and two processes on one home never train at once. The fake trainer (the slow
loop's contract, on the real SampleBuffer) stands in for the trainer here; test_sched_e2e.py uses the real one."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from sched_support import FakeTrainer, add_samples
from starlette.testclient import TestClient
from waiting import async_wait_for
from waiting import wait_for as _wait_for

from metaclaw_plugin import MetaClawPlugin, Settings
from metaclaw_plugin.scheduling.attach import attach_scheduler
from metaclaw_plugin.scheduling.omls import Omls, State
from metaclaw_plugin.sidecar import create_app, load_or_create_token
from metaclaw_plugin.store import Database
from metaclaw_plugin.training import SampleBuffer
from metaclaw_plugin.types import TurnContext

REPO = Path(__file__).resolve().parents[2]
FAST = {
    "interval_seconds": 0.1,
    "idle_sources": ["host"],
    "idle_minutes": 0.005,  # 0.3 s without a host request counts as away
    "present_minutes": 0,
    "min_window_minutes": 0,
    "sleep_enabled": False,
}


wait_for = partial(_wait_for, step=0.01)  # the runtime's transitions are a few ms apart


def start(home: Path, mode: str, trainer_kw: dict[str, Any], samples: int = 20):
    plugin = MetaClawPlugin(Settings(home=home, mode=mode, scheduler=FAST)).start()
    buf = SampleBuffer(Database(plugin.settings.db_file))
    add_samples(buf, samples, 0)
    trainer = FakeTrainer(buf, **trainer_kw)
    omls = attach_scheduler(plugin, lambda: trainer)
    assert isinstance(omls, Omls)
    return plugin, buf, trainer, omls


@pytest.mark.perf
def test_a_host_request_pauses_training_between_steps_without_waiting(home: Path) -> None:
    plugin, buf, trainer, omls = start(home, "auto", {"batch_size": 2, "micro": 4, "step_s": 0.1})
    try:
        assert omls.status()["scheduler"] == "BackgroundScheduler"
        wait_for(lambda: omls.state == State.UPDATING and trainer.steps >= 1, what="training to start")
        t0 = time.perf_counter()
        out = plugin.on_request(TurnContext(session_id="s1"), [{"role": "user", "content": "hello"}])
        request_s = time.perf_counter() - t0
        wait_for(lambda: omls.training is not None and not omls.training.running, what="the trainer to stop")
        stopped_s = time.perf_counter() - t0
        assert out[-1]["content"] == "hello" and request_s < 0.2  # never waits for the step (0.4 s)
        assert stopped_s < 1.0 + 4 * 0.1  # under 1 s plus the rest of the current step
        assert omls.last_pause is not None and omls.last_pause["reason"] == "user activity: a host request"
        assert trainer.released and buf.stats().pending == 0  # the unapplied batch went back to the buffer
        rows = Database(plugin.settings.db_file).query("SELECT from_state, to_state FROM sched_transitions")
        assert ("UPDATING", "PAUSING") in [(r[0], r[1]) for r in rows]
        print(
            f"\nactivity -> trainer stopped: {stopped_s * 1000:.0f} ms (micro-batch 100 ms); request {request_s * 1e3:.2f} ms"
        )
    finally:
        plugin.stop()


@contextlib.contextmanager
def another_plugins_request(home: Path) -> Iterator[tuple[float, MetaClawPlugin, Omls]]:
    """Training under way; a request through another plugin on the same home (e.g. another proxy worker: it shares
    only the home). Yields the seconds until the trainer stopped, the training plugin and its scheduler."""
    plugin, _, trainer, omls = start(home, "auto", {"batch_size": 2, "micro": 4, "step_s": 0.1})
    other = MetaClawPlugin(Settings(home=home)).start()
    try:
        wait_for(lambda: omls.state == State.UPDATING and trainer.steps >= 1, what="training to start")
        t0 = time.perf_counter()
        other.on_request(TurnContext(session_id="s2"), [{"role": "user", "content": "hello"}])
        wait_for(lambda: omls.training is not None and not omls.training.running, what="the trainer to stop")
        yield time.perf_counter() - t0, plugin, omls
    finally:
        other.stop()
        plugin.stop()


def test_a_request_to_another_plugin_on_the_home_pauses_training_too(home: Path) -> None:
    with another_plugins_request(home) as (_, plugin, omls):
        assert omls.last_pause is not None and omls.last_pause["reason"] == "user activity: a host request"
        assert plugin.last_request_at == 0.0  # nothing came through this process's plugin


@pytest.mark.perf
def test_another_plugins_request_stops_training_at_the_next_check(home: Path) -> None:
    with another_plugins_request(home) as (stopped_s, _, _):
        assert stopped_s < 1.0 + 0.4  # the activity file's mtime, seen at the next check


def test_async_host_gets_an_asyncio_scheduler_and_a_thread_when_its_loop_ends(home: Path) -> None:
    async def main() -> tuple[Any, str, int]:
        plugin, buf, trainer, _ = start(home, "rl", {"batch_size": 2, "micro": 1}, samples=4)
        await async_wait_for(lambda: trainer.steps == 2, 4, "two training steps", 0.02)
        return (plugin, buf, trainer), plugin.scheduler.status()["scheduler"], trainer.steps

    (plugin, buf, trainer), kind, steps = asyncio.run(main())
    try:
        assert (kind, steps) == ("AsyncIOScheduler", 2)
        # the loop is gone (as after an SDK script's asyncio.run): the scheduler still ticks, on a thread
        assert plugin.scheduler.status()["scheduler"] == "BackgroundScheduler"
        add_samples(buf, 2, 0, start=100)
        wait_for(lambda: trainer.steps == 3, what="a tick after the loop ended")
    finally:
        plugin.stop()


def test_mode_switch_through_the_cli_and_the_api_is_picked_up_by_a_running_plugin(home: Path) -> None:
    (home / "config.yaml").write_text("mode: skills_only\n")  # what the CLI in another process reads
    plugin, _, trainer, omls = start(home, "skills_only", {"batch_size": 2, "micro": 1})
    try:
        time.sleep(0.4)
        assert omls.mode == "skills_only" and trainer.steps == 0
        env = {**os.environ, "METACLAW_HOME": str(home), "PYTHONPATH": str(REPO)}
        cli = [sys.executable, "-m", "metaclaw_plugin.cli"]
        out = subprocess.run([*cli, "mode", "rl", "--json"], env=env, capture_output=True, text=True, check=True)
        assert json.loads(out.stdout)["mode"] == "rl" and json.loads(out.stdout)["source"] == "stored"
        wait_for(lambda: omls.mode == "rl" and trainer.steps > 0, what="the CLI's mode to be picked up")
        shown = subprocess.run([*cli, "mode"], env=env, capture_output=True, text=True, check=True).stdout
        assert "rl (set at run time" in shown and "config says skills_only" in shown

        token = load_or_create_token(home)
        client = TestClient(create_app(plugin, token))
        auth = {"Authorization": f"Bearer {token}"}
        assert client.put("/v1/mode", json={"mode": "auto"}).status_code == 401
        bad = client.put("/v1/mode", json={"mode": "turbo"}, headers=auth)
        assert bad.status_code == 422 and "mode" in bad.json()["error"]
        r = client.put("/v1/mode", json={"mode": "skills_only"}, headers=auth)
        assert r.status_code == 200 and r.json()["mode"] == "skills_only" and r.json()["source"] == "stored"
        wait_for(lambda: omls.mode == "skills_only", timeout=2, what="the API's mode (wake, not the next tick)")
        wait_for(lambda: omls.state == State.IDLE_WAIT, what="the window to shut")
        got = client.get("/v1/scheduler", headers=auth).json()
        assert got["attached"] and got["live"]["state"] == "IDLE_WAIT" and got["transitions"]
        assert client.get("/v1/mode", headers=auth).json()["mode"] == "skills_only"
        st = json.loads(
            subprocess.run(
                [*cli, "scheduler", "status", "--json"], env=env, capture_output=True, text=True, check=True
            ).stdout
        )
        assert st["state"]["state"] == "IDLE_WAIT" and st["transitions"][0]["to_state"] == "IDLE_WAIT"
    finally:
        plugin.stop()


CHILD = textwrap.dedent(
    """
    import json, os, sqlite3, sys, time
    from pathlib import Path
    from metaclaw_plugin import MetaClawPlugin, Settings
    from metaclaw_plugin.scheduling.attach import attach_scheduler
    from metaclaw_plugin.store import Database
    from metaclaw_plugin.training import SampleBuffer
    from sched_support import FakeTrainer

    home, fast, total = Path(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3])
    plugin = MetaClawPlugin(Settings(home=home, mode="rl", scheduler=fast)).start()
    trainer = FakeTrainer(SampleBuffer(Database(plugin.settings.db_file)), batch_size=1, micro=2, step_s=0.03,
                          log_file=home / "steps.db")
    # Both processes attach together (a slow start under load must not let one train everything alone), and each
    # runs until every sample is trained, not for a fixed time.
    (home / f"ready-{os.getpid()}").touch()
    deadline = time.time() + 90
    while len(list(home.glob("ready-*"))) < 2 and time.time() < deadline:
        time.sleep(0.01)
    omls = attach_scheduler(plugin, lambda: trainer)

    def trained() -> int:
        try:
            with sqlite3.connect(home / "steps.db", timeout=30) as c:
                return int(c.execute("SELECT COUNT(*) FROM steps").fetchone()[0])
        except sqlite3.OperationalError:  # no step yet: the table is made by the first
            return 0

    notes = set()
    while trained() < total and time.time() < deadline:
        if omls.note:
            notes.add(omls.note.split(" (")[0])
        time.sleep(0.01)
    plugin.stop()
    print(json.dumps({"steps": trainer.steps, "notes": sorted(notes)}))
    """
)


@pytest.mark.slow
def test_two_processes_on_one_home_never_train_at_once(home: Path) -> None:
    Settings(home=home)
    add_samples(SampleBuffer(Database(home / "metaclaw.db")), 40, 0)
    env = {**os.environ, "METACLAW_HOME": str(home), "PYTHONPATH": f"{REPO}{os.pathsep}{REPO / 'tests' / 'support'}"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(home), json.dumps(FAST), "40"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=180)
        assert p.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    with sqlite3.connect(home / "steps.db") as c:
        steps = c.execute("SELECT pid, t0, t1 FROM steps ORDER BY t0").fetchall()
    assert sum(r["steps"] for r in results) == len(steps) == 40  # every sample trained exactly once
    for pa, a0, a1 in steps:
        for pb, b0, b1 in steps:
            assert pa == pb or b1 <= a0 or b0 >= a1, f"pid {pa} and pid {pb} trained at once"
    assert any("another process trains on this home" in r["notes"] for r in results), results


def test_without_a_trainer_the_api_says_why_and_nothing_trains(home: Path) -> None:
    plugin = MetaClawPlugin(Settings(home=home, mode="auto", scheduler=FAST)).start()
    try:
        assert plugin.scheduler is None and plugin.scheduler_note == "training.base_model is not set (local backend)"
        token = load_or_create_token(home)
        client = TestClient(create_app(plugin, token))
        got = client.get("/v1/scheduler", headers={"Authorization": f"Bearer {token}"}).json()
        assert got["attached"] is False and got["trains"] is False and got["mode"] == "auto"
        assert got["training_blocker"] == plugin.scheduler_note and got["note"] == plugin.scheduler_note
        assert set(got["signals"]) == {"host"} and got["state"] is None
        assert plugin.status()["scheduler"] is None
    finally:
        plugin.stop()


def test_an_unwritable_activity_file_never_fails_a_request(home: Path) -> None:
    plugin = MetaClawPlugin(Settings(home=home)).start()
    try:
        plugin.turns.activity_file = home / "missing-dir" / "activity"  # cannot be created
        out = plugin.on_request(TurnContext(session_id="s"), [{"role": "user", "content": "hi"}])
        assert plugin.worker.wait_idle(5)  # the worker touches the file, off the request path
        assert out[-1]["content"] == "hi" and plugin.errors == {"activity.mark": 1}
        plugin.on_request(TurnContext(session_id="s"), [{"role": "user", "content": "again"}])
        assert plugin.worker.wait_idle(5)
        assert plugin.errors == {"activity.mark": 1} and plugin.last_request_at > 0  # reported once
    finally:
        plugin.stop()
