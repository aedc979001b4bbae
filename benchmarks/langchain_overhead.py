"""What MetaClawMiddleware adds to each model call of a create_agent agent.

    python benchmarks/langchain_overhead.py [--calls 1000] [--calls-per-run 4] [--json]

One process, one fake model (the tests' scripted GenericFakeChatModel), the full builtin skill library
in a temporary METACLAW_HOME, and a real create_agent loop with a tool. Each agent run makes
``--calls-per-run`` model calls (tool calls, then an answer), so the conversation grows as it does in use.
Runs with and without the middleware alternate, so both see the same machine state.

Per model call it times two probe middlewares: OUTER (listed first, the outermost wrapper) and INNER
(listed last, right around the model). ``outer - inner`` is the time spent between them:

- with:    [OUTER, MetaClawMiddleware, INNER]  → the middleware's own time per model call
           (retrieval, rendering, message conversion, the journal append of the turn);
- without: [OUTER, INNER]                      → the empty-gap baseline.

It also reports the whole model call (OUTER's duration) and the whole agent run, with and without,
and their ratios. The fake model answers in microseconds, so ratios are an upper bound: against a
real provider (hundreds of ms) the added time is what matters.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from langchain.agents import create_agent  # noqa: E402
from langchain.agents.middleware import AgentMiddleware  # noqa: E402

from metaclaw_langchain import MetaClawMiddleware  # noqa: E402
from metaclaw_plugin import MetaClawPlugin, Settings  # noqa: E402
from metaclaw_plugin.infra.stats import percentile  # noqa: E402
from tests.support.langchain_support import EDIT_TASK, SYSTEM_PROMPT, FakeFiles, ScriptedChatModel, call  # noqa: E402


class Probe(AgentMiddleware):
    """Times its wrap_model_call (ns); the pair of probes brackets whatever sits between them."""

    def __init__(self, name: str):
        super().__init__()
        self._name = name
        self.durations: list[int] = []

    @property
    def name(self) -> str:
        return self._name

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        t0 = time.perf_counter_ns()
        try:
            return handler(request)
        finally:
            self.durations.append(time.perf_counter_ns() - t0)

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        t0 = time.perf_counter_ns()
        try:
            return await handler(request)
        finally:
            self.durations.append(time.perf_counter_ns() - t0)


def timed(plugin: MetaClawPlugin, hook: str) -> list[int]:
    """Replace ``plugin.<hook>`` on the instance with a timing wrapper; return its list of durations."""
    orig = getattr(plugin, hook)
    out: list[int] = []

    def wrapper(*a: Any, **k: Any) -> Any:
        t0 = time.perf_counter_ns()
        try:
            return orig(*a, **k)
        finally:
            out.append(time.perf_counter_ns() - t0)

    setattr(plugin, hook, wrapper)
    return out


def summary(values_ns: list[float]) -> dict[str, float]:
    ms = [v / 1e6 for v in values_ns]
    return {
        "n": len(ms),
        "p50_ms": round(percentile(ms, 50), 4),
        "p99_ms": round(percentile(ms, 99), 4),
        "mean_ms": round(statistics.fmean(ms), 4) if ms else float("nan"),
    }


def script(calls_per_run: int) -> list[Any]:
    steps: list[Any] = [call("read_file", {"path": "settings.ini"}, f"r{i}") for i in range(calls_per_run - 1)]
    return [*steps, "Done: port set to 8080, backup kept."]


class Setup:
    def __init__(self, with_mw: bool, plugin: MetaClawPlugin, calls_per_run: int):
        self.outer, self.inner = Probe("Outer"), Probe("Inner")
        self.model = ScriptedChatModel(messages=itertools.cycle(script(calls_per_run)))
        mws: list[Any] = [self.outer, *([MetaClawMiddleware(plugin)] if with_mw else []), self.inner]
        self.agent = create_agent(self.model, FakeFiles().tools(), system_prompt=SYSTEM_PROMPT, middleware=mws)
        self.runs_ns: list[int] = []
        self.n = 0

    def run(self, asynchronous: bool) -> None:
        self.n += 1
        inputs = {"messages": [{"role": "user", "content": EDIT_TASK}]}
        cfg = {"configurable": {"thread_id": f"bench-{id(self)}-{self.n}"}}
        t0 = time.perf_counter_ns()
        if asynchronous:
            asyncio.run(self.agent.ainvoke(inputs, config=cfg))
        else:
            self.agent.invoke(inputs, config=cfg)
        self.runs_ns.append(time.perf_counter_ns() - t0)

    def reset(self) -> None:
        self.outer.durations.clear()
        self.inner.durations.clear()
        self.runs_ns.clear()
        self.model.received.clear()

    def gaps(self) -> list[int]:
        return [o - i for o, i in zip(self.outer.durations, self.inner.durations)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=1000, help="model calls measured per configuration")
    ap.add_argument("--calls-per-run", type=int, default=4, help="model calls per agent run (tool calls + answer)")
    ap.add_argument("--warmup-runs", type=int, default=20)
    ap.add_argument("--async", dest="asynchronous", action="store_true", help="use ainvoke instead of invoke")
    ap.add_argument("--json", action="store_true", help="print one JSON document")
    ap.add_argument(
        "--breakdown",
        action="store_true",
        help="also time the core hooks the middleware calls (adds a few microseconds per call)",
    )
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="metaclaw-bench-") as home:
        plugin = MetaClawPlugin(Settings(home=Path(home))).start()  # seeds the full builtin library
        hook_ns: dict[str, list[int]] = {}
        if args.breakdown:
            for hook in ("prepare_turn", "complete_turn", "on_session_end"):
                hook_ns[hook] = timed(plugin, hook)
        try:
            with_mw = Setup(True, plugin, args.calls_per_run)
            without = Setup(False, plugin, args.calls_per_run)
            for _ in range(args.warmup_runs):
                with_mw.run(args.asynchronous)
                without.run(args.asynchronous)
            with_mw.reset()
            without.reset()
            for v in hook_ns.values():
                v.clear()
            runs = -(-args.calls // args.calls_per_run)
            gc.collect()
            for _ in range(runs):  # alternate, so both configurations see the same machine state
                with_mw.run(args.asynchronous)
                without.run(args.asynchronous)
            injected = sum(1 for msgs in with_mw.model.received if "<metaclaw-skills>" in str(msgs[0].content))
            plugin.flush(30)
            status = plugin.status()
        finally:
            plugin.stop()

    n = args.calls
    added = summary(with_mw.gaps()[:n])
    base_gap = summary(without.gaps()[:n])
    call_with = summary(with_mw.outer.durations[:n])
    call_without = summary(without.outer.durations[:n])
    run_with = summary(with_mw.runs_ns)
    run_without = summary(without.runs_ns)
    result = {
        "benchmark": "langchain_middleware_overhead",
        "mode": "ainvoke" if args.asynchronous else "invoke",
        "model_calls": n,
        "calls_per_run": args.calls_per_run,
        "skills_in_library": status["skills"]["total"],
        "calls_injected": injected,
        "middleware_added_per_call": added,
        "empty_gap_baseline_per_call": base_gap,
        "model_call_with": call_with,
        "model_call_without": call_without,
        "model_call_ratio": {
            "p50": round(call_with["p50_ms"] / call_without["p50_ms"], 3),
            "p99": round(call_with["p99_ms"] / call_without["p99_ms"], 3),
        },
        "agent_run_with": run_with,
        "agent_run_without": run_without,
        "agent_run_ratio": {
            "p50": round(run_with["p50_ms"] / run_without["p50_ms"], 3),
            "p99": round(run_with["p99_ms"] / run_without["p99_ms"], 3),
        },
        "core_hooks": {k: summary(v) for k, v in hook_ns.items()},
        "plugin_errors": status["errors"],
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(
        f"MetaClawMiddleware overhead, {n} model calls per configuration ({result['mode']}, "
        f"{args.calls_per_run} calls per agent run, {result['skills_in_library']} skills, "
        f"{injected} calls injected)"
    )
    print(
        f"  added by the middleware per model call: p50 {added['p50_ms']:.3f} ms   p99 {added['p99_ms']:.3f} ms"
        f"   (empty-gap baseline p50 {base_gap['p50_ms']:.3f} / p99 {base_gap['p99_ms']:.3f} ms)"
    )
    print(
        f"  model call  with {call_with['p50_ms']:.3f} / {call_with['p99_ms']:.3f} ms   "
        f"without {call_without['p50_ms']:.3f} / {call_without['p99_ms']:.3f} ms   "
        f"ratio p50 {result['model_call_ratio']['p50']:.2f}x  p99 {result['model_call_ratio']['p99']:.2f}x"
    )
    print(
        f"  agent run   with {run_with['p50_ms']:.3f} / {run_with['p99_ms']:.3f} ms   "
        f"without {run_without['p50_ms']:.3f} / {run_without['p99_ms']:.3f} ms   "
        f"ratio p50 {result['agent_run_ratio']['p50']:.2f}x  p99 {result['agent_run_ratio']['p99']:.2f}x"
    )
    for k, v in result["core_hooks"].items():
        print(f"    of which core {k}: p50 {v['p50_ms']:.3f} ms   p99 {v['p99_ms']:.3f} ms   (n={v['n']})")
    if status["errors"]:
        print(f"  plugin errors: {status['errors']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
