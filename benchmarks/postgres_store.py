"""Figures for the PostgreSQL backend, from one run on this machine (quote the ratios):

1. request-path cost per turn (on_request + on_response) with storage.backend postgres against sqlite;
2. turns/s one PostgreSQL database absorbs from N writer processes (each a TrajectoryStore with its journal);
3. learner failover: kill -9 of the elected host until another holds the lock.

Starts its own PostgreSQL server (Debian's postgresql, as the tests do):
    PYTHONPATH=.:tests/support python benchmarks/postgres_store.py [--turns 3000] [--writers 1,2,4]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

from postgres_support import PASSWORD, missing_reason, start_server

from metaclaw_plugin import MetaClawPlugin, Settings, TurnContext
from metaclaw_plugin.store.election import LearnerElection
from metaclaw_plugin.store.postgres import PostgresDatabase

SYSTEM = "You are a coding agent working in a large repository. " * 40


def request_path(backend: str, url: str, turns: int) -> list[float]:
    home = Path(tempfile.mkdtemp(prefix=f"bench-{backend}-"))
    storage = {"backend": backend, "url": url} if backend == "postgres" else {}
    p = MetaClawPlugin(Settings(home=home, storage=storage, retrieval={"mode": "keyword"})).start()
    times = []
    try:
        for i in range(turns):
            ctx = TurnContext(session_id=f"s{i % 20}")
            msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"fix the failing test {i}"}]
            t0 = time.perf_counter()
            p.on_request(ctx, msgs)
            p.on_response(ctx, {"role": "assistant", "content": f"done {i}"})
            times.append((time.perf_counter() - t0) * 1e6)
        assert p.flush(120)
    finally:
        p.stop()
    return times


WRITER = """
import sys, time
sys.path.insert(0, "tests/store")
from pathlib import Path
from metaclaw_plugin.store.postgres import PostgresDatabase
from metaclaw_plugin.store.trajectories import TrajectoryStore
from test_trajectories import make_turn
url, n, tag, home = sys.argv[1], int(sys.argv[2]), sys.argv[3], Path(sys.argv[4])
store = TrajectoryStore(home / "metaclaw.db", database=PostgresDatabase(url), queue_max=1_000_000)
store.open()
turns = [make_turn(i, session=f"{tag}-{i % 50}") for i in range(n)]
for t in turns:
    t.turn_id = f"{tag}-{t.turn_id}"
print("ready", flush=True)
sys.stdin.readline()
t0 = time.perf_counter()
for t in turns:
    store.append_turn(t)
assert store.flush(600)
print(time.perf_counter() - t0, flush=True)
store.close()
"""


def absorb(url: str, writers: int, per: int) -> float:
    procs = []
    for w in range(writers):
        home = Path(tempfile.mkdtemp(prefix="bench-w-"))
        procs.append(
            subprocess.Popen(
                [sys.executable, "-c", WRITER, url, str(per), f"w{writers}x{w}", str(home)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
        )
    for p in procs:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    t0 = time.perf_counter()
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    for p in procs:
        assert p.stdout is not None
        p.stdout.readline()
        p.wait()
    return writers * per / (time.perf_counter() - t0)


CHILD = """
import sys, time
from metaclaw_plugin.store.election import LearnerElection
from metaclaw_plugin.store.postgres import PostgresDatabase
e = LearnerElection(PostgresDatabase(sys.argv[1]), host="child", check_every=0.2).start()
print("leader" if e.is_leader() else "follower", flush=True)
time.sleep(600)
"""


def failover(url: str, check_every: float = 0.2) -> float:
    db = PostgresDatabase(url)
    db.query("SELECT 1")
    child = subprocess.Popen([sys.executable, "-c", CHILD, url], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().strip() == "leader"
    me = LearnerElection(db, host="bench", check_every=check_every).start()
    child.kill()
    t0 = time.monotonic()
    while not me.is_leader():
        time.sleep(0.005)
    took = time.monotonic() - t0
    child.wait()
    me.stop()
    db.close()
    return took


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=3000)
    ap.add_argument("--writers", default="1,2,4")
    ap.add_argument("--per-writer", type=int, default=3000)
    args = ap.parse_args()
    reason = missing_reason()
    if reason:
        sys.exit(f"no PostgreSQL: {reason}")
    srv = start_server()
    os.environ["PGPASSWORD"] = PASSWORD
    out: dict[str, object] = {}
    try:
        lite = request_path("sqlite", srv.url, args.turns)
        pg = request_path("postgres", srv.url, args.turns)
        med_l, med_p = statistics.median(lite), statistics.median(pg)
        p99 = lambda xs: sorted(xs)[int(len(xs) * 0.99)]  # noqa: E731
        out["request_path_us"] = {
            "sqlite_median": round(med_l, 1),
            "postgres_median": round(med_p, 1),
            "ratio_median": round(med_p / med_l, 3),
            "sqlite_p99": round(p99(lite), 1),
            "postgres_p99": round(p99(pg), 1),
        }
        out["turns_per_s"] = {n: round(absorb(srv.url, n, args.per_writer)) for n in map(int, args.writers.split(","))}
        runs = [failover(srv.url) for _ in range(5)]
        out["learner_failover_s"] = {
            "check_every": 0.2,
            "median": round(statistics.median(runs), 3),
            "max": round(max(runs), 3),
        }
    finally:
        srv.destroy()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
