#!/usr/bin/env python
"""The metaclaw callback's own CPU per request inside a real LiteLLM proxy, hook by hook.

    python benchmarks/litellm_overhead.py [--requests 400] [--concurrency 4] [--skills 1000] [--json]

``metaclaw-plugin bench overhead`` compares whole proxies, with and without the callback. There LiteLLM's
own CPU per request (~25 ms for JSON, ~60 ms for SSE on a 2-core machine) swings by more than the
callback costs, so a sub-millisecond difference needs many rounds. This script measures the callback
directly: it runs the proxy with a subclass of ``MetaClawCallback`` that sums the CPU time of the
event-loop thread (``time.thread_time``) spent inside each hook, under a steady load, and reports
microseconds per request per hook, for JSON and for SSE replies. LiteLLM's own work between the hooks
keeps the caches cold, as in use, so these figures are higher than the same calls in a quiet process.

The measurement does not include what overriding the stream-iterator hook costs LiteLLM itself (it
takes streams off its fast path); ``bench overhead`` shows that as its no-op callback rows.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from metaclaw_bench.overhead import MODEL, REPLY
from metaclaw_bench.retrieval import request_messages, workload
from metaclaw_bench.synth import write_library
from metaclaw_plugin.devtools.proxyrun import (
    ModelSpec,
    launch_proxy,
    measure_async,
    percentile,
    proxy_config,
    start_upstream_process,
    stop_process,
    write_config,
)

# Loaded by the proxy from its working folder (callbacks: ["mc_timed_callback.callback"]).
TIMED_CALLBACK = '''
import gc, json, os, threading, time
from collections import defaultdict
from metaclaw_litellm import MetaClawCallback

CPU = defaultdict(float)
CALLS = defaultdict(int)
PER_CALL = defaultdict(float)  # litellm_call_id -> CPU in all its hooks
GC = {"depth": 0, "t0": 0.0, "in_hooks": 0.0, "thread": None}  # collections that ran inside a hook


def _gc(phase, info):
    if GC["depth"] and threading.get_ident() == GC["thread"]:
        if phase == "start":
            GC["t0"] = time.thread_time()
        else:
            GC["in_hooks"] += time.thread_time() - GC["t0"]


gc.callbacks.append(_gc)


def _call_id(args):
    for a in args:
        if isinstance(a, dict):
            cid = a.get("litellm_call_id") or getattr(a.get("litellm_logging_obj"), "litellm_call_id", None)
            if isinstance(cid, str):
                return cid
    return None


def _start():
    GC["depth"] += 1
    GC["thread"] = threading.get_ident()
    return time.thread_time()


def _add(name, args, t0):
    GC["depth"] -= 1
    dt = time.thread_time() - t0
    CPU[name] += dt
    CALLS[name] += 1
    cid = _call_id(args)
    if cid is not None:
        PER_CALL[cid] += dt


def _timed(name):
    """The parent's hook, with the CPU time of the calling thread added up under its name and its call
    (the hooks never suspend, so nothing else runs between the two readings)."""
    async def hook(self, *a, **k):
        t0 = _start()
        try:
            return await getattr(MetaClawCallback, name)(self, *a, **k)
        finally:
            _add(name, a + tuple(k.values()), t0)  # the proxy passes some hooks' arguments by name

    hook.__name__ = name
    return hook


class TimedCallback(MetaClawCallback):
    \"\"\"Each hook's CPU on the calling thread. The stream hook's chunks pass through untimed (a list
    append each); its end, where the turn is assembled and written, is ``_record_stream``. LiteLLM looks
    hooks up in the class's own ``vars``, so each is a class attribute here.\"\"\"

    async_pre_call_hook = _timed("async_pre_call_hook")
    async_post_call_success_hook = _timed("async_post_call_success_hook")
    async_pre_call_deployment_hook = _timed("async_pre_call_deployment_hook")
    async_post_call_success_deployment_hook = _timed("async_post_call_success_deployment_hook")
    async_log_success_event = _timed("async_log_success_event")

    async def async_post_call_streaming_iterator_hook(self, user_api_key_dict, response, request_data):
        async for item in super().async_post_call_streaming_iterator_hook(user_api_key_dict, response, request_data):
            yield item

    def _record_stream(self, *a, **k):
        t0 = _start()
        try:
            return super()._record_stream(*a, **k)
        finally:
            _add("stream end (_record_stream)", [{"litellm_call_id": a[0]}], t0)


def _dump():
    out = os.environ["MC_TIMED_OUT"]
    while True:
        time.sleep(0.25)
        tmp = out + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"cpu_s": dict(CPU), "calls": dict(CALLS), "per_call": dict(PER_CALL),
                       "gc_in_hooks_s": GC["in_hooks"]}, f)
        os.replace(tmp, out)


threading.Thread(target=_dump, daemon=True, name="mc-timed-dump").start()
callback = TimedCallback(start=True)
'''


def _read(path: Path) -> dict[str, Any]:
    for _ in range(40):
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError):
            time.sleep(0.1)
    raise RuntimeError(f"no timing file at {path}")


def _settled(path: Path) -> dict[str, Any]:
    """The counters once they stop moving (the last turn's store write and the dump interval)."""
    time.sleep(0.6)
    return _read(path)


def measure_mode(
    stream: bool, *, scratch: Path, upstream_url: str, requests: int, concurrency: int, warmup: int, env: dict[str, str]
) -> dict[str, Any]:
    name = "sse" if stream else "json"
    folder = scratch / name
    folder.mkdir()
    (folder / "mc_timed_callback.py").write_text(TIMED_CALLBACK)
    out = folder / "timing.json"
    spec = [ModelSpec(f"openai/{MODEL}", name=MODEL, api_base=upstream_url, api_key="x")]
    cfg = write_config(
        folder / "config.yaml",
        proxy_config(spec, callbacks=["mc_timed_callback.callback"], litellm_settings={"num_retries": 0}),
    )
    proxy = launch_proxy(cfg, env={**env, "MC_TIMED_OUT": str(out)}, log_path=folder / "proxy.log", cwd=folder)
    try:
        proxy.wait_ready(300)
        texts = workload(warmup + requests, seed=29)

        def body(i: int) -> dict[str, Any]:
            b: dict[str, Any] = {"model": MODEL, "messages": request_messages(texts[i]), "max_tokens": 128}
            if stream:
                b["stream"] = True
            return b

        def headers(i: int) -> dict[str, str]:
            return proxy.headers(**{"X-Session-Id": f"timed-{i % concurrency}", "X-Turn-Type": "main"})

        url = proxy.url + "/chat/completions"
        asyncio.run(measure_async(url, n=warmup, concurrency=concurrency, body=body, headers=headers))
        before = _settled(out)
        run = asyncio.run(
            measure_async(url, n=requests, concurrency=concurrency, body=lambda i: body(warmup + i), headers=headers)
        )
        after = _settled(out)
    finally:
        proxy.stop()
    done = len(run.latencies_ms)
    hooks = {}
    for hook, cpu in after["cpu_s"].items():
        calls = after["calls"][hook] - before["calls"].get(hook, 0)
        spent = cpu - before["cpu_s"].get(hook, 0.0)
        if calls:
            hooks[hook] = {"calls_per_request": round(calls / done, 2), "us_per_request": round(spent / done * 1e6, 1)}
    total = round(sum(h["us_per_request"] for h in hooks.values()), 1)
    # Per request: the CPU of all its hooks. At one client at a time this is the latency the callback adds.
    per = [v for cid, v in after["per_call"].items() if cid not in before["per_call"]]
    dist = {
        "requests": len(per),
        **{f"p{q}": round(percentile(per, q) * 1e6, 1) if per else float("nan") for q in (50, 90, 99)},
    }
    gc_us = (after["gc_in_hooks_s"] - before["gc_in_hooks_s"]) / done * 1e6
    return {
        "mode": name,
        "requests": done,
        "errors": run.errors,
        "first_error": run.first_error,
        "hooks": hooks,
        "total_us_per_request": total,
        "per_request_us": dist,
        "gc_in_hooks_us_per_request": round(gc_us, 1),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    scratch = Path(tempfile.mkdtemp(prefix="mc-hook-cpu-"))
    home = scratch / "home"
    write_library(home / "skills", args.skills)
    up, port = start_upstream_process(reply=REPLY, log_path=scratch / "upstream.log", number_replies=True)
    env = dict(
        os.environ,
        METACLAW_HOME=str(home),
        METACLAW_EVOLUTION__ENABLED="false",
        METACLAW_REWARD__ENABLED="false",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
    )
    try:
        modes = [
            measure_mode(
                stream,
                scratch=scratch,
                upstream_url=f"http://127.0.0.1:{port}/v1",
                requests=args.requests,
                concurrency=args.concurrency,
                warmup=args.warmup,
                env=env,
            )
            for stream in (False, True)
        ]
    finally:
        stop_process(up)
    return {
        "benchmark": "litellm_hook_cpu",
        "skills": args.skills,
        "concurrency": args.concurrency,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "modes": modes,
    }


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"The callback's own event-loop CPU per request inside the proxy ({result['skills']} skills, "
        f"{result['concurrency']} concurrent clients):",
        "",
        "| hook | JSON µs/request | SSE µs/request |",
        "|---|---:|---:|",
    ]
    by_mode = {m["mode"]: m for m in result["modes"]}
    names = sorted({h for m in result["modes"] for h in m["hooks"]})
    for h in names:
        cells = [by_mode[m]["hooks"].get(h, {}).get("us_per_request") for m in ("json", "sse")]
        lines.append(f"| {h} | " + " | ".join("—" if c is None else f"{c:.0f}" for c in cells) + " |")
    lines.append(
        "| **total (mean)** | "
        + " | ".join(f"**{by_mode[m]['total_us_per_request']:.0f}**" for m in ("json", "sse"))
        + " |"
    )
    lines.append(
        "| of which garbage collection | "
        + " | ".join(f"{by_mode[m]['gc_in_hooks_us_per_request']:.0f}" for m in ("json", "sse"))
        + " |"
    )
    for q in ("p50", "p90", "p99"):
        lines.append(
            f"| one request's hooks, {q} | "
            + " | ".join(f"{by_mode[m]['per_request_us'][q]:.0f}" for m in ("json", "sse"))
            + " |"
        )
    for m in result["modes"]:
        if m["errors"]:
            lines.append(f"\n{m['mode']}: {m['errors']} errors, first: {m['first_error']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=400)
    ap.add_argument("--warmup", type=int, default=60)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--skills", type=int, default=1000)
    ap.add_argument("--json", action="store_true", help="Print the result as JSON.")
    args = ap.parse_args(argv)
    result = run(args)
    print(json.dumps(result, indent=1) if args.json else markdown(result))
    bad = [m for m in result["modes"] if m["errors"] or not m["hooks"]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
