"""Served-policy latency while the weights change: idle, during hot swaps, during local training steps.

One process, the tiny in-process model (devtools/tinymodel.py) or any local model folder (``--model``). A fixed
number of client threads (``--clients``) call ``ServedPolicy.generate`` back to back (``--max-tokens`` each) for
``--seconds`` per phase:

- ``idle``: nothing else runs;
- ``swaps``: a thread hot-swaps between two sets of real LoRA weights back to back (each swap builds a new model
  object and switches one reference);
- ``training``: a thread runs LoRA training steps on a copy of the model (forward, backward, Adam; batch 4 x
  256 tokens, rank 32), the work a local trainer does between publishing LoRA weights.

Reports p50/p99 per request, requests/s, and each phase's p50/p99 as a ratio of idle (one run; quote ratios).

    python benchmarks/policy_latency.py [--seconds 20] [--clients 4] [--max-tokens 16] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from metaclaw_plugin.infra.stats import percentile

MSGS = [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": "Deploy it."}]


def train_loop(base: str, stop: threading.Event, counter: list[int]) -> None:
    import torch
    from peft import LoraConfig, get_peft_model

    from metaclaw_plugin.training.models import load_base

    model = get_peft_model(load_base(base)[0], LoraConfig(r=32, lora_alpha=32, target_modules="all-linear"))
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    vocab = model.config.vocab_size
    g = torch.Generator().manual_seed(0)
    while not stop.is_set():
        ids = torch.randint(0, vocab, (4, 256), generator=g)
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
        counter[0] += 1


def phase(policy: Any, name: str, seconds: float, clients: int, max_tokens: int, background: Any = None) -> dict:
    stop = threading.Event()
    lat: list[float] = []
    errors = [0]
    lock = threading.Lock()

    def client(i: int) -> None:
        k = 0
        while not stop.is_set():
            t0 = time.perf_counter()
            try:
                policy.generate(MSGS, max_tokens=max_tokens, seed=i * 100_000 + k)
            except Exception:
                errors[0] += 1
                continue
            with lock:
                lat.append((time.perf_counter() - t0) * 1000)
            k += 1

    bg_count = [0]
    bg = threading.Thread(target=background, args=(stop, bg_count)) if background else None
    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    if bg:
        bg.start()
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    if bg:
        bg.join()
    return {
        "phase": name,
        "requests": len(lat),
        "errors": errors[0],
        "rps": round(len(lat) / wall, 2),
        "p50_ms": round(statistics.median(lat), 1) if lat else None,
        "p99_ms": round(percentile(lat, 99), 1) if lat else None,
        "background_ops": bg_count[0],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--model",
        default=None,
        help="A model folder or a packaged model (smollm2); default: the tiny model, built here.",
    )
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--max-tokens", type=int, default=16)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)

    from metaclaw_plugin.devtools.lora import random_lora
    from metaclaw_plugin.devtools.tinymodel import build_tiny_model
    from metaclaw_plugin.serving import ServedPolicy
    from metaclaw_plugin.store import Database

    tmp = Path(tempfile.mkdtemp(prefix="policy-latency-"))
    base = a.model or str(build_tiny_model(tmp / "tiny"))
    refs = [random_lora(base, tmp / f"a{i}", seed=i, step=i, rank=32) for i in (1, 2)]
    policy = ServedPolicy(
        base, device=a.device, db=Database(tmp / "m.db"), workers=a.clients, poll_interval=None, max_new_tokens=64
    )
    policy.wait_ready(600)
    policy.generate(MSGS, max_tokens=4)  # warm-up

    def swapper(stop: threading.Event, n: list[int]) -> None:
        i = 0
        while not stop.is_set():
            policy.swap(refs[i % 2]).result()
            n[0] += 1
            i += 1

    rows = [
        phase(policy, "idle", a.seconds, a.clients, a.max_tokens),
        phase(policy, "swaps", a.seconds, a.clients, a.max_tokens, swapper),
        phase(policy, "training", a.seconds, a.clients, a.max_tokens, lambda s, n: train_loop(base, s, n)),
    ]
    idle = rows[0]
    for r in rows:
        r["p50_vs_idle"] = round(r["p50_ms"] / idle["p50_ms"], 2) if r["p50_ms"] and idle["p50_ms"] else None
        r["p99_vs_idle"] = round(r["p99_ms"] / idle["p99_ms"], 2) if r["p99_ms"] and idle["p99_ms"] else None
    policy.close()
    doc = {**vars(a), "model": base if a.model else "tiny (devtools/tinymodel.py)", "rows": rows}
    if a.json:
        json.dump(doc, sys.stdout, indent=2)
        print()
        return 0
    print(f"served policy: {doc['model']} on {a.device}, {a.clients} clients, {a.max_tokens} tokens/answer")
    print("| phase | requests | errors | req/s | p50 ms | p99 ms | p50/idle | p99/idle | background ops |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['phase']} | {r['requests']} | {r['errors']} | {r['rps']} | {r['p50_ms']} | {r['p99_ms']} "
            f"| {r['p50_vs_idle']} | {r['p99_vs_idle']} | {r['background_ops']} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
