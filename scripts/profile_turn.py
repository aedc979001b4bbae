"""The plugin's cost per turn in process: on_request + on_response with a 38 KB system prompt and a growing history.

Prints the host thread's wall time in each hook and the CPU per turn of the host thread and of the whole process
(the store's write-behind and the worker included). ``--profile`` prints cProfile's view of the host thread.
Default configuration (hybrid, wordllama), the starter skills, 8 interleaved sessions whose history keeps the last
10 exchanges (a sliding window: the prefix changes every turn, as with a host that trims its context).

    PYTHONPATH=$PWD python scripts/profile_turn.py [TURNS] [--profile]
"""

from __future__ import annotations

import cProfile
import pstats
import random
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from metaclaw_plugin import MetaClawPlugin, Settings, TurnContext
from metaclaw_plugin.skillbank import bundled_skills_dir

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))  # the harness lives beside the product
from metaclaw_bench.retrieval import HOST_SYSTEM_PROMPT

WORDS = "fix the failing test in parser module then update docs and run the migration script for the users table"
SYSTEM = (HOST_SYSTEM_PROMPT * 20)[:38_000]


def turns(n: int, sessions: int, rnd: random.Random) -> Iterator[tuple[int, list[dict[str, Any]], dict[str, Any]]]:
    words = WORDS.split()
    hist: dict[int, list[dict[str, Any]]] = {s: [{"role": "system", "content": SYSTEM}] for s in range(sessions)}
    for i in range(n):
        s = i % sessions
        h = hist[s]
        h.append({"role": "user", "content": " ".join(rnd.choices(words, k=25)) + f" #{i}"})
        reply = {"role": "assistant", "content": " ".join(rnd.choices(words, k=120)) + f" {i}"}
        yield s, list(h), reply
        h.append(reply)  # the next request carries this reply, as a host does
        if len(h) > 21:
            del h[1:3]


def run(plugin: MetaClawPlugin, n: int, seed: int) -> tuple[float, float]:
    t_req = t_resp = 0.0
    for i, (s, msgs, reply) in enumerate(turns(n, 8, random.Random(seed))):
        ctx = TurnContext(session_id=f"s{s}-{seed}", request_id=f"r{seed}-{i}")
        t0 = time.perf_counter()
        plugin.on_request(ctx, msgs)
        t1 = time.perf_counter()
        plugin.on_response(ctx, reply, usage={"prompt_tokens": 9000, "completion_tokens": 200})
        t_req += t1 - t0
        t_resp += time.perf_counter() - t1
    return t_req / n * 1e3, t_resp / n * 1e3


def main() -> None:
    n = int(next((a for a in sys.argv[1:] if a.isdigit()), "800"))
    plugin = MetaClawPlugin(Settings(home=Path(tempfile.mkdtemp()), skills_dir=bundled_skills_dir()))
    plugin.start()
    plugin.skills.refresh(force=True)
    run(plugin, 50, 0)  # warm-up
    plugin.flush()
    if "--profile" in sys.argv:
        prof = cProfile.Profile()
        prof.enable()
        run(plugin, n, 1)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    else:
        c0, h0 = time.process_time(), time.thread_time()
        req, resp = run(plugin, n, 1)
        h1 = time.thread_time()
        plugin.flush()
        c1 = time.process_time()
        print(
            f"per turn: on_request {req:.3f} ms, on_response {resp:.3f} ms (host thread, wall); "
            f"CPU: host thread {1e3 * (h1 - h0) / n:.3f} ms, process {1e3 * (c1 - c0) / n:.3f} ms"
        )
    plugin.stop()


if __name__ == "__main__":
    main()
