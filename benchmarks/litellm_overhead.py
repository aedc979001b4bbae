#!/usr/bin/env python
"""Added latency and throughput cost of the metaclaw callback inside a real LiteLLM proxy.

Two proxies with the same config, one with ``callbacks: ["metaclaw_litellm.callback"]`` (1k skills in its
library) and one without, both in front of the same local upstream, plus the upstream directly for
reference. The targets are measured interleaved (round-robin, rotating the order every round), at 1
and 32 concurrent clients, over keep-alive connections. Reports p50/p99 per target, their ratios,
the added p50, and throughput.

    python benchmarks/litellm_overhead.py                 # JSON responses, 1 and 32 clients
    python benchmarks/litellm_overhead.py --mode sse      # streamed responses
    python benchmarks/litellm_overhead.py --quick         # a smoke run

The measuring parts live in :mod:`metaclaw_plugin.devtools.proxyrun` (``start_proxy``, ``measure_async``,
``summarize``) so that ``metaclaw-plugin bench`` can reuse them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from metaclaw_plugin.devtools.proxyrun import (
    ModelSpec,
    launch_proxy,
    measure_async,
    percentile,
    process_cpu_seconds,
    proxy_config,
    start_upstream_process,
    stop_process,
    summarize,
    write_config,
)

MODEL = "stub-model"
SYSTEM = (
    "You are a careful engineering assistant working in the user's repository. Follow the user's "
    "conventions, keep answers short, say what you changed and why, and never invent tool output. "
) * 8  # ~1.5 KB, a modest agent system prompt


NULL_CALLBACK = '''"""The metaclaw LiteLLM callback over a plugin that does nothing: LiteLLM's and the adapter's share."""
from metaclaw_litellm import MetaClawCallback


class NullPlugin:
    started = True

    def start(self):
        return self

    def on_request(self, ctx, messages):
        return list(messages)

    def record_request(self, ctx, messages, injected_skills=None):
        pass

    def on_response(self, ctx, response, **kw):
        pass

    def on_session_end(self, ctx, outcome=None, reason="host"):
        pass


callback = MetaClawCallback(plugin=NullPlugin())
'''


def learning_env(learning: str) -> dict[str, str]:
    """``off``: no reward judge or skill evolution listeners, so only the request path and the store run."""
    return {"METACLAW_EVOLUTION__ENABLED": "false", "METACLAW_REWARD__ENABLED": "false"} if learning == "off" else {}


def build_library(skills_dir: Path, n: int, seed: int = 7) -> int:
    """``n`` skills: the starter ones plus synthetic ones (the bench module's generator when present)."""
    try:
        from metaclaw_plugin.bench.synth import write_library

        return int(write_library(skills_dir, n, seed=seed)["skills"])
    except ImportError:
        pass
    from metaclaw_plugin.skillbank.bank import bundled_skills_dir
    from metaclaw_plugin.skillbank.skillmd import render_skill_md
    from metaclaw_plugin.types import Skill

    skills_dir.mkdir(parents=True, exist_ok=True)
    count = 0
    for d in sorted(bundled_skills_dir().iterdir()):
        if (d / "SKILL.md").is_file() and count < n:
            (skills_dir / d.name).mkdir(exist_ok=True)
            shutil.copyfile(d / "SKILL.md", skills_dir / d.name / "SKILL.md")
            count += 1
    rng = random.Random(seed)
    words = ("file config json csv backup schema migrate deploy retry timeout cache index query token secret "
             "report email meeting test build commit branch merge release docker python sql regex date").split()
    for i in range(n - count):
        w = rng.sample(words, 4)
        name = f"synthetic-{i:05d}-{w[0]}-{w[1]}"
        s = Skill(name=name, description=f"When you {w[0]} the {w[1]} for a {w[2]}, check the {w[3]} first.",
                  body=f"1. Inspect the {w[1]}.\n2. {w[0].title()} it carefully.\n3. Verify the {w[3]}.",
                  category="general", origin="user", status="active")
        (skills_dir / name).mkdir(exist_ok=True)
        (skills_dir / name / "SKILL.md").write_text(render_skill_md(s), "utf-8")
        count += 1
    return count


def queries(n: int, seed: int = 11) -> list[str]:
    try:
        from metaclaw_plugin.bench.synth import synthetic_queries

        return synthetic_queries(n, seed=seed)
    except ImportError:
        rng = random.Random(seed)
        forms = ["Please back up the {0} and then migrate the {1}.", "Validate the {0} schema before the {1} deploy.",
                 "Why does the {0} retry time out when the {1} cache is cold?"]
        words = "config json csv schema cache index query token report build release".split()
        return [rng.choice(forms).format(*rng.sample(words, 2)) for _ in range(n)]


async def _measure_all(targets: dict[str, str], headers: dict[str, dict[str, str]], pids: dict[str, int | None], *,
                       concurrencies: list[int], rounds: int, per_round: dict[int, int], stream: bool,
                       warmup: int) -> dict[str, Any]:
    """Round-robin over the targets (order rotated every round), many short rounds, so that a change in
    the machine's background load hits every target alike. Per target: pooled latencies, throughput,
    and the proxy's CPU time per request (from /proc; the steadiest figure on a shared machine)."""
    import aiohttp

    qs = queries(4096)

    def body(i: int) -> dict[str, Any]:
        b: dict[str, Any] = {"model": MODEL, "messages": [{"role": "system", "content": SYSTEM},
                                                          {"role": "user", "content": qs[i % len(qs)]}]}
        if stream:
            b["stream"] = True
        return b

    def hdrs_for(name: str):
        base = headers[name]
        return lambda i: {**base, "X-Session-Id": f"bench-{i % 64}", "X-Turn-Type": "main"}

    results: dict[str, Any] = {}
    seq = 0
    for c in concurrencies:
        sessions = {name: aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=c), timeout=aiohttp.ClientTimeout(total=300)) for name in targets}
        try:
            for name, url in targets.items():  # warm every connection pool and code path
                await measure_async(url, n=max(warmup, c * 2), concurrency=c, body=body, headers=hdrs_for(name),
                                    session=sessions[name])
            lat: dict[str, list[float]] = {n: [] for n in targets}
            wall = {n: 0.0 for n in targets}
            cpu = {n: 0.0 for n in targets}
            errors = {n: 0 for n in targets}
            first_error: dict[str, str | None] = {n: None for n in targets}
            per_round_p50: dict[str, list[float]] = {n: [] for n in targets}
            names = list(targets)
            for r in range(rounds):
                order = names[r % len(names):] + names[: r % len(names)]
                for name in order:
                    offset = seq
                    seq += per_round[c]
                    pid = pids.get(name)
                    cpu0 = process_cpu_seconds(pid) if pid else None
                    run = await measure_async(targets[name], n=per_round[c], concurrency=c,
                                              body=lambda i, o=offset: body(o + i),
                                              headers=lambda i, o=offset, f=hdrs_for(name): f(o + i),
                                              session=sessions[name])
                    cpu1 = process_cpu_seconds(pid) if pid else None
                    if cpu0 is not None and cpu1 is not None:
                        cpu[name] += cpu1 - cpu0
                    lat[name] += run.latencies_ms
                    wall[name] += run.wall_s
                    errors[name] += run.errors
                    first_error[name] = first_error[name] or run.first_error
                    p50 = percentile(run.latencies_ms, 50)
                    if p50 is not None:
                        per_round_p50[name].append(p50)
        finally:
            for s in sessions.values():
                await s.close()
        per: dict[str, Any] = {}
        for n in targets:
            per[n] = summarize(lat[n], wall[n], errors[n])
            per[n]["cpu_ms_per_request"] = round(cpu[n] * 1000 / len(lat[n]), 3) if pids.get(n) and lat[n] else None
            per[n]["first_error"] = first_error[n]
        results[str(c)] = {"targets": per, "with_vs_without": _compare(per, per_round_p50, "with_plugin")}
        if "adapter_only" in per:
            results[str(c)]["adapter_only_vs_without"] = _compare(per, per_round_p50, "adapter_only")
    return results


def _compare(per: dict[str, Any], per_round_p50: dict[str, list[float]], name: str) -> dict[str, Any]:
    """``name`` against the proxy without the callback."""
    w, wo = per[name], per["without_plugin"]
    diffs = [a - b for a, b in zip(per_round_p50[name], per_round_p50["without_plugin"])]
    return {
        "p50_ratio": _ratio(w["p50_ms"], wo["p50_ms"]),
        "p99_ratio": _ratio(w["p99_ms"], wo["p99_ms"]),
        "added_p50_ms": _diff(w["p50_ms"], wo["p50_ms"]),
        "added_p99_ms": _diff(w["p99_ms"], wo["p99_ms"]),
        "added_p50_ms_median_of_rounds": round(percentile(diffs, 50), 3) if diffs else None,
        "throughput_ratio": _ratio(w["rps"], wo["rps"]),
        "added_cpu_ms_per_request": _diff(w["cpu_ms_per_request"], wo["cpu_ms_per_request"]),
        "cpu_bound_throughput_ratio": _ratio(wo["cpu_ms_per_request"], w["cpu_ms_per_request"]),
    }


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 3) if a is not None and b else None


def _diff(a: float | None, b: float | None) -> float | None:
    return round(a - b, 3) if a is not None and b is not None else None


def run(args: argparse.Namespace) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="mc-litellm-bench-"))
    procs = []
    try:
        up_proc, up_port = start_upstream_process(reply="OK, done.", log_path=tmp / "upstream.log")
        procs.append(up_proc)
        up_url = f"http://127.0.0.1:{up_port}/v1"
        home = tmp / "home"
        home.mkdir(mode=0o700)
        n_skills = build_library(home / "skills", args.skills)
        spec = [ModelSpec(f"openai/{MODEL}", name=MODEL, api_base=up_url, api_key="not-needed")]
        ls = {"num_retries": 0, "request_timeout": 60}
        cfg_with = write_config(tmp / "with" / "config.yaml", proxy_config(spec, litellm_settings=ls))
        cfg_without = write_config(tmp / "without" / "config.yaml", proxy_config(spec, callbacks=None,
                                                                                   litellm_settings=ls))
        cfg_null = None
        if args.adapter_only:
            cfg_null = write_config(tmp / "null" / "config.yaml", proxy_config(
                spec, callbacks=["mc_null_callback.callback"], litellm_settings=ls))
            (tmp / "null" / "mc_null_callback.py").write_text(NULL_CALLBACK)
        env = dict(os.environ)
        env.pop("METACLAW_CONFIG", None)
        env["METACLAW_HOME"] = str(home)
        env.update(learning_env(args.learning))
        t0 = time.monotonic()
        # Idle keep-alive connections wait through the other targets' rounds: keep them open.
        keep = ["--keepalive_timeout", "600"]
        p_with = launch_proxy(cfg_with, env=env, log_path=tmp / "with.log", cwd=tmp / "with", extra_args=keep)
        p_without = launch_proxy(cfg_without, env=env, log_path=tmp / "without.log", cwd=tmp / "without",
                                 extra_args=keep)
        procs += [p_with.proc, p_without.proc]
        p_null = None
        if cfg_null is not None:
            p_null = launch_proxy(cfg_null, env=env, log_path=tmp / "null.log", cwd=tmp / "null", extra_args=keep)
            procs.append(p_null.proc)
        p_with.wait_ready(300)
        p_without.wait_ready(300)
        if p_null is not None:
            p_null.wait_ready(300)
        startup_s = time.monotonic() - t0
        targets = {"with_plugin": p_with.url + "/chat/completions",
                   "without_plugin": p_without.url + "/chat/completions",
                   "upstream_direct": up_url + "/chat/completions"}
        headers = {"with_plugin": p_with.headers(), "without_plugin": p_without.headers(), "upstream_direct": {}}
        if p_null is not None:
            targets["adapter_only"] = p_null.url + "/chat/completions"
            headers["adapter_only"] = p_null.headers()
        per_round = {c: args.requests or max(60, 6 * c) for c in args.concurrency}
        t1 = time.monotonic()
        pids = {"with_plugin": p_with.proc.pid, "without_plugin": p_without.proc.pid, "upstream_direct": None,
                "adapter_only": p_null.proc.pid if p_null is not None else None}
        results = asyncio.run(_measure_all(targets, headers, pids, concurrencies=args.concurrency, rounds=args.rounds,
                                           per_round=per_round, stream=args.mode == "sse", warmup=args.warmup))
        measure_s = time.monotonic() - t1
        p_with.stop()  # flushes the store on the way out
        p_without.stop()
        if p_null is not None:
            p_null.stop()
        turns = _count_turns(home)
        return {
            "benchmark": "litellm_overhead",
            "mode": args.mode,
            "learning_loops": args.learning,
            "skills": n_skills,
            "rounds": args.rounds,
            "requests_per_round": {str(k): v for k, v in per_round.items()},
            "turns_recorded_by_plugin": turns,
            "results": results,
            "proxy_startup_s": round(startup_s, 1),
            "measure_s": round(measure_s, 1),
            "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform(),
                        "load_avg_1m": round(os.getloadavg()[0], 2)},
            "litellm": _litellm_version(),
        }
    finally:
        for p in procs:
            stop_process(p)
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print(f"kept {tmp}", file=sys.stderr)


def hook_cost(n_skills: int, iterations: int = 2000, learning: str = "on") -> dict[str, Any]:
    """CPU time of the callback's own work per request, measured in-process (no proxy, no network):
    ``async_pre_call_hook`` (session, retrieval over the library, injection, turn start) and
    ``async_post_call_success_hook`` (the durable journal append). Robust to a noisy machine, unlike
    the end-to-end figures."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    from metaclaw_litellm import MetaClawCallback
    from metaclaw_plugin import MetaClawPlugin, Settings

    tmp = Path(tempfile.mkdtemp(prefix="mc-litellm-hooks-"))
    try:
        build_library(tmp / "skills", n_skills)
        off = {"evolution": {"enabled": False}, "reward": {"enabled": False}} if learning == "off" else {}
        plugin = MetaClawPlugin(Settings(home=tmp, **off)).start()
        cb = MetaClawCallback(plugin)
        key = {"team_id": None, "key_alias": None, "token": "litellm_proxy_master_key",
               "api_key": "litellm_proxy_master_key"}
        resp = litellm.ModelResponse(choices=[{"message": {"role": "assistant", "content": "OK, done."}}],
                                     usage={"prompt_tokens": 400, "completion_tokens": 3, "total_tokens": 403})
        qs = queries(iterations)
        pre: list[float] = []
        post: list[float] = []
        pre_cpu: list[float] = []
        post_cpu: list[float] = []
        injected = 0

        async def go() -> None:
            nonlocal injected
            for i in range(iterations):
                sid = f"s{i % 64}"
                data = {"model": MODEL, "messages": [{"role": "system", "content": SYSTEM},
                                                     {"role": "user", "content": qs[i]}],
                        "litellm_call_id": f"call-{i}", "litellm_session_id": sid,
                        "metadata": {"session_id": sid}, "proxy_server_request": {"headers": {"x-session-id": sid}}}
                c0, t0 = time.thread_time(), time.perf_counter()
                out = await cb.async_pre_call_hook(key, None, data, "acompletion")
                c1, t1 = time.thread_time(), time.perf_counter()
                await cb.async_post_call_success_hook(out, key, resp)
                c2, t2 = time.thread_time(), time.perf_counter()
                pre.append((t1 - t0) * 1e6)
                post.append((t2 - t1) * 1e6)
                pre_cpu.append((c1 - c0) * 1e6)
                post_cpu.append((c2 - c1) * 1e6)
                injected += "<metaclaw-skills>" in out["messages"][0]["content"]

        asyncio.run(go())
        plugin.flush()
        plugin.stop()
        warm = slice(min(200, iterations // 10), None)
        both = [a + b for a, b in zip(pre[warm], post[warm])]
        both_cpu = [a + b for a, b in zip(pre_cpu[warm], post_cpu[warm])]
        from metaclaw_plugin.devtools.proxyrun import percentile

        def q(v: list[float]) -> dict[str, float | None]:
            return {"p50_us": round(percentile(v, 50) or 0, 1), "p99_us": round(percentile(v, 99) or 0, 1)}

        return {"iterations": iterations, "skills": n_skills, "injected_share": round(injected / iterations, 3),
                "pre_call": q(pre[warm]), "post_call": q(post[warm]), "total": q(both),
                "cpu": {"pre_call": q(pre_cpu[warm]), "post_call": q(post_cpu[warm]), "total": q(both_cpu)},
                "errors": dict(cb.errors)}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _count_turns(home: Path) -> int | None:
    try:
        from metaclaw_plugin.trajectories import TrajectoryStore

        return TrajectoryStore(home / "metaclaw.db").counts()["turns"]
    except Exception:  # noqa: BLE001 - informative only
        return None


def _litellm_version() -> str | None:
    try:
        from importlib.metadata import version

        return version("litellm")
    except Exception:  # noqa: BLE001
        return None


def table(result: dict[str, Any]) -> str:
    lines = []
    h = result.get("hook_cost")
    if h:
        lines.append(f"callback work per request, in-process ({h['skills']} skills, {h['injected_share']:.0%} injected): "
                     f"pre-call p50 {h['pre_call']['p50_us']} us / p99 {h['pre_call']['p99_us']} us, "
                     f"post-call p50 {h['post_call']['p50_us']} us / p99 {h['post_call']['p99_us']} us, "
                     f"total p50 {h['total']['p50_us']} us / p99 {h['total']['p99_us']} us (wall); "
                     f"CPU total p50 {h['cpu']['total']['p50_us']} us / p99 {h['cpu']['total']['p99_us']} us")
    lines += [f"LiteLLM proxy overhead ({result['mode']}, learning loops {result.get('learning_loops', 'on')}, "
              f"{result['skills']} skills, {result['rounds']} interleaved rounds, "
              f"load avg {result['machine']['load_avg_1m']} on {result['machine']['cpus']} CPUs)",
              f"{'clients':>7}  {'target':<16} {'p50 ms':>8} {'p99 ms':>8} {'req/s':>8} {'CPU ms/req':>10} {'errors':>6}"]
    for c, r in result["results"].items():
        for name, s in r["targets"].items():
            cpu = s.get("cpu_ms_per_request")
            lines.append(f"{c:>7}  {name:<16} {s['p50_ms']:>8} {s['p99_ms']:>8} {s['rps']:>8} "
                         f"{'-' if cpu is None else cpu:>10} {s['errors']:>6}")
        for label, key in (("with/without", "with_vs_without"), ("adapter only/without", "adapter_only_vs_without")):
            if key in r:
                lines.append(_compare_line(label, r[key]))
    return "\n".join(lines)


def _compare_line(label: str, v: dict[str, Any]) -> str:
    return (f"{'':>7}  {label}: p50 x{v['p50_ratio']} ({v['added_p50_ms']:+} ms; median of rounds "
            f"{v['added_p50_ms_median_of_rounds']:+} ms), p99 x{v['p99_ratio']} ({v['added_p99_ms']:+} ms), "
            f"throughput x{v['throughput_ratio']}; CPU {v['added_cpu_ms_per_request']:+} ms/request "
            f"(CPU-bound throughput x{v['cpu_bound_throughput_ratio']})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skills", type=int, default=1000)
    ap.add_argument("--concurrency", type=lambda s: [int(x) for x in s.split(",")], default=[1, 32])
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--requests", type=int, default=0, help="Requests per target per round (default max(60, 6*c)).")
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--mode", choices=["json", "sse"], default="json")
    ap.add_argument("--out", type=Path, default=None, help="Write the result as JSON here.")
    ap.add_argument("--keep", action="store_true", help="Keep the scratch folder (logs, store).")
    ap.add_argument("--learning", choices=["on", "off"], default="on",
                    help="off: run the plugin without its reward/evolution listeners (isolates the request path).")
    ap.add_argument("--adapter-only", action="store_true",
                    help="Add a third proxy: the callback over a plugin that does nothing (LiteLLM's + adapter's share).")
    ap.add_argument("--no-hooks", action="store_true", help="Skip the in-process measure of the hooks' own cost.")
    ap.add_argument("--quick", action="store_true", help="A smoke run: 2 rounds of 40 requests.")
    args = ap.parse_args(argv)
    if args.quick:
        args.rounds, args.requests, args.warmup = 2, 40, 10
    result = run(args)
    if not args.no_hooks:
        result["hook_cost"] = hook_cost(args.skills, 400 if args.quick else 3000, args.learning)
    print(table(result))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
