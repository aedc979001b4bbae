"""Intake: what the request path published becomes ledger rows, judge jobs and review marks.

Runs in the plugin's background worker and only writes a few rows per event; the slow work (judge
calls, evolver calls) happens in the learning loop's own thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ..config import Settings
from ..events import Feedback, SessionEnd, TurnRecorded
from ..feedback import detect_correction
from ..skillbank.bank import SHADOW_KEY
from ..text import message_text
from ..types import task_type_of
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
        with self.db.transaction() as c:
            seq = c.execute(
                "SELECT COALESCE(MAX(seq), 0) + 1 FROM fl_turns WHERE tenant = ? AND session_id = ?",
                (turn.tenant, turn.session_id),
            ).fetchone()[0]
            c.execute(
                "INSERT OR IGNORE INTO fl_turns(turn_id, tenant, session_id, kind, seq, generation, task_type, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (turn.turn_id, turn.tenant, turn.session_id, turn.kind, seq, turn.skill_generation, task_type, now),
            )
            self.trials.note_arms(c, turn.turn_id, arms, now)
            if turn.kind != "main":
                return
            prev = c.execute(
                "SELECT turn_id FROM fl_turns WHERE tenant = ? AND session_id = ? AND kind = 'main' AND seq < ? "
                "ORDER BY seq DESC LIMIT 1",
                (turn.tenant, turn.session_id, seq),
            ).fetchone()
            c.execute(
                "INSERT INTO fl_sessions(tenant, session_id, main_turns, since_review, last_at) VALUES (?, ?, 1, 1, ?) "
                "ON CONFLICT(tenant, session_id) DO UPDATE SET main_turns = main_turns + 1, since_review = since_review + 1, "
                "last_at = excluded.last_at",
                (turn.tenant, turn.session_id, now),
            )
            row = c.execute(
                "SELECT since_review FROM fl_sessions WHERE tenant = ? AND session_id = ?",
                (turn.tenant, turn.session_id),
            ).fetchone()
            # every_n_turns main turns have their evidence now (the newest waits for its own)
            review = bool(row and row[0] > self.settings.evolution.every_n_turns)
        if prev is not None and self.settings.reward.detect_corrections:
            iu = next(
                (
                    i
                    for i in range(len(turn.messages) - 1, -1, -1)
                    if isinstance(turn.messages[i], dict) and turn.messages[i].get("role") == "user"
                ),
                None,
            )
            phrase = detect_correction(message_text(turn.messages[iu])) if iu is not None else None
            if phrase:
                self.ledger.record_reward(prev[0], "correction", -1.0, {"phrase": phrase[:80]})
        # One transaction: a review never sees the session without the judge job it must wait for.
        with self.db.transaction() as c:
            if prev is not None:
                self.judging.enqueue(prev[0], turn.tenant, turn.session_id, conn=c)
            if review:
                c.execute(
                    "UPDATE fl_sessions SET review_due = ?, review_reason = 'every_n_turns', "
                    "review_since = COALESCE(review_since, ?) WHERE tenant = ? AND session_id = ?",
                    (now, now, turn.tenant, turn.session_id),
                )
        self.wake()

    def on_session_end(self, ev: SessionEnd) -> None:
        now = time.time()
        outcome = ev.outcome or {}
        success = outcome.get("success") if isinstance(outcome.get("success"), bool) else None
        last = self.db.query(
            "SELECT turn_id FROM fl_turns WHERE tenant = ? AND session_id = ? AND kind = 'main' ORDER BY seq DESC LIMIT 1",
            [ev.tenant, ev.session_id],
        )
        if last and success is not None:
            self.ledger.record_reward(last[0]["turn_id"], "outcome", 1.0 if success else -1.0, {"reason": ev.reason})
        with self.db.transaction() as c:  # the judge job and the review appear together
            if last:
                self.judging.enqueue(last[0]["turn_id"], ev.tenant, ev.session_id, conn=c)
            c.execute(
                "INSERT INTO fl_sessions(tenant, session_id, last_at) VALUES (?, ?, ?) ON CONFLICT(tenant, session_id) "
                "DO NOTHING",
                (ev.tenant, ev.session_id, now),
            )
            c.execute(
                "UPDATE fl_sessions SET ended = 1, success = ?, review_due = ?, review_reason = 'session_end', "
                "review_since = COALESCE(review_since, ?) WHERE tenant = ? AND session_id = ?",
                (None if success is None else int(success), now, now, ev.tenant, ev.session_id),
            )
        self.wake()

    def on_feedback(self, ev: Feedback) -> None:
        if ev.score is None or not ev.turn_id:
            return
        self.ledger.note_reward(ev.turn_id, "explicit", ev.score)
        self.wake()
