"""What a LiteLLM proxy's event loop does per request with the plugin against a no-op callback: calls and CPU.

Call counts hold on a loaded machine where timings do not; the CPU (the loop thread's clock, under the profiler, so
inflated ~2x) says where a difference goes. Starts the benchmark's upstream and two proxies (the
no-op callback of ``bench overhead`` and ``metaclaw_litellm.callback``, default configuration, 1k skills), each
with a ``sitecustomize`` that runs cProfile on the proxy's main thread between two signals; sends each the same
kind of batch (``sse-paced`` by default: 50 chunks 20 ms apart) and prints, per request, the calls each package made
on the loop and the functions outside the plugin whose counts differ. Work the host did on the plugin's behalf (per
chunk or per stream) shows there; the plugin's own hooks show under ``metaclaw``.

    PYTHONPATH=$PWD:$PWD/adapters/litellm:$PWD/benchmarks python scripts/profile_proxy_calls.py \
        [--mode sse-paced|sse|json] [--concurrency 32] [--requests 96]
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))  # the harness lives beside the product

from metaclaw_bench import overhead as ov
from metaclaw_bench.common import Child, start_upstream
from metaclaw_bench.retrieval import workload
from metaclaw_bench.synth import write_library
from metaclaw_plugin.devtools.proxyrun import generate_master_key

SITE = """import cProfile, os, signal, time
_out, _p = os.environ["PROFILE_OUT"], []
def _start(*_):
    _p.append(cProfile.Profile(time.thread_time)); _p[-1].enable()
def _stop(*_):
    _p[-1].disable(); _p[-1].dump_stats(_out); open(_out + ".done", "w").close()
signal.signal(signal.SIGUSR1, _start)
signal.signal(signal.SIGUSR2, _stop)
"""


def package(path: str) -> str:
    if path == "~":
        return "builtins"
    if "metaclaw" in path:
        return "metaclaw"
    if "site-packages/" in path:
        return path.split("site-packages/")[1].split("/")[0]
    return "stdlib"


def calls(prof: Path) -> dict[tuple[str, int, str], tuple[int, float]]:
    """Calls and own CPU time (the loop thread's) of each function."""
    return {k: (v[1], v[2]) for k, v in pstats.Stats(str(prof)).stats.items()}  # type: ignore[attr-defined]


def measure(ch: Child, upstream: int, bodies: list[bytes], warm: list[bytes], args: argparse.Namespace) -> Path:
    url, key, stream = f"http://127.0.0.1:{ch.port}/v1/chat/completions", args.master_key, args.mode != "json"
    ov.run_batch(url, warm, 8, len(warm), f"warm-{ch.name}", key, stream)
    out = Path(ch.info["profile"])
    os.kill(ch.proc.pid, signal.SIGUSR1)
    time.sleep(0.3)
    before = ov._stats(upstream)["requests"]
    r = ov.run_batch(url, bodies, args.concurrency, len(bodies), f"m-{ch.name}", key, stream)
    time.sleep(1.0)  # the last streams' ends
    os.kill(ch.proc.pid, signal.SIGUSR2)
    deadline = time.monotonic() + 30
    while not Path(str(out) + ".done").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    extra = ov._stats(upstream)["requests"] - before - len(r["lat"])
    print(f"{ch.name}: {len(r['lat'])} requests, {len(r['errors'])} errors, {extra} upstream calls of its own")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=["sse-paced", "sse", "json"], default="sse-paced")
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--requests", type=int, default=96)
    args = ap.parse_args()
    args.master_key = generate_master_key()
    scratch = Path(tempfile.mkdtemp(prefix="proxy-calls-"))
    (scratch / "site").mkdir()
    (scratch / "site" / "sitecustomize.py").write_text(SITE, "utf-8")
    up = start_upstream(scratch, reply=ov.REPLY, number_replies=True)
    children: dict[str, Child] = {}
    try:
        write_library(scratch / "library", 1000)
        home = scratch / "home"
        home.mkdir()
        cfg = {"mode": "skills_only", "skills_dir": str(scratch / "library")}
        (home / "config.yaml").write_text(json.dumps(cfg), "utf-8")
        (scratch / "noop").mkdir()
        (scratch / "noop" / "noop_callback.py").write_text(ov.NOOP_CALLBACK, "utf-8")
        path = os.pathsep.join([str(scratch / "site"), os.environ.get("PYTHONPATH", "")])
        for name, cb, env in (
            ("noop", "noop_callback.callback", {}),
            (
                "plugin",
                "metaclaw_litellm.callback",
                {"METACLAW_HOME": str(home), "METACLAW_CONFIG": str(home / "config.yaml")},
            ),
        ):
            env = {**env, "PYTHONPATH": path, "PROFILE_OUT": str(scratch / f"{name}.prof")}
            children[name] = ov.start_litellm(
                name, scratch, up.port, master_key=args.master_key, callbacks=[cb], env_extra=env
            )
            children[name].info["profile"] = env["PROFILE_OUT"]
        for ch in children.values():
            ov._wait_http(ch, ch.info["health"], 180)
        ov._pace(up.port, 50 if args.mode == "sse-paced" else 0, 20.0)
        texts = workload(2 * (64 + args.requests), seed=5)
        profs = {}
        for i, (name, ch) in enumerate(children.items()):
            at = i * (64 + args.requests)
            warm = ov.payloads(texts[at : at + 64], args.mode != "json")
            bodies = ov.payloads(texts[at + 64 : at + 64 + args.requests], args.mode != "json")
            profs[name] = calls(measure(ch, up.port, bodies, warm, args))
        n = args.requests
        by = {name: Counter() for name in profs}
        cpu: dict[str, Counter[str]] = {name: Counter() for name in profs}
        for name, stats in profs.items():
            for k, (c, t) in stats.items():
                by[name][package(k[0])] += c
                cpu[name][package(k[0])] += t
        print("per request on the proxy's event loop, by package: calls, own CPU ms")
        for pkg in sorted(set(by["noop"]) | set(by["plugin"]), key=lambda p: -cpu["plugin"][p]):
            print(
                f"  {pkg:<24} no-op {by['noop'][pkg] / n:9.1f} {1e3 * cpu['noop'][pkg] / n:7.3f}"
                f"   plugin {by['plugin'][pkg] / n:9.1f} {1e3 * cpu['plugin'][pkg] / n:7.3f}"
            )
        print(
            f"  {'all':<24} no-op {1e3 * sum(cpu['noop'].values()) / n:17.3f}   plugin {1e3 * sum(cpu['plugin'].values()) / n:17.3f}"
        )
        zero = (0, 0.0)
        diff = Counter(
            {
                k: profs["plugin"].get(k, zero)[0] - profs["noop"].get(k, zero)[0]
                for k in set(profs["plugin"]) | set(profs["noop"])
            }
        )
        tdiff = {
            k: profs["plugin"].get(k, zero)[1] - profs["noop"].get(k, zero)[1]
            for k in set(profs["plugin"]) | set(profs["noop"])
        }
        print("functions whose own CPU per request differs most (plugin − no-op, ms):")
        for (f, line, fn), d in sorted(tdiff.items(), key=lambda kd: -abs(kd[1]))[:30]:
            print(f"  {1e3 * d / n:+8.3f}  {f.split('site-packages/')[-1]}:{line} {fn}")
        host = [(k, d) for k, d in diff.items() if package(k[0]) not in ("metaclaw", "builtins") and abs(d) >= n / 2]
        print("functions of the host whose calls per request differ (plugin − no-op):")
        for (f, line, fn), d in sorted(host, key=lambda kd: -abs(kd[1]))[:25]:
            print(f"  {d / n:+8.1f}  {f.split('site-packages/')[-1]}:{line} {fn}")
    finally:
        for ch in children.values():
            ch.stop()
        up.stop()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
