"""Evidence for conventions: how the tenant's scored turns went with each convention injected against
without it, so that when the convention budget is full the weakest rule is the one left out.

A convention is on every main turn of its tenant once active, so its "without" turns are mostly the
ones before it existed, or those where the budget left it out; the score is the difference of the two
success rates with a Beta(1,1) prior on each (0 with no evidence either way). It only orders
conventions, it never retires one (that is the shadow trial's job).
"""

from __future__ import annotations

import json
import logging
import time
from collections import defaultdict
from typing import Any

from ..skillbank.bank import SkillBank
from ..store import AnyDatabase, ledger

log = logging.getLogger("metaclaw_plugin.learning")

EVERY = 300.0  # seconds between recomputations
RECENT_TURNS = 5000  # scored main turns looked at, newest first
MIN_CHANGE = 0.02  # a score that moves less than this does not rewrite the file


def success_rate(successes: int, n: int) -> float:
    return (successes + 1) / (n + 2)


class ConventionEvidence:
    def __init__(self, db: AnyDatabase, skills: SkillBank):
        self.db = db
        self.skills = skills
        self._last = 0.0
        self.written: dict[str, float] = {}

    def compute(self) -> dict[str, dict[str, Any]]:
        conventions = [s for s in self.skills.skills.values() if s.kind == "convention" and s.status == "active"]
        if not conventions:
            return {}
        rows = ledger.scored_main(self.db, RECENT_TURNS)
        seen: dict[str, list[tuple[set[str], bool]]] = defaultdict(list)
        for r in rows:
            try:
                injected = set(json.loads(r["injected"] or "[]"))
            except ValueError:
                injected = set()
            seen[r["tenant"]].append((injected, float(r["score"]) > 0))
        out = {}
        for c in conventions:
            tenants = [c.tenant] if c.tenant is not None else list(seen)
            w = [ok for t in tenants for inj, ok in seen.get(t, ()) if c.name in inj]
            o = [ok for t in tenants for inj, ok in seen.get(t, ()) if c.name not in inj]
            score = success_rate(sum(w), len(w)) - success_rate(sum(o), len(o)) if w and o else 0.0
            out[c.name] = {
                "n_with": len(w),
                "s_with": sum(w),
                "n_without": len(o),
                "s_without": sum(o),
                "score": round(score, 4),
            }
        return out

    def run(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < EVERY:
            return
        self._last = now
        evidence = self.compute()
        scores = {n: e["score"] for n, e in evidence.items()}
        if scores.keys() == self.written.keys() and all(abs(scores[n] - self.written[n]) < MIN_CHANGE for n in scores):
            return
        self.skills.store.write_evidence(evidence)
        self.written = scores
        self.skills.refresh(force=True)
