"""Reviews: scored turns go into the sample buffer stamped with their generation (the query set), and
failures are also queued for evolution (the support set, once an evolver call reads them). The review marks and
the window are :mod:`..store.reviews`'s.

A review happens at session end, every ``evolution.every_n_turns`` main turns of a long session, and
for sessions that never ended once they are idle. A third trigger watches batches of
``evolution.batch_turns`` scored turns per tenant: a batch whose success rate is below
``evolution.success_rate_threshold`` sends its non-successful turns to the evolver too.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..config import Settings
from ..requestpath.events import SessionState
from ..store import AnyDatabase, ledger, reviews
from ..training.buffer import SampleBuffer
from ..types import Sample
from .evolve_queue import EvolutionRunner
from .judge_queue import JudgeQueue
from .ledger import Ledger
from .reward import effective_reward, is_failure
from .trials import ShadowTrials

log = logging.getLogger("metaclaw_plugin.learning")

STALE_SESSION_SWEEP = 30.0  # seconds
RECHECK_S = 5.0  # a review waiting for judge votes looks again after this long (or when a new turn marks it)


class Reviewer:
    def __init__(
        self,
        db: AnyDatabase,
        ledger: Ledger,
        judging: JudgeQueue,
        trials: ShadowTrials,
        evolution: EvolutionRunner,
        buffer: SampleBuffer,
        settings: Settings,
        live_sessions: Callable[[], Sequence[SessionState]],
        generation: Callable[[], int],
    ):
        self.db = db
        self.ledger = ledger
        self.judging = judging
        self.trials = trials
        self.evolution = evolution
        self.buffer = buffer
        self.settings = settings
        self.live_sessions = live_sessions
        self.generation = generation
        self._last_sweep = 0.0

    def run(self, force: bool = False) -> None:
        for srow in reviews.due(self.db, float("inf") if force else time.time()):
            self.review(srow, force)

    def review(self, srow: Any, force: bool = False) -> None:
        tenant, sid = srow["tenant"], srow["session_id"]
        ended = bool(srow["ended"])
        turns = ledger.unreviewed_main(self.db, tenant, sid)
        if not ended and turns:
            turns = turns[:-1]  # the newest main turn has no evidence yet
        if not turns:
            self._close(tenant, sid, ended)
            return
        now = time.time()
        since = srow["review_since"] or now
        wait = self.settings.reward.review_wait
        waiting = self.judging.pending_among([t["turn_id"] for t in turns])
        if waiting and not force and now - since < wait:
            # scores still coming: look again in a while, not on every tick (a spent judge budget defers votes to
            # tomorrow, and every session waiting so was read again on each of the loop's wake-ups)
            reviews.postpone(self.db, tenant, sid, min(now + RECHECK_S, since + wait))
            return
        # Past the wait, the scored turns settle. A turn whose votes are still to come (a judge outage, a budget spent
        # until tomorrow) stays unreviewed, and the session is looked at again a wait later: settled without its
        # score, it would never become a sample or support, and the day's turns are the slow loop's data.
        turns = [t for t in turns if t["turn_id"] not in waiting]
        ids = [t["turn_id"] for t in turns]
        scored: list[tuple[Any, float, str]] = []
        for t in turns:
            eff = effective_reward(self.ledger.rewards_of(t["turn_id"]))
            if eff is not None:
                scored.append((t, eff[0], eff[1]))
        # Turns of a running shadow trial are that experiment's evidence, not support: evolving on them
        # would refine the skill under test and restart its trial.
        on_trial = self.trials.on_trial(ids)
        failures = [t for t, sc, _ in scored if is_failure(sc) and t["turn_id"] not in on_trial]
        support_ids: set[str] = set()
        if failures and len(failures) >= self.settings.evolution.min_failures and self.evolution.on():
            support_ids = {t["turn_id"] for t in failures}
            self.evolution.enqueue(tenant, srow["review_reason"] or "review", failures)
        for t, sc, src in scored:
            ledger.set_score(self.db, t["turn_id"], sc, src)
            self.trials.score(t["turn_id"], sc)
            # a failure queued for the evolver is a query sample until a call reads it (training/buffer.py)
            self.buffer.add(Sample(t["turn_id"], sid, tenant, int(t["generation"]), float(sc)), source=src)
            if t["turn_id"] in support_ids or t["turn_id"] in on_trial:
                continue  # already sent; a trial's own evidence does not trigger evolution either
            reviews.add_to_window(self.db, tenant, t["turn_id"], sc > 0, time.time())
        if ids:
            ledger.mark_reviewed(self.db, ids)
            self.ledger.count("reviews")
        if waiting:
            reviews.postpone(self.db, tenant, sid, now + max(wait, RECHECK_S))
        else:
            self._close(tenant, sid, ended)
        self._batch_trigger(tenant)

    def _close(self, tenant: str, sid: str, ended: bool) -> None:
        reviews.close(self.db, tenant, sid, ended)

    def _batch_trigger(self, tenant: str) -> None:
        """A batch of ``batch_turns`` scored turns whose success rate is under the threshold evolves."""
        cfg = self.settings.evolution
        rows = reviews.window(self.db, tenant, cfg.batch_turns)
        if len(rows) < cfg.batch_turns:
            return
        reviews.batched(self.db, [r["turn_id"] for r in rows])
        rate = sum(r["success"] for r in rows) / len(rows)
        if rate >= cfg.success_rate_threshold or not self.evolution.on():
            return
        losers = [r["turn_id"] for r in rows if not r["success"] and not self.buffer.sent_to_evolver(r["turn_id"])]
        if not losers:
            return
        turns = self.ledger.turn_rows(losers)
        log.info(
            "batch success rate %.2f < %.2f for tenant %s: evolving from %d turns",
            rate,
            cfg.success_rate_threshold,
            tenant,
            len(turns),
        )
        self.evolution.enqueue(tenant, "low_success_rate", turns)

    def sweep_stale(self, force: bool = False) -> None:
        """Sessions that never ended (the process was killed) are reviewed once they are idle."""
        now = time.time()
        if not force and now - self._last_sweep < STALE_SESSION_SWEEP:
            return
        self._last_sweep = now
        live = {(s.tenant, s.session_id) for s in self.live_sessions()}
        cutoff = now - self.settings.sessions.session_idle_timeout
        for key in reviews.idle(self.db, cutoff):
            if key not in live:
                reviews.mark(self.db, *key, "stale", now, ended=True)
        # The buffer follows generation bumps made elsewhere (CLI approve, another process).
        self.buffer.on_generation(self.generation())
