"""The support/query sample buffer, in the home's database (survives restarts, shared by processes on one home;
its tables and statements are :mod:`metaclaw_plugin.store.samples`'s).

* Turns an evolver call read are **support** data: they taught the skills and are never trained on after
  that (:meth:`SampleBuffer.take_support`; a support turn that was still queued is taken out). A trigger
  only *reserves* the turns it queues for the evolver (:meth:`SampleBuffer.reserve_support`: no turn
  reaches the evolver twice); until a call reads them they stay query samples of their generation. A
  sample trained before the skill it teaches exists was trained under the skills it was answered with,
  which is what the separation protects; once the skill is written the generation bumps and what is left
  of that generation goes stale.
* Later turns are **query** samples, stamped with the skill generation they were produced under.
* When the generation bumps, the pending batch and every older sample are dropped and counted.
* :meth:`SampleBuffer.drain` reads the current generation (from the skill store) before it takes a
  batch, so no drained batch can hold a sample older than the generation current at the drain,
  even if the bump happened in another process. That is invariant 2 of the design.

States: ``queued`` -> ``pending`` (handed to the trainer in a batch) -> ``trained`` (acknowledged),
``skipped`` (consumed by a step that had no signal to learn from: every advantage 0), or ``dropped`` (stale);
or ``validation``: held back from training, a validation set of the user's own rewarded turns (kept across
generations; :meth:`SampleBuffer.hold_back`). Support turns live in their own table.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..store import AnyDatabase, Database, samples
from ..store.samples import BufferStats
from ..store.samples import read_stats as read_stats
from ..types import Sample


class SampleBuffer:
    def __init__(self, db_path: Path | str | AnyDatabase, generation_fn: Callable[[], int] | None = None):
        self.db = Database(db_path) if isinstance(db_path, Path | str) else db_path
        self._generation_fn = generation_fn

    @property
    def generation(self) -> int:
        return samples.generation(self.db)

    # Generation -----------------------------------------------------------------------------------
    def _sync(self, c: Any, generation: int | None) -> int:
        """Bring the buffer to ``generation`` (never backwards); drop what became stale. Returns it."""
        current = samples.meta(c, "generation")
        if generation is None or generation <= current:
            return current
        n = samples.drop_older(c, generation)
        samples.set_meta(c, "dropped_stale", samples.meta(c, "dropped_stale") + n)
        samples.set_meta(c, "generation", generation)
        return generation

    def on_generation(self, generation: int) -> int:
        """The skill generation bumped: drop the pending batch and every older sample. Returns how many."""
        with self.db.transaction() as c:
            before = samples.meta(c, "dropped_stale")
            self._sync(c, generation)
            return samples.meta(c, "dropped_stale") - before

    def _current(self) -> int | None:
        if self._generation_fn is None:
            return None
        try:
            return int(self._generation_fn())
        except Exception:
            return None

    # Support ---------------------------------------------------------------------------------------
    def mark_support(self, turns: Iterable[tuple[str, str, str, int]], reason: str = "evolution") -> int:
        """Record turns (turn_id, session_id, tenant, generation) that an evolver call read as support data;
        unqueue them. Returns how many were unqueued."""
        items = list(turns)
        with self.db.transaction() as c:
            self.reserve_support(c, items, reason)
            return self.take_support(c, [t[0] for t in items])

    @staticmethod
    def reserve_support(c: Any, turns: Iterable[tuple[str, str, str, int]], reason: str) -> list[str]:
        """Reserve turns for the evolver inside the caller's transaction ``c``: the turn ids that no trigger
        reserved before (a caller that queues them sends each turn once). They stay query samples until
        :meth:`take_support`."""
        return samples.reserve(c, turns, reason)

    @staticmethod
    def take_support(c: Any, turn_ids: Iterable[str]) -> int:
        """An evolver call read these reserved turns: they are support from now on, and those still queued or
        pending are taken out of training. Returns how many were taken out."""
        return samples.take(c, turn_ids)

    def sent_to_evolver(self, turn_id: str) -> bool:
        """Whether a trigger already sent this turn to the evolver (reserved, or read by a call): no trigger sends
        it again. A reserved turn still trains; only a read one is support (:meth:`take_support`)."""
        return samples.reserved(self.db, turn_id)

    # Query samples -----------------------------------------------------------------------------------
    def add(self, sample: Sample, source: str | None = None) -> bool:
        """Queue a query sample. Refused (False) if an evolver call read it (support), already known, or stale."""
        with self.db.transaction() as c:
            current = self._sync(c, self._current())
            if samples.is_support(c, sample.turn_id):
                return False
            if sample.skill_generation < current:
                samples.set_meta(c, "rejected_stale", samples.meta(c, "rejected_stale") + 1)
                return False
            return samples.insert(c, sample, source)

    def drain(
        self, batch_size: int, *, generation: int | None = None, partial: bool = False, tenant: str | None = None
    ) -> list[Sample]:
        """Take a batch of fresh samples (generation == current; of ``tenant`` only when given) for the trainer;
        they become pending.

        ``generation`` (or the generation function) is read first, so a bump that happened anywhere
        drops stale samples before the batch is formed. Returns [] when fewer than ``batch_size``
        fresh samples wait, unless ``partial``."""
        gen_now = generation if generation is not None else self._current()
        with self.db.transaction() as c:
            current = self._sync(c, gen_now)
            batch = samples.queued(c, current, batch_size, tenant=tenant)
            if not batch or (len(batch) < batch_size and not partial):
                return []
            samples.form_batch(c, f"b{time.time_ns()}", [s.turn_id for s in batch])
        return batch

    def fresh_count(self) -> int:
        """Queued samples of the current generation: what the next drain can take (the trainer's ``ready``)."""
        gen_now = self._current()
        with self.db.transaction() as c:
            return samples.count(c, "queued", self._sync(c, gen_now))

    def ready_tenants(self, batch_size: int) -> list[str]:
        """The tenants with a fresh batch of their own waiting (``training.scope: tenant``), by name."""
        gen_now = self._current()
        with self.db.transaction() as c:
            return samples.ready_tenants(c, self._sync(c, gen_now), batch_size)

    def ack(self, turn_ids: Iterable[str]) -> int:
        """The trainer used these samples: mark them trained."""
        ids = list(turn_ids)
        with self.db.transaction() as c:
            return samples.move(c, ids, "pending", "trained")

    def hold_back(self, size: int, keep: int, tenant: str | None = None) -> int:
        """Move one queued sample of the current generation (of ``tenant``, into its own set, when given) into the
        validation set while it has fewer than ``size``, and only when more than ``keep`` queued samples would stay
        (a batch still forms). Returns how many moved (0 or 1). The newest is taken: the set follows the user's
        current behaviour."""
        gen_now = self._current()
        with self.db.transaction() as c:
            current = self._sync(c, gen_now)
            have = samples.count(c, "validation", tenant=tenant)
            queued = samples.queued(c, current, keep + 1, newest_first=True, tenant=tenant)
            if have >= size or len(queued) <= keep:
                return 0
            return samples.move(c, [queued[0].turn_id], "queued", "validation")

    def hold_back_spare(self, size: int, batch_size: int, tenant: str | None = None) -> int:
        """The behaviour gate's slice (:mod:`.gate`; ``tenant``'s own slice of ``size`` when given), in the same
        held-back state: below ``size``, take the newest queued sample of the current generation only when the queue
        holds a part batch (it would wait anyway, so no step waits for the gate); when full, swap the newest queued
        sample with the oldest held back (back in the queue if it is still of the current generation, else
        dropped), so the slice follows new prompts. Returns how many entered the slice (0 or 1)."""
        gen_now = self._current()
        with self.db.transaction() as c:
            current = self._sync(c, gen_now)
            newest = samples.queued(c, current, 1, newest_first=True, tenant=tenant)
            if not newest:
                return 0
            held = samples.held_back(c, tenant)
            if len(held) < size:
                if samples.count(c, "queued", current, tenant=tenant) % batch_size == 0:
                    return 0
            elif held[0].created_at >= newest[0].created_at:
                return 0
            else:
                back = "queued" if held[0].skill_generation == current else "dropped"
                samples.move(c, [held[0].turn_id], "validation", back)
            return samples.move(c, [newest[0].turn_id], "queued", "validation")

    def validation(self, tenant: str | None = None) -> list[Sample]:
        """The held-back validation set (``tenant``'s when given)."""
        return samples.validation(self.db, tenant)

    def skip(self, turn_ids: Iterable[str]) -> int:
        """A step had nothing to learn from these pending samples (all advantages 0): consumed, not trained."""
        ids = list(turn_ids)
        with self.db.transaction() as c:
            return samples.move(c, ids, "pending", "skipped")

    def release(self, turn_ids: Iterable[str]) -> int:
        """Put a pending batch back in the queue (a paused trainer), unless it went stale meanwhile."""
        ids = list(turn_ids)
        with self.db.transaction() as c:
            return samples.requeue(c, ids)

    def is_fresh(self, turn_ids: Iterable[str]) -> bool:
        """True while every sample of a batch is still pending (no bump dropped it): check before an
        optimiser step, so a batch that went stale mid-update is not applied."""
        ids = list(turn_ids)
        if not ids:
            return False
        self.on_generation(self._current() or 0)
        return samples.count_pending(self.db, ids) == len(ids)

    def pending(self) -> list[Sample]:
        return samples.pending(self.db)

    def recent(self, n: int, tenant: str | None = None, generation: int | None = None) -> list[Sample]:
        return samples.recent(self.db, n, tenant, generation)

    def rewarded(self, n: int, tenant: str | None = None) -> list[Sample]:
        """The latest ``n`` samples whatever became of them (trained, skipped, held back...): live rewards."""
        return samples.rewarded(self.db, n, tenant)

    def stats(self) -> BufferStats:
        return samples.stats(self.db)

    def close(self) -> None:
        self.db.close()
