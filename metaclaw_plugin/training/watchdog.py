"""The live watch (``training.gate.watch``): after a step is published, the rewards of the turns its weights answered
are compared with the previous version's; when they fall beyond noise, the previous version is published again
through ``train rollback``'s path (:func:`~.rollback.rollback`), and the trainer trains on from it.

* **Which weights answered a turn.** The served policy records every answer's tokens with the step of the weights
  that sampled it (:mod:`.tokens`); a sample's record is found as the trainer finds it (:func:`~.samples.build_sample`:
  the answer and the prompt ids rebuilt from the turn). A turn another model answered has no record and counts for
  neither version. A version's turns are those answered by its step since it was published (its ``train_steps``
  row): a step number reused after a rollback does not inherit the abandoned step's turns.
* **The test.** Each version needs ``watch_min_turns`` rewarded turns; the new one is rolled back when its mean
  reward is below the previous one's by more than ``watch_tolerance + z * standard error`` (Welch's, the gate's
  ``z``). Rewards are the slow loop's own (the buffer's samples: settled effective rewards).
* It runs in the trainer's thread at the start of each training run (:meth:`~.trainer.Trainer.run`), never on the
  request path; a failure is logged and counted, and training goes on (fail open). Rollbacks are counted and said
  in ``status`` (``gate.rollbacks``, ``gate.last_rollback``); the rollback itself is in ``training.rollbacks``.
* Per tenant when a tenant is named (:meth:`LiveWatch.check`; the trainer names each tenant with weights under
  ``training.scope: tenant``): a tenant's versions are its own steps, judged on its own turns, and a fall rolls back
  that tenant's weights only.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..store import AnyDatabase, runtime_state, steps
from ..store.trajectories import TrajectoryStore
from .buffer import SampleBuffer
from .gate import KEY
from .rollback import RollbackError, rollback
from .samples import SampleError, build_sample
from .weights import latest

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WatchOptions:
    min_turns: int = 8
    tolerance: float = 0.0
    z: float = 1.64
    window: int = 400  # the newest samples read

    @classmethod
    def from_settings(cls, g: Any) -> WatchOptions:
        return cls(
            min_turns=g.watch_min_turns, tolerance=g.watch_tolerance, z=g.z, window=max(400, 20 * g.watch_min_turns)
        )


def dropped(new: Sequence[float], old: Sequence[float], tolerance: float, z: float) -> tuple[float, float]:
    """(drop of the mean, noise band): the new version is worse beyond noise when drop > band."""
    mn, mo = sum(new) / len(new), sum(old) / len(old)
    var = sum((x - mn) ** 2 for x in new) / max(len(new) - 1, 1) / len(new)
    var += sum((x - mo) ** 2 for x in old) / max(len(old) - 1, 1) / len(old)
    return mo - mn, tolerance + z * math.sqrt(var)


class LiveWatch:
    def __init__(
        self,
        options: WatchOptions,
        db: AnyDatabase,
        buffer: SampleBuffer,
        trajectories: TrajectoryStore,
        tokenizer: Any,
        backend: str,
        keep: Callable[[Sequence[str]], None] | None = None,
    ):
        self.options = options
        self.db = db
        self.buffer = buffer
        self.trajectories = trajectories
        self.tokenizer = tokenizer
        self.backend = backend
        self.keep = keep  # tinker: keeps the target's checkpoints on the service
        self.errors = 0

    def check(self, tenant: str | None = None) -> dict[str, Any] | None:
        """Roll the latest version back when its live rewards fell beyond noise; the rollback, or None. Never
        raises: a failure is logged and counted."""
        try:
            return self._check(tenant)
        except Exception:
            self.errors += 1
            log.exception("the live watch failed; training goes on without it this time")
            return None

    def _versions(self, tenant: str | None) -> tuple[int, float, int, float] | None:
        """(latest step, its publication time, the previous published step, its publication time) of ``tenant``'s
        weights (None: the latest of any)."""
        ref = latest(self.db, tenant)
        if ref is None or ref.backend != self.backend:
            return None
        at = steps.published(self.db, ref.tenant)
        earlier = [s for s in at if s < ref.step]
        if ref.step not in at or not earlier:
            return None
        prev = max(earlier)
        return ref.step, at[ref.step], prev, at[prev]

    def _rewards(self, tenant: str | None, versions: tuple[int, float, int, float]) -> tuple[list[float], list[float]]:
        new_step, new_at, old_step, old_at = versions
        new: list[float] = []
        old: list[float] = []
        for s in self.buffer.rewarded(self.options.window, tenant):
            turn = self.trajectories.get_turn(s.turn_id)
            if turn is None or turn.response is None:
                continue
            try:
                built = build_sample(turn, s, self.tokenizer, self.db)
            except SampleError:
                continue
            if built.logprobs is None:  # another model answered: neither version's
                continue
            step = built.sampled_step or 0
            if step == new_step and turn.created_at >= new_at:
                new.append(s.reward)
            elif step == old_step and old_at <= turn.created_at < new_at:
                old.append(s.reward)
        return new, old

    def _check(self, tenant: str | None) -> dict[str, Any] | None:
        versions = self._versions(tenant)
        if versions is None:
            return None
        new, old = self._rewards(tenant, versions)
        if min(len(new), len(old)) < self.options.min_turns:
            return None
        drop, band = dropped(new, old, self.options.tolerance, self.options.z)
        if drop <= band:
            return None
        new_step, _, old_step, _ = versions
        why = (
            f"live rewards of step {new_step} fell by {drop:.3g} against step {old_step}'s "
            f"(noise band {band:.3g}; {len(new)} and {len(old)} turns)"
        )
        try:
            done = rollback(self.db, old_step, keep=self.keep, tenant=tenant)
        except RollbackError as e:
            log.error("%s, but it cannot be rolled back: %s", why, e)
            event = {"from": new_step, "to": old_step, "why": why, "tenant": tenant, "failed": str(e)}
            self._note({**event, "at": time.time()})
            return None
        log.warning("%s: rolled back to step %d", why, old_step)
        self._note({"from": new_step, "to": old_step, "why": why, "tenant": tenant, "at": time.time()})
        return done

    def _note(self, event: dict[str, Any]) -> None:
        got = runtime_state.get(self.db, KEY)
        state: dict[str, Any] = dict(got.value) if got else {}
        if "failed" not in event:
            state["rollbacks"] = state.get("rollbacks", 0) + 1
        state["last_rollback"] = event
        runtime_state.put(self.db, KEY, state)
