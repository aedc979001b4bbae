#!/usr/bin/env python
"""The scheduler's two figures (issue 16), from one run each:

1. **Activity -> trainer stopped**: a real plugin with the real APScheduler scheduler in ``auto`` trains; a host
   request (``plugin.on_request``) arrives at a random point of a step; we time from the request to the trainer's
   thread ending, and the request itself. Reported with the micro-batch time, since the pause lands at the next
   between-micro-batches check (the target: under 1 s plus the rest of the current step).
2. **CPU while idle**: the process's CPU time over ``--seconds`` with the plugin alone, then with the scheduler
   attached and the window shut (the user counts as present), ticking every ``--interval`` s; the difference per
   tick, and what that is at the default 60 s interval.

    python benchmarks/scheduler_figures.py [--pauses 20] [--micro-ms 50] [--seconds 30] [--interval 1] [--json]
    python benchmarks/scheduler_figures.py --local     # the real trainer on the tiny model

The default trainer is the slow loop's contract on the real SampleBuffer (tests/support/sched_support.FakeTrainer,
micro-batches of ``--micro-ms``), so the figure is the scheduler's; ``--local`` trains the tiny model for real.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

from sched_support import FakeTrainer, add_samples
from training_support import a_and_b, capture

from metaclaw_plugin import MetaClawPlugin, Settings
from metaclaw_plugin.scheduling.attach import attach_scheduler
from metaclaw_plugin.scheduling.omls import State
from metaclaw_plugin.store import Database
from metaclaw_plugin.training import SampleBuffer
from metaclaw_plugin.types import TurnContext


def _wait(pred: Any, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > end:
            raise TimeoutError("the scheduler did not get there")
        time.sleep(0.002)


def pause_latency(pauses: int, micro_ms: float, local: bool) -> dict[str, Any]:
    """With ``local``, the real trainer (local PEFT backend) on the tiny model: batches of 4, micro-batches of 1."""
    home = Path(tempfile.mkdtemp(prefix="mc-sched-"))
    sched = {"interval_seconds": 0.2, "idle_sources": ["host"], "idle_minutes": 0.005, "present_minutes": 0,
             "min_window_minutes": 0, "sleep_enabled": False}  # fmt: skip
    training: dict[str, Any] = {}
    if local:
        from metaclaw_plugin.devtools.tinymodel import build_tiny_model

        tiny = build_tiny_model(home / "tiny")
        training = {"base_model": str(tiny), "device": "cpu", "batch_size": 4, "micro_batch_size": 1}
    settings = Settings(
        home=home / "home", mode="auto", scheduler=sched, training=training, retrieval={"mode": "keyword"}
    )
    plugin = MetaClawPlugin(settings).start()
    fake: FakeTrainer | None = None
    if local:
        capture(settings.db_file, a_and_b(pauses * 3 + 4))
        omls = attach_scheduler(plugin)  # the real trainer, as plugin.start attaches it
    else:
        buf = SampleBuffer(Database(settings.db_file))
        add_samples(buf, 10_000, 0)
        fake = FakeTrainer(buf, batch_size=2, micro=4, step_s=micro_ms / 1000)
        omls = attach_scheduler(plugin, lambda: fake)  # type: ignore[arg-type,return-value]
    assert omls is not None
    rng = random.Random(16)
    stop_ms, req_ms = [], []
    try:
        for i in range(pauses):
            _wait(lambda: omls.state == State.UPDATING, timeout=300)
            time.sleep(rng.uniform(0.05, 4 * micro_ms / 1000))  # somewhere inside a step
            t0 = time.perf_counter()
            plugin.on_request(TurnContext(session_id=f"s{i}"), [{"role": "user", "content": "back"}])
            req_ms.append((time.perf_counter() - t0) * 1000)
            w = omls.training
            assert w is not None
            w.join(60)
            stop_ms.append((time.perf_counter() - t0) * 1000)
        step_ms = 4 * micro_ms
        if local:  # the trainer's own record of a whole step (4 micro-batches, the optimiser step, publishing)
            rows = omls.db.query("SELECT step_seconds FROM train_steps")
            step_ms = statistics.median(float(r[0]) for r in rows) * 1000
    finally:
        plugin.stop()
    return {
        "trainer": "local PEFT, tiny model" if local else "fake",
        "pauses": pauses,
        "step_ms_p50": round(step_ms, 1),
        "stop_ms_p50": round(statistics.median(stop_ms), 1),
        "stop_ms_max": round(max(stop_ms), 1),
        "stop_over_step_max": round(max(stop_ms) / step_ms, 2),
        "request_ms_p50": round(statistics.median(req_ms), 3),
        "request_ms_max": round(max(req_ms), 3),
    }


def idle_cpu(seconds: float, interval: float) -> dict[str, Any]:
    def run(with_scheduler: bool) -> float:
        home = Path(tempfile.mkdtemp(prefix="mc-sched-"))
        sched = {"interval_seconds": interval, "idle_sources": ["host"], "sleep_enabled": False}
        plugin = MetaClawPlugin(
            Settings(home=home, mode="auto", scheduler=sched, retrieval={"mode": "keyword"})
        ).start()
        buf = SampleBuffer(Database(plugin.settings.db_file))
        omls = attach_scheduler(plugin, lambda: FakeTrainer(buf)) if with_scheduler else None
        time.sleep(1.0)
        c0 = time.process_time()
        time.sleep(seconds)
        cpu = time.process_time() - c0
        if omls is not None:
            assert omls.state == State.IDLE_WAIT and omls.decision is not None  # ticking, window shut
        plugin.stop()
        return cpu

    base = run(False)
    with_s = run(True)
    ticks = seconds / interval
    per_tick_ms = max(0.0, with_s - base) / ticks * 1000
    return {
        "seconds": seconds,
        "interval_s": interval,
        "cpu_s_plugin_alone": round(base, 4),
        "cpu_s_with_scheduler": round(with_s, 4),
        "scheduler_cpu_ms_per_tick": round(per_tick_ms, 3),
        "scheduler_cpu_percent_at_60s_interval": round(per_tick_ms / 1000 / 60 * 100, 5),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pauses", type=int, default=20)
    ap.add_argument("--micro-ms", type=float, default=50.0)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--local", action="store_true", help="the real trainer (local backend) on the tiny model")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    idle = idle_cpu(a.seconds, a.interval)  # first: a trained model's threads would add to the process's CPU
    out = {"pause": pause_latency(a.pauses, a.micro_ms, a.local), "idle": idle}
    if a.json:
        print(json.dumps(out, indent=2))
        return
    p, i = out["pause"], out["idle"]
    print("| figure | value |\n|---|---:|")
    print(
        f"| activity -> trainer stopped, p50 / max (ms; {p['trainer']} trainer, a step {p['step_ms_p50']:.0f} ms) | {p['stop_ms_p50']} / {p['stop_ms_max']} |"
    )
    print(f"| the host request itself, p50 / max (ms) | {p['request_ms_p50']} / {p['request_ms_max']} |")
    print(
        f"| scheduler CPU per tick while idle (ms; {i['seconds']:.0f} s at {i['interval_s']} s) | {i['scheduler_cpu_ms_per_tick']} |"
    )
    print(
        f"| scheduler CPU at the default 60 s interval (% of one core) | {i['scheduler_cpu_percent_at_60s_interval']} |"
    )


if __name__ == "__main__":
    main()
