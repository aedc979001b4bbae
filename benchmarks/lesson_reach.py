#!/usr/bin/env python
"""Lesson reach through the real evolution path (scripted evolver), per lesson, per kind and overall.

Plays our multi-day scenarios (benchmarks/scenarios/reach/*.yaml) and, when given or present beside the
checkout, a benchmark in the public MetaClaw-Bench layout, through a fresh plugin home each; see
benchmarks/metaclaw_bench/reach.py for the flow, the governance rules and what the scripted evolver does.

    python benchmarks/lesson_reach.py                          # keyword, and hybrid (+rerank) if the embeddings extra imports
    python benchmarks/lesson_reach.py --modes keyword,keyword:0.05,embedding,hybrid,hybrid+rerank
    python benchmarks/lesson_reach.py --bench PATH --json      # one JSON document
    python benchmarks/lesson_reach.py --unmarked               # lessons stored as ordinary skills (no kind)
    python benchmarks/lesson_reach.py --unmarked --from-corrections   # ... as written from the corrections
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "tests" / "data" / "metaclaw-bench-example"  # the public layout, two days


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--modes",
        default=None,
        help="comma-separated: keyword, keyword:<min_score>, embedding, hybrid; +rerank: the second stage on",
    )
    ap.add_argument("--bench", action="append", default=None, help="a MetaClaw-Bench-layout folder (repeatable)")
    ap.add_argument("--scenarios", default=None, help="folder of our reach YAML scenarios")
    ap.add_argument("--no-ours", action="store_true", help="skip our own scenarios")
    ap.add_argument("--rule-kinds", action="store_true", help="ignore the scenarios' kind annotations (rule only)")
    ap.add_argument(
        "--unmarked",
        action="store_true",
        help="store each lesson as an ordinary skill (no kind), as another evolver would",
    )
    ap.add_argument(
        "--from-corrections",
        action="store_true",
        help="with --unmarked: each lesson as the scripted evolver writes it from the correction, not the scenario's",
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    logging.basicConfig(level=logging.ERROR)
    from metaclaw_bench import reach

    benches = args.bench if args.bench is not None else ([str(EXAMPLE)] if EXAMPLE.is_dir() else [])
    results = reach.run_all(
        args.modes.split(",") if args.modes else None,
        benches,
        args.scenarios,
        ours=not args.no_ours,
        use_annotations=not args.rule_kinds,
        unmarked=args.unmarked,
        from_corrections=args.from_corrections,
    )
    if args.json:
        json.dump([reach.as_dict(r) for r in results], sys.stdout, indent=1)
        print()
    else:
        print(reach.table(results))


if __name__ == "__main__":
    main()
