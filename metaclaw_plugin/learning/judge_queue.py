"""The judge queue: every main turn is scored once its evidence (the next turn, or the session's
end) is in. Its jobs are ``fl_judge_queue``'s (:data:`..store.jobs.JUDGE`).

A stronger signal (explicit feedback, a verifier, the session outcome, a correction) settles a
turn without a judge call; a verifier registered for the turn's task type runs before the judge.
Failures retry with backoff (from ``reward.backoff`` * 5 s) up to ``reward.max_attempts``; a spent daily budget
waits for the next UTC day. An outage of the judge's service (no answer, a 5xx, a rate limit) counts no attempt: the
queue stops calling, tries one turn again after a backoff that grows to an hour, and goes on when it answers, so an
outage of a day loses no turn's score.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from ..config import Settings
from ..infra.service import run_all
from ..privacy import Redactor
from ..store import AnyDatabase
from ..store.jobs import JUDGE, backoff
from ..store.ledger import settle_turn
from .ledger import Ledger
from .llm import BudgetExhausted, LLMDown, LLMError, LLMUnavailable, day_start
from .reward import JudgeResult, RewardJudge, TurnView, Verifiers, effective_reward, view_of

log = logging.getLogger("metaclaw_plugin.learning")

DEFER_MISSING_TURN = 0.25  # seconds: the turn is in the journal but not yet in SQLite
MISSING_TURN_GIVE_UP = 120.0
CLAIM_LEASE = 300.0  # seconds a claimed judge job stays with its host before another may take it
STRONGER_THAN_JUDGE = frozenset({"explicit", "verifier", "outcome", "correction"})


class JudgeQueue:
    def __init__(
        self,
        db: AnyDatabase,
        ledger: Ledger,
        judge: RewardJudge,
        verifiers: Verifiers,
        settings: Settings,
        redactor: Redactor,
        warn_once: Callable[[str, str], None],
        wake: Callable[[], None],
    ):
        self.db = db
        self.ledger = ledger
        self.judge = judge
        self.verifiers = verifiers
        self.settings = settings
        self.redactor = redactor
        self.warn_once = warn_once
        self.wake = wake
        self._outages = 0  # judge calls in a row that found the service out
        self._down_until = 0.0  # no call before this, unless forced

    def enqueue(self, turn_id: str, tenant: str, session_id: str, delay: float = 0.2, conn: Any = None) -> None:
        now = time.time()
        job = {"turn_id": turn_id, "tenant": tenant, "session_id": session_id}
        JUDGE.enqueue(self.db if conn is None else conn, job, at=now + delay, now=now)

    def pending_among(self, turn_ids: list[str]) -> set[str]:
        """The turns of ``turn_ids`` whose judge votes are still to come."""
        return {str(k) for k in JUDGE.pending_of(self.db, turn_ids)}

    def run(self, force: bool = False) -> None:
        now = time.time()
        cfg = self.settings.reward
        if now < self._down_until and not force:
            return  # the service is out: its jobs wait, due, for the next try
        due = JUDGE.due(self.db, float("inf") if force else now, cfg.batch_size)
        # Hosts that share a database judge in parallel, each turn once (a lease on each job); a host that dies
        # mid-call leaves it due again later.
        claimed = JUDGE.claim(self.db, due, lease=CLAIM_LEASE, now=now)
        if not claimed:
            return
        jobs = []
        for r in claimed:
            row = self.ledger.turn_row(r["turn_id"])
            task_type = row["task_type"] if row else None
            if self._settled_unread(r["turn_id"], task_type):
                continue  # decided without reading the turn (most turns when judging is off)
            placed = self.ledger.placed(r["turn_id"])
            if placed is None:
                if now - r["created_at"] > MISSING_TURN_GIVE_UP:
                    JUDGE.finish(self.db, [r["turn_id"]], "failed", "turn not in the store")
                else:
                    self.ledger.trajectories.flush(1.0)
                    JUDGE.defer(self.db, [r["turn_id"]], now + DEFER_MISSING_TURN)
                continue
            jobs.append((r, view_of(placed.turn, placed.next_main, placed.outcome, task_type)))
        batch = self.batch_size()
        if batch > 1:  # several turns per judge call: first settle those that need no judge, then judge the rest
            jobs = [j for j in jobs if self._guarded(j[0], partial(self._needs_judge, *j))]
            work: list[Callable[[], None]] = [
                partial(self._judge_chunk, jobs[k : k + batch]) for k in range(0, len(jobs), batch)
            ]
        else:
            work = [partial(self.score, *j) for j in jobs]
        run_all(work, cfg.concurrency, "metaclaw-score")

    def batch_size(self) -> int:
        """Turns one judge call scores: ``learning.judge_batch`` on the host's own model with one vote (each call is
        one the host pays for), else 1."""
        n = self.settings.learning.judge_batch
        return n if n > 1 and self.judge.m == 1 and self.judge.client.host is not None else 1

    def _judge_chunk(self, chunk: list[tuple[Any, TurnView]]) -> None:
        """One call for the chunk's turns; a turn whose verdict the answer lacks is judged on its own."""
        if len(chunk) == 1:
            self.score(*chunk[0])
            return
        try:
            results = self.judge.judge_many([view for _, view in chunk])
        except Exception as e:  # the whole call failed: each turn as if its own call had
            for row, _ in chunk:
                self._guarded(row, partial(_raise, e))
            return
        for (row, view), result in zip(chunk, results):
            self.score(row, view, result)

    def _settle(self, turn_id: str) -> None:
        eff = effective_reward(self.ledger.rewards_of(turn_id))
        settle_turn(self.db, turn_id, eff[0] if eff else None, eff[1] if eff else None)
        self.wake()

    def _finish(self, turn_id: str, state: str, error: str | None = None) -> None:
        JUDGE.finish(self.db, [turn_id], state, error)
        self._settle(turn_id)

    def _needs_judge(self, row: Any, view: TurnView) -> bool:
        return not self._without_judge(row, view)

    def _settled_unread(self, turn_id: str, task_type: str | None) -> bool:
        """Settle a turn whose fate needs no reading of it (a stronger signal, judged already, judging off and no
        verifier for its task type); True when it did."""
        have = {r["source"] for r in self.ledger.rewards_of(turn_id)}
        if have & STRONGER_THAN_JUDGE:
            self._finish(turn_id, "settled")
            return True
        if "judge" in have:  # judged by a host that died (or lost its lease) before marking the job done
            self._finish(turn_id, "done")
            return True
        if task_type and task_type in self.verifiers:
            return False  # the verifier reads the turn
        return self._judging_off(turn_id)

    def _judging_off(self, turn_id: str) -> bool:
        if not self.settings.reward.enabled or self.judge.available():
            self._finish(turn_id, "skipped")
            return True
        return False

    def _without_judge(self, row: Any, view: TurnView) -> bool:
        """Settle a read turn that needs no judge call (its task type's verifier, judging off); True when it did."""
        turn_id = row["turn_id"]
        if view.task_type and view.task_type in self.verifiers:
            res = self.verifiers.run(view.task_type, view)
            if res is not None:
                self.ledger.record_reward(turn_id, "verifier", res[0], res[1])
                self._finish(turn_id, "verified")
                return True
        return self._judging_off(turn_id)

    def score(self, row: Any, view: TurnView, result: JudgeResult | None = None) -> None:
        """Score one turn: ``result`` when a batched call judged it, else its own judge call (if it needs one)."""

        def judged() -> bool:
            nonlocal result
            if result is None:
                if self._without_judge(row, view):
                    return True
                result = self.judge.judge(view)
            if not result.cached:
                self._outages = 0  # the service answered
            counts = ("judge_turns", "judge_cache_hits") if result.cached else ("judge_turns",)
            detail = result.detail(self.judge.model)
            self.ledger.record_reward(row["turn_id"], "judge", result.score, detail, counts=counts)
            self._finish(row["turn_id"], "done")
            return True

        self._guarded(row, judged)

    def _guarded(self, row: Any, fn: Callable[[], bool]) -> bool:
        """``fn()``, with a judge call's failures handled for ``row``'s job (deferred, skipped or retried later);
        False when it failed."""
        turn_id = row["turn_id"]
        cfg = self.settings.reward
        try:
            return fn()
        except LLMDown as e:
            now = time.time()
            if now >= self._down_until:  # the first of this pass's turns to find it out (a batch shares one call)
                self._outages += 1
                self._down_until = now + backoff(cfg.backoff * 5, self._outages)
            self.warn_once("judge-down", f"{e}; judging waits for the service (no turn is given up meanwhile)")
            JUDGE.defer(self.db, [turn_id], self._down_until, self.redactor.redact(str(e))[:300])
            return False
        except BudgetExhausted as e:
            self.warn_once("judge-budget", f"{e}; judging resumes tomorrow (UTC)")
            JUDGE.defer(self.db, [turn_id], day_start() + 86400 + 1, "budget")
            return False
        except LLMUnavailable as e:
            self._finish(turn_id, "skipped", str(e)[:300])
            return False
        except LLMError as e:
            attempts = row["attempts"] + 1
            err = self.redactor.redact(str(e))[:300]
            first = cfg.backoff * 5  # about 5 s, 10 s, 20 s... at the default backoff
            if JUDGE.fail(
                self.db, [turn_id], attempts, err, first=first, max_attempts=cfg.max_attempts, now=time.time()
            ):
                log.warning("judging turn %s gave up after %d attempts: %s", turn_id, attempts, err)
                self._settle(turn_id)
            return False


def _raise(e: BaseException) -> bool:
    raise e
