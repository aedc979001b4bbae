"""The judge queue: every main turn is scored once its evidence (the next turn, or the session's
end) is in. Its jobs are ``fl_judge_queue``'s (:data:`..store.jobs.JUDGE`).

A stronger signal (explicit feedback, a verifier, the session outcome, a correction) settles a
turn without a judge call; a verifier registered for the turn's task type runs before the judge.
Failures retry with backoff (from ``reward.backoff`` * 5 s) up to ``reward.max_attempts``; a spent daily budget
waits for the next UTC day.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..config import Settings
from ..privacy import Redactor
from ..store import AnyDatabase
from ..store.jobs import JUDGE
from ..store.ledger import settle_turn
from .ledger import Ledger
from .llm import BudgetExhausted, LLMError, LLMUnavailable, day_start
from .reward import RewardJudge, TurnView, Verifiers, effective_reward, view_of

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

    def enqueue(self, turn_id: str, tenant: str, session_id: str, delay: float = 0.2, conn: Any = None) -> None:
        now = time.time()
        job = {"turn_id": turn_id, "tenant": tenant, "session_id": session_id}
        JUDGE.enqueue(self.db if conn is None else conn, job, at=now + delay, now=now)

    def pending_among(self, turn_ids: list[str]) -> int:
        return JUDGE.count_pending(self.db, turn_ids)

    def run(self, force: bool = False) -> None:
        now = time.time()
        cfg = self.settings.reward
        due = JUDGE.due(self.db, float("inf") if force else now, cfg.batch_size)
        # Hosts that share a database judge in parallel, each turn once (a lease on each job); a host that dies
        # mid-call leaves it due again later.
        claimed = JUDGE.claim(self.db, due, lease=CLAIM_LEASE, now=now)
        if not claimed:
            return
        get = self.ledger.session_cache()
        jobs = []
        for r in claimed:
            session = get(r["tenant"], r["session_id"])
            turn, nxt, is_last = self.ledger.locate(session, r["turn_id"])
            if turn is None:
                if now - r["created_at"] > MISSING_TURN_GIVE_UP:
                    JUDGE.finish(self.db, [r["turn_id"]], "failed", "turn not in the store")
                else:
                    self.ledger.trajectories.flush(1.0)
                    JUDGE.defer(self.db, [r["turn_id"]], now + DEFER_MISSING_TURN)
                continue
            outcome = session.outcome if (is_last and session is not None and session.ended_at) else None
            row = self.ledger.turn_row(turn.turn_id)
            jobs.append((r, view_of(turn, nxt, outcome, row["task_type"] if row else None)))
        if len(jobs) > 1 and cfg.concurrency > 1:
            with ThreadPoolExecutor(
                max_workers=min(cfg.concurrency, len(jobs)), thread_name_prefix="metaclaw-score"
            ) as ex:
                list(ex.map(lambda j: self.score(*j), jobs))
        else:
            for j in jobs:
                self.score(*j)

    def score(self, row: Any, view: TurnView) -> None:
        turn_id = row["turn_id"]
        cfg = self.settings.reward

        def settle() -> None:
            eff = effective_reward(self.ledger.rewards_of(turn_id))
            settle_turn(self.db, turn_id, eff[0] if eff else None, eff[1] if eff else None)
            self.wake()

        def finish(state: str, error: str | None = None) -> None:
            JUDGE.finish(self.db, [turn_id], state, error)
            settle()

        try:
            have = {r["source"] for r in self.ledger.rewards_of(turn_id)}
            if have & STRONGER_THAN_JUDGE:
                finish("settled")
                return
            if "judge" in have:  # judged by a host that died (or lost its lease) before marking the job done
                finish("done")
                return
            if view.task_type and view.task_type in self.verifiers:
                res = self.verifiers.run(view.task_type, view)
                if res is not None:
                    self.ledger.record_reward(turn_id, "verifier", res[0], res[1])
                    finish("verified")
                    return
            if not cfg.enabled or self.judge.available():
                finish("skipped")
                return
            result = self.judge.judge(view)
            counts = ("judge_turns", "judge_cache_hits") if result.cached else ("judge_turns",)
            self.ledger.record_reward(turn_id, "judge", result.score, result.detail(self.judge.model), counts=counts)
            finish("done")
        except BudgetExhausted as e:
            self.warn_once("judge-budget", f"{e}; judging resumes tomorrow (UTC)")
            JUDGE.defer(self.db, [turn_id], day_start() + 86400 + 1, "budget")
        except LLMUnavailable as e:
            finish("skipped", str(e)[:300])
        except LLMError as e:
            attempts = row["attempts"] + 1
            err = self.redactor.redact(str(e))[:300]
            first = cfg.backoff * 5  # about 5 s, 10 s, 20 s... at the default backoff
            if JUDGE.fail(
                self.db, [turn_id], attempts, err, first=first, max_attempts=cfg.max_attempts, now=time.time()
            ):
                log.warning("judging turn %s gave up after %d attempts: %s", turn_id, attempts, err)
                settle()
