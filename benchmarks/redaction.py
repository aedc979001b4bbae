#!/usr/bin/env python
"""Redaction throughput (MB/s) and its cost on capture.

1. Throughput of ``Redactor.redact`` on three corpora, generated deterministically:
   - ``agent``: typical agent traffic (prose, code, tool output, paths, hashes; no secrets);
   - ``secret-dense``: the same with a real-looking secret every ~2 KB;
   - ``keyword-dense``: prose about credentials (``password``, ``token``, ``api key`` everywhere,
     no values): the worst case for the keyword rules.
2. Cost on capture: ``TrajectoryStore.append_turn`` (the synchronous part of ``on_response``) per turn,
   with the redactor and without it, for a session whose system prompt is ~38 KB (OpenClaw-sized) and
   whose turns add ~1.5 KB each. The store redacts each distinct message once (content-addressed), so
   the first turn pays for the system prompt and later turns only for their new messages.

3. Per message: ``Redactor.redact`` on each message of a realistic mix (short prompts, prose about
   credentials, code, configs, tool output; one message in ~12 carries a secret), p50/p99 in microseconds:
   the cost the request path pays per distinct message. ``--rev`` measures privacy.py as of a git revision.

    python benchmarks/redaction.py            # Markdown table
    python benchmarks/redaction.py --per-message-only [--rev 3516b71]
    python benchmarks/redaction.py --json     # one JSON document
    python benchmarks/redaction.py --out benchmarks/results
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from metaclaw_plugin.privacy import Redactor
from metaclaw_plugin.store.trajectories import TrajectoryStore
from metaclaw_plugin.types import Turn

PROSE = (
    "The user asked to refactor the parser so that it streams the file instead of loading it. I read the "
    "module, found the function that builds the list, and replaced it with a generator. Tests pass. "
)
CODE = (
    "def load_rows(path: str) -> Iterator[dict]:\n    with open(path, newline='') as f:\n"
    "        for row in csv.DictReader(f, delimiter=';'):\n            yield {k.strip(): v for k, v in row.items()}\n"
)
TOOL = (
    "$ git log --oneline -3\n3f786850e387550fdab836ed7e6dc881de23001b fix parser\n"
    "a94a8fe5ccb19ba61c4c0873d391e987982fbbd3 add tests\n$ ls src/metaclaw_plugin/skillbank\n"
    "bank.py render.py retrieve.py skillmd.py store.py\nrequest id 123e4567-e89b-12d3-a456-426614174000\n"
)
SECRETS = [
    "sk-proj-Zx81Qw72Lm63Np54Ok45Ij36Uh27Yg18Tf09Rd",
    "ghp_8fK2mN5qR9tV3wY6zB1cE4hJ7kL0pS3uX6aD",
    "AKIAQ3EGRX7JN2PLVB4T",
    "password=hunter2-Correct-Horse",
    "Authorization: Bearer 9aZk8Yx7Wv6Ut5Sr4Qp3On2Ml1Kj0Hg",
    "postgres://admin:Tr0ub4dor3@db:5432/app",
    "xoxb-2048193847561-4829103847562-Zk9Yx8Wv7Ut6Sr5Qp4On3Ml2",
]
KEYWORDS = (
    "Keep the password and the api key out of the repository; the token is read from the environment. "
    "Rotate the secret when a credential leaks, and never print the access key or the private key. "
)


def corpus(kind: str, size: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    parts: list[str] = []
    n = 0
    while n < size:
        piece = rng.choice([PROSE, CODE, TOOL]) if kind != "keyword-dense" else KEYWORDS
        if kind == "secret-dense" and rng.random() < 0.35:
            piece = piece + f" value {rng.choice(SECRETS)} here.\n"
        parts.append(piece)
        n += len(piece)
    return "".join(parts)[:size]


CONFIG = (
    "database:\n  host: db.internal\n  port: 5432\n  user: app\n  pool_size: 10\nlogging:\n  level: INFO\n"
    "retrieval:\n  mode: hybrid\n  top_k: 5\n  max_tokens: 2048\n"
)
PROMPTS = [
    "why does the test fail on CI but not locally?",
    "refactor this function so it streams rows instead of loading the file",
    "the auth middleware rejects my session cookie after login, where is the token checked?",
    "rotate the api key for the staging deploy and update the secret in the vault",
    "summarise the design doc in five bullet points",
    "what does passing --dry-run to the deploy script do?",
]


def message_mix(n: int = 2000, seed: int = 11) -> list[str]:
    """A realistic mix of messages, the unit the store redacts (each distinct message once)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        kind = rng.choices(["prompt", "prose", "code", "config", "tool", "keywords"], [30, 20, 20, 8, 17, 5])[0]
        if kind == "prompt":
            msg = rng.choice(PROMPTS)
        elif kind == "prose":
            msg = PROSE * rng.randint(1, 6)
        elif kind == "code":
            msg = CODE * rng.randint(2, 12)
        elif kind == "config":
            msg = CONFIG * rng.randint(1, 3)
        elif kind == "tool":
            msg = TOOL * rng.randint(2, 30)
        else:
            msg = KEYWORDS * rng.randint(1, 4)
        if rng.random() < 0.08:
            msg += f"\nvalue {rng.choice(SECRETS)} here\n"
        out.append(msg)
    return out


def per_message(r: Any, msgs: list[str], repeat: int = 3) -> dict[str, float]:
    """p50/p99 of the per-message redaction time (µs), the best of ``repeat`` runs for each message."""
    for m in msgs[:50]:
        r.redact(m)
    times = []
    for m in msgs:
        best = float("inf")
        for _ in range(repeat):
            t0 = time.perf_counter()
            r.redact(m)
            best = min(best, time.perf_counter() - t0)
        times.append(best * 1e6)
    times.sort()
    return {
        "messages": len(msgs),
        "mean_chars": round(sum(map(len, msgs)) / len(msgs)),
        "p50_us": round(times[len(times) // 2], 1),
        "p99_us": round(times[int(len(times) * 0.99) - 1], 1),
        "mean_us": round(statistics.fmean(times), 1),
    }


def redactor_at(rev: str | None) -> Any:
    """``Redactor`` from the working tree, or from privacy.py as of a git revision."""
    return Redactor() if rev is None else load_privacy(rev).Redactor()


def load_privacy(rev: str | None) -> Any:
    if rev is None:
        from metaclaw_plugin import privacy

        return privacy
    src = subprocess.run(
        ["git", "show", f"{rev}:metaclaw_plugin/privacy.py"],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "privacy_rev.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("privacy_rev", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["privacy_rev"] = mod
    spec.loader.exec_module(mod)
    return mod


def throughput(r: Redactor, text: str, repeat: int = 5) -> float:
    r.redact(text[:5000])  # warm the regex caches
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        r.redact(text)
        times.append(time.perf_counter() - t0)
    return len(text.encode()) / statistics.median(times) / 1e6


def capture_cost(redact: bool, turns: int = 40) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as d:
        store = TrajectoryStore(Path(d) / "m.db", redactor=Redactor() if redact else None)
        store.open()
        system = {"role": "system", "content": corpus("agent", 38_000, seed=1)}
        msgs = [system]
        per_turn = []
        first = 0.0
        for i in range(turns):
            msgs = msgs + [{"role": "user", "content": corpus("secret-dense", 900, seed=100 + i)}]
            resp = {"role": "assistant", "content": corpus("agent", 600, seed=1000 + i)}
            turn = Turn(turn_id=f"t{i}", session_id="s", tenant="default", kind="main", messages=msgs, response=resp)
            t0 = time.perf_counter()
            store.append_turn(turn)
            dt = (time.perf_counter() - t0) * 1000
            if i == 0:
                first = dt
            else:
                per_turn.append(dt)
            msgs = msgs + [resp]
        store.flush(30)
        store.close()
    per_turn.sort()
    return {
        "first_turn_ms": round(first, 3),
        "p50_ms": round(per_turn[len(per_turn) // 2], 3),
        "p99_ms": round(per_turn[int(len(per_turn) * 0.99) - 1], 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--size", type=int, default=2_000_000, help="bytes per corpus")
    ap.add_argument("--per-message-only", action="store_true", help="only the per-message p50/p99")
    ap.add_argument("--rev", default=None, help="per-message: privacy.py as of this git revision")
    args = ap.parse_args()
    pm = per_message(redactor_at(args.rev), message_mix())
    if args.per_message_only:
        print(
            json.dumps({"rev": args.rev or "worktree", "per_message": pm})
            if args.json
            else f"per message ({args.rev or 'working tree'}): p50 {pm['p50_us']} µs, p99 {pm['p99_us']} µs, "
            f"mean {pm['mean_us']} µs over {pm['messages']} messages of {pm['mean_chars']} chars on average"
        )
        return
    r = Redactor()
    result = {
        "machine": f"{platform.machine()} {platform.python_version()}",
        "rules": r.rule_count,
        "throughput_mb_s": {
            k: round(throughput(r, corpus(k, args.size)), 2) for k in ("agent", "secret-dense", "keyword-dense")
        },
        "throughput_mb_s_without_detect_secrets": round(
            throughput(Redactor(detect_secrets=False), corpus("agent", args.size)), 2
        ),
        "per_message": pm,
        "capture": {"with_redaction": capture_cost(True), "without_redaction": capture_cost(False)},
    }
    try:
        result["commit"] = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        pass
    if args.out:
        from metaclaw_bench.common import write_result  # one file per benchmark, replaced by each run

        write_result(result, args.out, "redaction")
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print("| corpus | MB/s |\n|---|---|")
    for k, v in result["throughput_mb_s"].items():
        print(f"| {k} | {v} |")
    print(f"| agent, own patterns only | {result['throughput_mb_s_without_detect_secrets']} |")
    print(
        f"\nper message: p50 {pm['p50_us']} µs, p99 {pm['p99_us']} µs ({pm['messages']} messages, {pm['mean_chars']} chars on average)"
    )
    print(
        "\n| capture (append_turn) | first turn (38 KB system) | p50 later turn | p99 later turn |\n|---|---|---|---|"
    )
    for k, v in result["capture"].items():
        print(f"| {k} | {v['first_turn_ms']} ms | {v['p50_ms']} ms | {v['p99_ms']} ms |")


if __name__ == "__main__":
    main()
