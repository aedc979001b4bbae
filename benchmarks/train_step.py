#!/usr/bin/env python
"""Local training step time and tokens/s: the ``local`` backend (torch + PEFT LoRA, rank 32, Adam) on this
machine, for the tiny in-process model and for SmolLM2-135M-Instruct (the packaged ``smollm2``).

Each step is a batch of ``--batch`` samples of ``--tokens`` tokens (the last quarter is the answer, trained
with the importance-sampling loss), run as the trainer runs it: forward-backward per micro-batch, then one
optimiser step. One warm-up step, then ``--steps`` timed steps; the median is reported. Figures from one run
on one machine: compare models and micro-batch sizes within a run, not across machines.

    python benchmarks/train_step.py                      # tiny and smollm2, Markdown table
    python benchmarks/train_step.py --models tiny --json
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path


def bench(spec: str, out: Path, *, batch: int, tokens: int, micro: int, steps: int, device: str) -> dict[str, object]:
    import random

    from metaclaw_plugin.training.backends.local import LocalBackend
    from metaclaw_plugin.training.samples import TrainSample

    started = time.perf_counter()
    backend = LocalBackend(spec, out / "training", device=device)
    load_s = time.perf_counter() - started
    rng = random.Random(0)
    vocab = len(backend.tokenizer)
    answer = tokens // 4
    samples = [
        TrainSample(
            turn_id=f"t{i}",
            prompt_ids=[rng.randrange(vocab) for _ in range(tokens - answer)],
            completion_ids=[rng.randrange(vocab) for _ in range(answer)],
            mask=[1] * answer,
            logprobs=[-2.0] * answer if i % 2 else None,
            reward=1.0 if i % 2 else -1.0,
            generation=0,
            advantage=1.0 if i % 2 else -1.0,
        )
        for i in range(batch)
    ]
    norm = float(answer * batch)
    times = []
    for _ in range(steps + 1):
        t0 = time.perf_counter()
        for i in range(0, batch, micro):
            backend.forward_backward(samples[i : i + micro], "importance_sampling", norm)
        backend.optim_step()
        if backend.device == "cuda":
            import torch

            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    step_s = statistics.median(times[1:])
    return {
        "model": spec if Path(spec).name != "model" else "tiny",
        "device": backend.device,
        "params": sum(p.numel() for p in backend.model.parameters()),
        "trainable": sum(p.numel() for p in backend.model.parameters() if p.requires_grad),
        "batch": batch,
        "tokens": tokens,
        "micro_batch": micro,
        "load_s": round(load_s, 2),
        "step_s": round(step_s, 3),
        "tokens_per_s": round(batch * tokens / step_s, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="tiny,smollm2", help="tiny, smollm2 or model folders, comma-separated")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--tokens", type=int, default=256)
    ap.add_argument("--micro", default="1,4", help="micro-batch sizes to try, comma-separated")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    import torch

    torch.manual_seed(0)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        for spec in args.models.split(","):
            if spec == "tiny":
                from metaclaw_plugin.devtools.tinymodel import build_tiny_model

                spec = str(build_tiny_model(out / "model", seed=0))
            for micro in (int(m) for m in args.micro.split(",")):
                rows.append(
                    bench(
                        spec,
                        out,
                        batch=args.batch,
                        tokens=args.tokens,
                        micro=micro,
                        steps=args.steps,
                        device=args.device,
                    )
                )
    if args.json:
        print(json.dumps({"torch_threads": torch.get_num_threads(), "rows": rows}, indent=2))
        return
    print(f"torch threads: {torch.get_num_threads()}\n")
    print("| model | device | params | LoRA params | batch x tokens | micro-batch | load s | step s | tokens/s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['model']} | {r['device']} | {r['params']:,} | {r['trainable']:,} | {r['batch']} x {r['tokens']} | "
            f"{r['micro_batch']} | {r['load_s']} | {r['step_s']} | {r['tokens_per_s']} |"
        )


if __name__ == "__main__":
    main()
