"""End to end: `metaclaw-plugin serve` with mode auto and the local backend on the tiny model; the real scheduler
(short interval) opens a window when the host goes quiet and the real trainer applies a step; a host request that
arrives during the next step is answered at once, and the trainer stops at its next between-micro-batches check,
releasing the batch."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("peft")

from training_support import a_and_b, capture
from waiting import wait_for

from metaclaw_plugin.devtools.tinymodel import build_tiny_model
from metaclaw_plugin.infra.procs import free_port
from metaclaw_plugin.store import Database
from metaclaw_plugin.training import SampleBuffer

REPO = Path(__file__).resolve().parents[2]


def _call(url: str, token: str, body: dict[str, Any] | None = None) -> tuple[float, dict[str, Any]]:
    req = urllib.request.Request(
        url,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=30) as r:
        out = json.loads(r.read())
    return time.perf_counter() - t0, out


def _steps(db_file: Path) -> list[dict[str, Any]]:
    conn = sqlite3.connect(f"file:{db_file}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute("SELECT step, step_seconds FROM train_steps ORDER BY step")]
    finally:
        conn.close()


@pytest.mark.slow
@pytest.mark.perf
def test_real_scheduler_drives_a_real_step_and_a_request_during_the_next_is_not_held(home: Path, tmp_path: Path):
    tiny = build_tiny_model(tmp_path / "tiny", seed=0)
    (home / "config.yaml").write_text(
        yaml.safe_dump(
            {
                "mode": "auto",
                "retrieval": {"mode": "keyword"},
                "training": {
                    "base_model": str(tiny),
                    "device": "cpu",
                    "batch_size": 4,
                    "micro_batch_size": 1,
                    "off_policy": "reinforce",  # captured answers the served policy did not write
                },
                "scheduler": {
                    "interval_seconds": 0.2,
                    "idle_sources": ["host"],
                    "idle_minutes": 0.02,  # 1.2 s without a host request counts as away
                    "present_minutes": 0,
                    "min_window_minutes": 0,
                    "sleep_enabled": False,
                },
            }
        )
    )
    db_file = home / "metaclaw.db"
    # 30 batches of fresh samples: the trainer is still stepping when the request comes, however slow this machine is
    capture(db_file, a_and_b(30))
    port = free_port()
    env = {**os.environ, "METACLAW_HOME": str(home), "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "metaclaw_plugin.cli", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        token_file = home / "server.token"
        died = lambda: proc.poll() is not None and ((proc.stderr.read() if proc.stderr else "") or "exited")  # noqa: E731
        wait_for(
            lambda: _call(base + "/v1/health", token_file.read_text().strip()) or True,
            60,
            "the server",
            0.2,
            ignore=(OSError, ValueError),
            stop=died,
        )
        token = token_file.read_text().strip()

        def live() -> dict[str, Any]:
            return _call(base + "/v1/scheduler", token)[1]

        # the window opens by itself; wait for the first real step to be applied, then for the next to be running
        wait_for(lambda: _steps(db_file) and live()["live"]["state"] == "UPDATING", 240, live)
        sched = live()
        assert sched["attached"] and sched["live"]["scheduler"] == "AsyncIOScheduler" and sched["mode"] == "auto"
        first = _steps(db_file)[0]
        time.sleep(0.3)  # inside the next step
        request_s, out = _call(
            base + "/v1/turns/input",
            token,
            {"session_id": "user-back", "run_id": "r1", "messages": [{"role": "user", "content": "I'm back"}]},
        )
        assert out == {"ok": True}
        wait_for(lambda: live()["live"]["state"] == "IDLE_WAIT", 120, live)
        after = live()
        pause = after["live"]["last_pause"]
        assert pause["reason"] == "user activity: a host request"
        states = [(t["from_state"], t["to_state"]) for t in reversed(after["transitions"])]
        assert states[:4] == [  # the window may open again once the host is quiet for 1.2 s
            ("IDLE_WAIT", "WINDOW_OPEN"),
            ("WINDOW_OPEN", "UPDATING"),
            ("UPDATING", "PAUSING"),
            ("PAUSING", "IDLE_WAIT"),
        ]
        buf = SampleBuffer(Database(db_file)).stats()
        assert buf.pending == 0 and buf.trained == 4 * len(_steps(db_file))  # the interrupted batch went back
        step_s = float(first["step_seconds"])
        assert request_s < min(1.0, step_s / 2), (request_s, step_s)  # answered without waiting for the step
        assert pause["stop_latency_s"] < 1.0 + step_s, pause
        # the mode changes at run time through the real API, and the running server's scheduler applies it at once
        _, out = _call(base + "/v1/mode", token, {"mode": "skills_only"})
        assert out["mode"] == "skills_only" and out["source"] == "stored"
        wait_for(lambda: live()["live"]["mode"] == "skills_only", 5, live)
        print(
            f"\nreal step {step_s:.2f} s; request during a step answered in {request_s * 1000:.0f} ms; "
            f"trainer stopped {pause['stop_latency_s'] * 1000:.0f} ms after the request"
        )
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
