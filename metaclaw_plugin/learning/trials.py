"""Shadow trials: a skill on trial is injected into ``evolution.shadow_fraction`` of the turns it
matches (the arm is chosen per turn by the skill bank); both arms' turns are scored like any other.
Its evidence is :mod:`..store.shadow`'s (``fl_shadow``). Two kinds of trial: a new skill (quarantined, ``metadata.promotion: shadow``)
against no skill, and a new version of an active skill against the version being served. Evidence
is keyed by the generation of what is on trial, so a restarted trial starts from nothing.

With at least ``shadow_min_samples`` scored turns per arm, the skill is promoted when the posterior
probability that its success rate beats the control arm's is at least ``shadow_confidence``, and
retired when it is at most ``1 - shadow_confidence`` (Beta(1,1) priors on each arm's success rate,
success = reward > 0, exact formula for P(p_with > p_without)). A trial still undecided after
``shadow_max_samples`` per arm retires the skill: no evidence that it helps, and it costs tokens.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..config import Settings
from ..skillbank.bank import SkillBank, trials_running
from ..store import AnyDatabase, shadow
from ..store.backend import Query

log = logging.getLogger("metaclaw_plugin.learning")

EVALUATE_EVERY = 2.0  # seconds


def _lbeta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def prob_b_beats_a(s_a: int, n_a: int, s_b: int, n_b: int) -> float:
    """P(p_b > p_a) with p ~ Beta(1 + successes, 1 + failures) for each arm (exact sum; Evan Miller)."""
    a_a, b_a = 1 + s_a, 1 + n_a - s_a
    a_b, b_b = 1 + s_b, 1 + n_b - s_b
    total = 0.0
    for i in range(a_b):
        total += math.exp(_lbeta(a_a + i, b_a + b_b) - math.log(b_b + i) - _lbeta(1 + i, b_b) - _lbeta(a_a, b_a))
    return min(1.0, max(0.0, total))


@dataclass
class TrialStats:
    skill: str
    n_with: int
    s_with: int
    n_without: int
    s_without: int
    p_better: float
    version: bool = False  # a new version against the served one (else a new skill against none)

    def as_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "p_better": round(self.p_better, 4)}


def turns_on_trial(db: AnyDatabase, turn_ids: list[str]) -> set[str]:
    """The turns among these that are a shadow trial's evidence (they never become support)."""
    return shadow.on_trial(db, turn_ids)


def shadow_decision(st: TrialStats, min_samples: int, max_samples: int, confidence: float) -> str | None:
    if min(st.n_with, st.n_without) < min_samples:
        return None
    if st.p_better >= confidence:
        return "promote"
    if st.p_better <= 1 - confidence:
        return "retire"
    if min(st.n_with, st.n_without) >= max_samples:
        return "retire"
    return None


def evidence(query: Query, name: str, generation: int, version: bool = False) -> TrialStats:
    """The scored turns of each arm of one trial so far (``query`` runs SQL: a Database's or a
    read-only connection's), and P(with beats without)."""
    rows = shadow.arm_scores(query, name, generation)
    w = [sc for arm, sc in rows if arm == "with"]
    o = [sc for arm, sc in rows if arm == "without"]
    sw, so = sum(1 for x in w if x > 0), sum(1 for x in o if x > 0)
    return TrialStats(name, len(w), sw, len(o), so, prob_b_beats_a(so, len(o), sw, len(w)), version)


class ShadowTrials:
    def __init__(
        self,
        db: AnyDatabase,
        skills: SkillBank,
        settings: Settings,
        count: Callable[[str], None],
        on_generation: Callable[[], None],
    ):
        self.db = db
        self.skills = skills
        self.settings = settings
        self.count = count
        self.on_generation = on_generation
        self._last = 0.0

    def note_arms(self, conn: Any, turn_id: str, arms: dict[str, str], now: float) -> None:
        """Which arm of which trial a turn was in (inside the ledger's transaction for the turn)."""
        skills, pending = self.skills.skills, self.skills.pending
        for name, arm in arms.items():
            sk = pending.get(name) or skills.get(name)
            if sk is not None and arm in ("with", "without"):
                shadow.note_arm(conn, turn_id, name, sk.generation, arm, now)

    def on_trial(self, turn_ids: list[str]) -> set[str]:
        """The turns among these that are a running trial's evidence."""
        return turns_on_trial(self.db, turn_ids)

    def score(self, turn_id: str, score: float) -> None:
        shadow.score(self.db, turn_id, score)

    def stats(self) -> list[TrialStats]:
        running = trials_running(self.skills.skills, self.skills.pending)
        return [evidence(self.db.query, name, gen, version) for name, gen, version in running]

    def run(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < EVALUATE_EVERY:
            return
        self._last = now
        cfg = self.settings.evolution
        changed = False
        for st in self.stats():
            decision = shadow_decision(st, cfg.shadow_min_samples, cfg.shadow_max_samples, cfg.shadow_confidence)
            if decision is None:
                continue
            reason = (
                f"shadow trial: {decision} (with {st.s_with}/{st.n_with} successes, without "
                f"{st.s_without}/{st.n_without}, P(better)={st.p_better:.3f}, threshold {cfg.shadow_confidence})"
            )
            store = self.skills.store
            if st.version and decision == "promote":
                store.promote_pending(st.skill, actor="shadow-trial", reason=reason)
            elif st.version:
                store.discard_pending(st.skill, actor="shadow-trial", reason=reason)
            else:
                status = "active" if decision == "promote" else "retired"
                store.set_status(st.skill, status, actor="shadow-trial", reason=reason, bump=status == "active")
            self.count(f"shadow_{decision}")
            log.info("%s: %s", st.skill, reason)
            changed = True
        if changed:
            self.on_generation()
