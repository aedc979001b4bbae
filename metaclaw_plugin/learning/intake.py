"""Intake: what the request path published becomes ledger rows, judge jobs and review marks.

Runs in the plugin's background worker and only writes a few rows per event; the slow work (judge
calls, evolver calls) happens in the learning loop's own thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ..config import Settings
from ..requestpath.events import Feedback, SessionEnd, TurnRecorded
from ..requestpath.feedback import detect_correction
from ..skillbank.bank import SHADOW_KEY
from ..store import ledger, reviews
from ..text import message_text
from ..types import Turn, task_type_of
from .judge_queue import JudgeQueue
from .ledger import Ledger
from .trials import ShadowTrials


class Intake:
    def __init__(
        self, ledger: Ledger, judging: JudgeQueue, trials: ShadowTrials, settings: Settings, wake: Callable[[], None]
    ):
        self.ledger = ledger
        self.db = ledger.db
        self.judging = judging
        self.trials = trials
        self.settings = settings
        self.wake = wake

    def on_turn(self, ev: TurnRecorded) -> None:
        turn, ctx = ev.turn, ev.ctx
        now = time.time()
        task_type = task_type_of(ctx)
        arms: dict[str, str] = {}
        if ctx is not None and isinstance(ctx.metadata, dict):
            arms = dict(ctx.metadata.get(SHADOW_KEY) or {})
        phrase = self._correction(turn) if turn.kind == "main" and self.settings.reward.detect_corrections else None
        # One transaction: a review never sees the session without the judge job it must wait for, and the judge
        # job of the previous turn comes with the correction this turn makes of it.
        with self.db.transaction() as c:
            seq = ledger.next_seq(c, turn.tenant, turn.session_id)
            ledger.insert_turn(c, turn, seq, now, task_type)
            self.trials.note_arms(c, turn.turn_id, arms, now)
            if turn.kind != "main":
                return
            prev = ledger.main_before(c, turn.tenant, turn.session_id, seq)
            if prev is not None and phrase:
                self.ledger.trajectories.record_reward(prev, "correction", -1.0, {"phrase": phrase[:80]})
                ledger.put_reward(c, prev, "correction", -1.0, now)
            if prev is not None:
                self.judging.enqueue(prev, turn.tenant, turn.session_id, conn=c)
            # every_n_turns main turns have their evidence now (the newest waits for its own)
            if reviews.count_main_turn(c, turn.tenant, turn.session_id, now) > self.settings.evolution.every_n_turns:
                reviews.mark(c, turn.tenant, turn.session_id, "every_n_turns", now)
        self.wake()

    @staticmethod
    def _correction(turn: Turn) -> str | None:
        """The correction phrase of the turn's last user message, if it makes one of the previous answer."""
        iu = next(
            (
                i
                for i in range(len(turn.messages) - 1, -1, -1)
                if isinstance(turn.messages[i], dict) and turn.messages[i].get("role") == "user"
            ),
            None,
        )
        return detect_correction(message_text(turn.messages[iu])) if iu is not None else None

    def on_session_end(self, ev: SessionEnd) -> None:
        now = time.time()
        outcome = ev.outcome or {}
        success = outcome.get("success") if isinstance(outcome.get("success"), bool) else None
        last = ledger.last_main(self.db, ev.tenant, ev.session_id)
        if last is not None and success is not None:
            self.ledger.record_reward(last, "outcome", 1.0 if success else -1.0, {"reason": ev.reason})
        with self.db.transaction() as c:  # the judge job and the review appear together
            if last is not None:
                self.judging.enqueue(last, ev.tenant, ev.session_id, conn=c)
            reviews.end(c, ev.tenant, ev.session_id, success, now)
        self.wake()

    def on_feedback(self, ev: Feedback) -> None:
        if ev.score is None or not ev.turn_id:
            return
        self.ledger.note_reward(ev.turn_id, "explicit", ev.score)
        self.wake()
