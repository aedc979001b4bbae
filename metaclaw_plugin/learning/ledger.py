"""The turn ledger: which turns exist for learning, their sessions, their rewards and the counters.

Its rows are :mod:`..store.ledger`'s (``fl_turns``, ``fl_rewards``, ``fl_counters``). The jobs read and update
turns through it; the events from the request path land here first.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from ..store import AnyDatabase, ledger
from ..store.queries import PlacedTurn
from ..store.trajectories import TrajectoryStore
from ..types import Session


class Ledger:
    def __init__(self, db: AnyDatabase, trajectories: TrajectoryStore):
        self.db = db
        self.trajectories = trajectories

    def count(self, key: str, n: int = 1) -> None:
        ledger.bump(self.db, key, n)

    # Rewards (mirrored: the trajectory store is the record, fl_rewards is what the jobs read back at once)
    def record_reward(
        self, turn_id: str, source: str, score: float, detail: Any = None, *, counts: Sequence[str] = ()
    ) -> None:
        """Record a reward; ``counts`` are bumped in the same transaction, so a crash cannot split them."""
        self.trajectories.record_reward(turn_id, source, score, detail)
        if not counts:
            self.note_reward(turn_id, source, score)
            return
        with self.db.transaction() as tx:
            ledger.put_reward(tx, turn_id, source, score, time.time())
            for key in counts:
                ledger.bump(tx, key)

    def note_reward(self, turn_id: str, source: str, score: float) -> None:
        ledger.put_reward(self.db, turn_id, source, score, time.time())

    def rewards_of(self, turn_id: str) -> list[dict[str, Any]]:
        rows = ledger.rewards(self.db, turn_id)
        try:
            for r in self.trajectories.rewards(turn_id):
                rows.setdefault(r["source"], float(r["score"]))
        except Exception:
            pass
        return [{"source": k, "score": v} for k, v in rows.items()]

    def turn_row(self, turn_id: str) -> Any:
        return ledger.turn(self.db, turn_id)

    def turn_rows(self, turn_ids: list[str]) -> list[Any]:
        return ledger.turns(self.db, turn_ids)

    def placed(self, turn_id: str) -> PlacedTurn | None:
        """The turn as stored, the session's next main turn (its evidence: the user's reply, which may carry a
        correction; a side turn in between, such as a title or a summary, is not the user speaking), and the
        ended session's outcome when it is the last main turn."""
        return self.trajectories.placed_turn(turn_id)

    def adopt(self, session: Session) -> None:
        """Give a session from the store (maybe from before learning was on) its ledger rows."""
        now = time.time()
        for i, t in enumerate(session.turns):
            ledger.insert_turn(self.db, t, i + 1, now)
