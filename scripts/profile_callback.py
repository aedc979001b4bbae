"""The LiteLLM callback's hooks in process, part by part: where the plugin's CPU per JSON request goes.

Calls ``MetaClawCallback.async_pre_call_hook`` and ``async_post_call_success_deployment_hook`` as the proxy does,
with the requests of ``bench overhead`` (a 4 KB system prompt, two earlier turns, a new user message each time),
1k skills, the default configuration. Prints the CPU of the host thread per request in each hook and in the parts
inside them (each part timed on its own; the parts nest, so they do not add up). ``--thrash`` touches 16 MB and
sorts 50k strings between requests, as the proxy's own work does, so the caches are as cold as in the host (the
proxy's figures are close to these; without it they are ~20% lower). Then the CPU of the plugin's threads per
request, and of the worker's jobs by name. ``--pace=MS`` waits that long after each request, as a proxy's requests
are spaced by the upstream's answer (the plugin's threads then work turn by turn, not in batches).

    PYTHONPATH=$PWD:$PWD/adapters/litellm:$PWD/benchmarks python scripts/profile_callback.py [REQUESTS] [--thrash] \
        [--pace=MS]
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))  # the harness lives beside the product

SPENT: dict[str, float] = defaultdict(float)
JOBS: dict[str, float] = defaultdict(float)  # the worker's CPU by job name


def threads_cpu() -> dict[str, float]:
    """CPU seconds of each of the plugin's threads so far (``/proc``, Linux)."""
    import threading

    out: dict[str, float] = {}
    for t in threading.enumerate():
        if t.name.startswith("metaclaw") and t.native_id is not None:
            try:
                with open(f"/proc/self/task/{t.native_id}/schedstat", "rb") as f:
                    out[t.name] = out.get(t.name, 0.0) + int(f.read().split()[0]) / 1e9
            except OSError:
                pass
    return out


def timed(owner: Any, name: str, label: str) -> None:
    """Wrap ``owner.name`` so that its host-thread CPU adds up under ``label``."""
    fn: Callable[..., Any] = getattr(owner, name)

    def wrapper(*a: Any, **k: Any) -> Any:
        t = time.thread_time()
        try:
            return fn(*a, **k)
        finally:
            SPENT[label] += time.thread_time() - t

    setattr(owner, name, wrapper)


def main(argv: list[str]) -> None:
    n = int(next((a for a in argv if a.isdigit()), "1500"))
    thrash = "--thrash" in argv
    pace = next((float(a.split("=", 1)[1]) / 1000 for a in argv if a.startswith("--pace=")), 0.0)
    from metaclaw_bench.overhead import MODEL, REPLY
    from metaclaw_bench.retrieval import request_messages, workload
    from metaclaw_bench.synth import write_library

    home = Path(tempfile.mkdtemp(prefix="mc-profile-callback-"))
    write_library(home / "skills", 1000)
    os.environ.update(METACLAW_HOME=str(home), METACLAW_EVOLUTION__ENABLED="false", METACLAW_REWARD__ENABLED="false")

    import litellm
    import numpy as np

    from metaclaw_litellm import MetaClawCallback
    from metaclaw_plugin.memory.view import MemoryView
    from metaclaw_plugin.plugin import MetaClawPlugin
    from metaclaw_plugin.requestpath.sideturns import SideCalls
    from metaclaw_plugin.skillbank.bank import SkillBank
    from metaclaw_plugin.skillbank.embedding import EmbeddingIndex, HybridIndex
    from metaclaw_plugin.skillbank.retrieve import KeywordIndex
    from metaclaw_plugin.store.records import Recorder
    from metaclaw_plugin.store.trajectories import TrajectoryStore

    parts = (
        (MetaClawPlugin, "prepare_turn", "prepare_turn"),
        (SkillBank, "injection", "  skills block"),
        (HybridIndex, "search", "    hybrid search"),
        (EmbeddingIndex, "similarities", "      query vector and similarities"),
        (KeywordIndex, "raw_scores", "      keyword scores"),
        (MemoryView, "section", "  memory section"),
        (SideCalls, "judge", "  side-call judge"),
        (MetaClawPlugin, "complete_turn", "complete_turn"),
        (TrajectoryStore, "append_turn", "  store.append_turn"),
        (Recorder, "_commit_records", "    journal and queue"),
    )
    for owner, name, label in parts:
        timed(owner, name, label)
    from metaclaw_plugin.infra.worker import BackgroundWorker

    call = BackgroundWorker._call

    def timed_call(self: BackgroundWorker, name: str, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        t = time.thread_time()
        try:
            call(self, name, fn, args)
        finally:
            JOBS[name] += time.thread_time() - t

    BackgroundWorker._call = timed_call  # type: ignore[method-assign]

    cb = MetaClawCallback()
    texts = workload(n + 200, seed=29)
    junk, words = np.ones(2_000_000), [str(i) for i in range(50_000)]

    async def one(i: int, hooks: list[float]) -> None:
        if thrash:
            junk.sum()
            sorted(words)
        data = {
            "model": MODEL,
            "messages": request_messages(texts[i]),
            "max_tokens": 128,
            "litellm_call_id": f"call-{i}",
            "proxy_server_request": {"headers": {"x-session-id": "profile-0", "x-turn-type": "main"}},
            "metadata": {},
        }
        reply = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": f"{REPLY} #{i}"}}
        response = litellm.ModelResponse(id=f"r{i}", model=MODEL, choices=[reply], usage={"total_tokens": 15})
        t0 = time.thread_time()
        await cb.async_pre_call_hook(None, None, data, "completion")
        t1 = time.thread_time()
        await cb.async_post_call_success_deployment_hook(data, response, "completion")
        hooks[0] += t1 - t0
        hooks[1] += time.thread_time() - t1

    async def run() -> list[float]:
        hooks = [0.0, 0.0]
        for i in range(200):  # warm-up: caches, the memory the workload's users state
            await one(i, hooks)
        await asyncio.sleep(1.0)  # the warm-up's background work
        SPENT.clear()
        JOBS.clear()
        before.update(threads_cpu())
        hooks = [0.0, 0.0]
        for i in range(200, 200 + n):
            await one(i, hooks)
            if pace:
                await asyncio.sleep(pace)
            elif i % 50 == 0:
                await asyncio.sleep(0.01)  # let the plugin's threads run, as between a proxy's requests
        await asyncio.sleep(1.0)  # and finish what the measured requests left them
        after.update(threads_cpu())
        return hooks

    before: dict[str, float] = {}
    after: dict[str, float] = {}
    hooks = asyncio.run(run())
    plugin = cb.plugin
    if plugin is not None:
        plugin.stop()
    paced = f", {pace * 1000:g} ms between requests" if pace else ""
    print(
        f"{n} requests, 1k skills, default configuration{', caches thrashed' if thrash else ''}{paced}; host-thread CPU:"
    )
    print(f"{'async_pre_call_hook':40s} {hooks[0] / n * 1e6:7.1f} us")
    print(f"{'async_post_call_success_deployment_hook':40s} {hooks[1] / n * 1e6:7.1f} us")
    for _, _, label in parts:
        print(f"{label:40s} {SPENT[label] / n * 1e6:7.1f} us")
    print("the plugin's threads, CPU per request:")
    for name in sorted(after, key=lambda k: before.get(k, 0.0) - after[k]):
        print(f"  {name:38s} {(after[name] - before.get(name, 0.0)) / n * 1e6:7.1f} us")
    print("the worker's jobs, CPU per request:")
    for name, spent in sorted(JOBS.items(), key=lambda kv: -kv[1]):
        print(f"  {name:38s} {spent / n * 1e6:7.1f} us")


if __name__ == "__main__":
    main(sys.argv[1:])
