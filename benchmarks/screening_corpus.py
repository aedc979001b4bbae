"""Per-class screening results on the red-team corpus in tests/support/screening_corpus.py.

    python benchmarks/screening_corpus.py

A malicious item is caught when the deterministic screen does not leave it clean (rejected or
suspicious: either way it never ends active). A benign item is held back when it is not clean.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from screening_corpus import benign, malicious

from metaclaw_plugin.learning.screening import screen
from metaclaw_plugin.types import Skill


def skill(item, origin: str = "user") -> Skill:
    return Skill(name=item.name, description=item.description, body=item.body, category="general", origin=origin)


def main() -> int:
    caught: Counter[str] = Counter()
    missed: Counter[str] = Counter()
    held: Counter[str] = Counter()
    total: Counter[str] = Counter()
    misses = []
    for it in malicious():
        total[it.cls] += 1
        r = screen(skill(it))
        if r.verdict == "clean":
            missed[it.cls] += 1
            misses.append(it)
        else:
            caught[it.cls] += 1
    for it in benign():
        total["benign"] += 1
        r = screen(skill(it))
        if r.verdict != "clean":
            held["benign"] += 1
            misses.append(it)
    print(f"{'class':<16}{'items':>6}{'caught':>8}{'missed':>8}{'held back':>11}")
    for cls in sorted(total):
        print(f"{cls:<16}{total[cls]:>6}{caught[cls]:>8}{missed[cls]:>8}{held[cls]:>11}")
    n_mal = sum(v for k, v in total.items() if k != "benign")
    print(f"{'malicious':<16}{n_mal:>6}{sum(caught.values()):>8}{sum(missed.values()):>8}")
    for it in misses:
        print(f"  {it.cls}: {it.name}: {(it.description + ' | ' + it.body)[:100]!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
