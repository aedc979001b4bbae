"""Dashboard page load with a large store: 10,000 turns in 1,000 sessions (every turn scored, most carrying
skills), 500 training steps and 200 scheduler transitions, served by a real `metaclaw-plugin serve`.

    python benchmarks/dashboard_load.py [--turns 10000] [--runs 5]
    PYTHONPATH=.:tests/support python benchmarks/dashboard_load.py --backend postgres   # a PostgreSQL server of its own

Each page is fetched `--runs` times over HTTP (server-side render and transfer, not the browser's drawing);
the median and the worst are reported, with the page size. The store is built through the plugin's own hooks,
so the tables, indexes and journal are what a real host leaves behind. With ``--backend postgres`` the home's
storage is a PostgreSQL server started as the tests start one (tests/support/postgres_support.py).
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
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from metaclaw_plugin import MetaClawPlugin, Settings, TurnContext
from metaclaw_plugin.devtools.proxyrun import free_port, stop_process
from metaclaw_plugin.store import open_database

TASKS = [
    "parse the csv export {n}.csv and sum the totals",
    "write a yaml config for service {n}",
    "fix the off-by-one error in loop {n}",
    "convert the timestamps in log {n} to iso-8601",
    "what is the weather like today ({n})?",
]


def build(settings: Settings, turns: int, per_session: int = 10) -> float:
    t0 = time.perf_counter()
    p = MetaClawPlugin(settings).start()
    ids = []
    for s in range(turns // per_session):
        msgs: list[dict] = []
        for i in range(per_session):
            ctx = TurnContext(f"bench-{s:05d}", host="bench")
            msgs = [*msgs, {"role": "user", "content": TASKS[(s + i) % len(TASKS)].format(n=s * 100 + i)}]
            p.on_request(ctx, msgs)
            reply = {"role": "assistant", "content": f"answer {s}-{i}"}
            p.on_response(ctx, reply)
            msgs.append(reply)
            ids.append(ctx.request_id)
        p.on_session_end(ctx, {"success": s % 3 != 0})
    p.flush(120)
    p.stop()
    db = open_database(settings)
    now = time.time()
    with db.transaction() as tx:
        tx.executemany(
            "INSERT OR IGNORE INTO rewards (turn_id, source, score, detail, created_at) VALUES (?, 'judge', ?, NULL, ?)",
            [(t, 1.0 if i % 3 else -1.0, now) for i, t in enumerate(ids)],
        )
        tx.executemany(
            "INSERT INTO train_steps (step, backend, loss, mean_reward, success_rate, samples_used, samples_dropped,"
            " step_seconds, tokens_per_s, weights, created_at) VALUES (?, 'local', ?, ?, ?, 4, 0, 1.0, 800, ?, ?)",
            [(i, 1.0 / i, i / 500, i / 500, f"lora-{i}", now - (500 - i) * 30) for i in range(1, 501)],
        )
        tx.executemany(
            "INSERT INTO sched_transitions (at, from_state, to_state, reason) VALUES (?, ?, ?, 'bench')",
            [(now - (200 - i) * 300, None, ("idle", "window_open", "training")[i % 3]) for i in range(200)],
        )
    n = db.query("SELECT COUNT(*) FROM turns")[0][0]
    db.close()
    assert n == turns, f"{n} turns stored, {turns} expected"
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    home = Path(tempfile.mkdtemp(prefix="metaclaw-dash-bench-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("METACLAW_")}
    env["METACLAW_HOME"] = str(home)
    env["METACLAW_RETRIEVAL__MODE"] = "keyword"
    storage: dict[str, str] = {}
    server = None
    if args.backend == "postgres":
        from postgres_support import PASSWORD, missing_reason, start_server  # tests/support on PYTHONPATH

        reason = missing_reason()
        if reason:
            raise SystemExit(f"no PostgreSQL: {reason}")
        server = start_server()
        os.environ["PGPASSWORD"] = env["PGPASSWORD"] = PASSWORD
        storage = {"backend": "postgres", "url": server.url}
        env["METACLAW_STORAGE__BACKEND"], env["METACLAW_STORAGE__URL"] = "postgres", server.url
    try:
        return run(args, home, env, Settings(home=home, retrieval={"mode": "keyword"}, storage=storage))
    finally:
        if server is not None:
            server.destroy()


def run(args: argparse.Namespace, home: Path, env: dict[str, str], settings: Settings) -> int:
    built = build(settings, args.turns)
    port = free_port()
    exe = Path(sys.executable).with_name("metaclaw-plugin")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "metaclaw_plugin"]
    proc = subprocess.Popen(
        [*cmd, "serve", "--port", str(port)], env=env, start_new_session=True, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while not (home / "server.token").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        headers = {"Authorization": f"Bearer {(home / 'server.token').read_text().strip()}"}

        def get(path: str) -> tuple[float, int]:
            t0 = time.perf_counter()
            with urllib.request.urlopen(urllib.request.Request(url + path, headers=headers), timeout=120) as r:
                body = r.read()
                assert r.status == 200, (path, r.status)
            return (time.perf_counter() - t0) * 1000, len(body)

        while True:
            try:
                get("/health")
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        results = {}
        for path in ("/", "/sessions", "/sessions/bench-00042", "/training", "/scheduler", "/static/plotly.min.js"):
            get(path)  # warm: the first read of each table
            times, size = [], 0
            for _ in range(args.runs):
                ms, size = get(path)
                times.append(ms)
            results[path] = {
                "median_ms": round(statistics.median(times), 1),
                "max_ms": round(max(times), 1),
                "bytes": size,
            }
    finally:
        stop_process(proc)
    out = {
        "backend": args.backend,
        "turns": args.turns,
        "sessions": args.turns // 10,
        "store_built_s": round(built, 1),
        "pages": results,
    }
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(
            f"dashboard on {args.backend} with {args.turns} turns in {args.turns // 10} sessions "
            f"(store built in {built:.1f}s), {args.runs} runs:"
        )
        for p, r in results.items():
            print(f"  {p:28s} median {r['median_ms']:8.1f} ms   max {r['max_ms']:8.1f} ms   {r['bytes']:>9,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
