#!/usr/bin/env python
"""Which secrets of the corpus (``tests/support/secret_corpus.py``) survive redaction, per kind and per class.

    python benchmarks/secret_corpus.py                 # the working tree's redactor
    python benchmarks/secret_corpus.py --rev 3516b71   # privacy.py as of a git revision (before/after)
    python benchmarks/secret_corpus.py --json

A kind is *caught* when none of its secret values, nor any 16-character piece of one (a line of a key
block), is left in the redacted text. Benign look-alikes are *kept* when they come through unchanged.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "support"))

from secret_corpus import BENIGN, build, leaked  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
from redaction import load_privacy  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", default=None, help="git revision whose privacy.py to measure (default: working tree)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true", help="print the redacted text of every miss")
    args = ap.parse_args()
    red = load_privacy(args.rev).Redactor()
    rows = []
    by_class: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for case in build():
        out = red.redact(case.text)
        ok = not any(leaked(s, out) for s in case.secrets)
        rows.append({"kind": case.kind, "class": case.cls, "caught": ok, "out": out})
        by_class[case.cls][0 if ok else 1] += 1
    benign = [{"text": t, "kept": red.redact(t) == t, "out": red.redact(t)} for t in BENIGN]
    caught = sum(r["caught"] for r in rows)
    if args.json:
        print(
            json.dumps(
                {
                    "rev": args.rev or "worktree",
                    "kinds": len(rows),
                    "caught": caught,
                    "by_class": by_class,
                    "missed": [r["kind"] for r in rows if not r["caught"]],
                    "benign_changed": [b["text"] for b in benign if not b["kept"]],
                },
                indent=2,
            )
        )
        return
    print(f"redactor: {args.rev or 'working tree'}; {caught}/{len(rows)} kinds caught\n")
    print("| class | caught | missed |\n|---|---|---|")
    for cls, (c, m) in sorted(by_class.items()):
        print(f"| {cls} | {c} | {m} |")
    missed = [r for r in rows if not r["caught"]]
    print("\nmissed: " + (", ".join(r["kind"] for r in missed) or "none"))
    if args.verbose:
        for r in missed:
            print(f"  {r['kind']}: {r['out']!r}")
    changed = [b for b in benign if not b["kept"]]
    print(f"benign look-alikes kept: {len(benign) - len(changed)}/{len(benign)}")
    for b in changed:
        print(f"  changed: {b['text']!r} -> {b['out']!r}")


if __name__ == "__main__":
    main()
