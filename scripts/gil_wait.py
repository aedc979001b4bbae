"""How long the host's thread waits for the GIL while the memory thread works: what a request arriving then pays.

The main thread sleeps 2 ms again and again and records how much longer each sleep took, while a second thread does
the memory learner's work on the bench's user turns (each kept as a passage: credential statements removed,
redacted, screened; then the rule extraction), three turns at a time. A thread busy in Python keeps the GIL until
the interpreter takes it away (every 5 ms by default), so the oversleep is the wait a request's loop would see. The
first line is the machine with nothing else running in the process.

    PYTHONPATH=$PWD:$PWD/benchmarks python scripts/gil_wait.py [TURNS]
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))  # the harness lives beside the product


def oversleep(until: threading.Event | None, count: int = 500) -> list[float]:
    """Milliseconds each 2 ms sleep overran, until ``until`` is set (or ``count`` sleeps without one)."""
    out = []
    while (until is not None and not until.is_set()) or (until is None and len(out) < count):
        start = time.perf_counter()
        time.sleep(0.002)
        out.append((time.perf_counter() - start - 0.002) * 1000)
    return sorted(out)


def line(label: str, ms: list[float]) -> str:
    def at(q: float) -> float:
        return ms[min(len(ms) - 1, int(len(ms) * q))]

    return f"{label:34s} p50 {at(0.5):.3f} ms  p90 {at(0.9):.3f} ms  p99 {at(0.99):.3f} ms  ({len(ms)} sleeps)"


def main(argv: list[str]) -> None:
    n = int(next((a for a in argv if a.isdigit()), "900"))
    os.environ.setdefault("METACLAW_HOME", tempfile.mkdtemp(prefix="mc-gil-wait-"))
    from metaclaw_bench.retrieval import workload
    from metaclaw_plugin.config import Settings
    from metaclaw_plugin.learning.memory.learner import Batch, MemoryLearner, Note, Said, _load_screens
    from metaclaw_plugin.requestpath.events import Events

    _load_screens()
    learner = MemoryLearner(Settings(), Events(lambda *a: None), None)
    now = time.time()
    said = [Said("t", "u", f"s{i // 10}", f"turn{i}", x, now) for i, x in enumerate(workload(n, seed=29))]
    done = threading.Event()

    def work() -> None:
        for i in range(0, len(said), 3):
            chunk = said[i : i + 3]
            learner.keep_said(chunk)
            learner.process(Batch("t", "u", f"s{i}", [Note(s.turn_id, s.text, "", s.at) for s in chunk]))
        done.set()

    print(line("nothing else running", oversleep(None)))
    worker = threading.Thread(target=work)
    worker.start()
    busy = oversleep(done)
    worker.join()
    learner.stop()
    print(line(f"the memory thread on {n} turns", busy))


if __name__ == "__main__":
    main(sys.argv[1:])
