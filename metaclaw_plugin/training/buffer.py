"""The support/query sample buffer, in SQLite (survives restarts, shared by processes on one home).

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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..store import AnyDatabase, Database, connect
from ..types import Sample


@dataclass
class BufferStats:
    generation: int
    queued: int
    pending: int
    trained: int
    dropped_stale: int
    support: int
    rejected_stale: int
    skipped: int = 0  # consumed by steps without signal (all advantages 0), never trained on
    validation: int = 0  # held back as the validation set, never trained on

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


class SampleBuffer:
    def __init__(self, db_path: Path | str | AnyDatabase, generation_fn: Callable[[], int] | None = None):
        self.db = Database(db_path) if isinstance(db_path, Path | str) else db_path
        self._generation_fn = generation_fn

    # Meta -----------------------------------------------------------------------------------------
    def _meta(self, c: Any, key: str, default: int = 0) -> int:
        row = c.execute("SELECT value FROM buffer_meta WHERE key = ?", (key,)).fetchone()
        return int(row[0]) if row else default

    def _set_meta(self, c: Any, key: str, value: int) -> None:
        c.execute(
            "INSERT INTO buffer_meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, str(int(value))),
        )

    @property
    def generation(self) -> int:
        with self.db.lock:
            return self._meta(self.db, "generation")

    # Generation -----------------------------------------------------------------------------------
    def _sync(self, c: Any, generation: int | None) -> int:
        """Bring the buffer to ``generation`` (never backwards); drop what became stale. Returns it."""
        current = self._meta(c, "generation")
        if generation is None or generation <= current:
            return current
        now = time.time()
        n = c.execute(
            "UPDATE buffer_samples SET state = 'dropped', batch_id = NULL, updated_at = ? "
            "WHERE state IN ('queued', 'pending') AND generation < ?",
            (now, generation),
        ).rowcount
        self._set_meta(c, "dropped_stale", self._meta(c, "dropped_stale") + n)
        self._set_meta(c, "generation", generation)
        return generation

    def on_generation(self, generation: int) -> int:
        """The skill generation bumped: drop the pending batch and every older sample. Returns how many."""
        with self.db.transaction() as c:
            before = self._meta(c, "dropped_stale")
            self._sync(c, generation)
            return self._meta(c, "dropped_stale") - before

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
        now = time.time()
        return [
            turn_id
            for turn_id, session_id, tenant, gen in turns
            if c.execute(
                "INSERT OR IGNORE INTO buffer_support(turn_id, session_id, tenant, generation, reason, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (turn_id, session_id, tenant, gen, reason, now),
            ).rowcount
        ]

    @staticmethod
    def take_support(c: Any, turn_ids: Iterable[str]) -> int:
        """An evolver call read these reserved turns: they are support from now on, and those still queued or
        pending are taken out of training. Returns how many were taken out."""
        now, n = time.time(), 0
        for turn_id in turn_ids:
            c.execute("UPDATE buffer_support SET read_at = ? WHERE turn_id = ? AND read_at IS NULL", (now, turn_id))
            n += c.execute(
                "DELETE FROM buffer_samples WHERE turn_id = ? AND state IN ('queued', 'pending')", (turn_id,)
            ).rowcount
        return n

    def sent_to_evolver(self, turn_id: str) -> bool:
        """Whether a trigger already sent this turn to the evolver (reserved, or read by a call): no trigger sends
        it again. A reserved turn still trains; only a read one is support (:meth:`take_support`)."""
        return bool(self.db.query("SELECT 1 FROM buffer_support WHERE turn_id = ?", [turn_id]))

    # Query samples -----------------------------------------------------------------------------------
    def add(self, sample: Sample, source: str | None = None) -> bool:
        """Queue a query sample. Refused (False) if an evolver call read it (support), already known, or stale."""
        now = time.time()
        with self.db.transaction() as c:
            current = self._sync(c, self._current())
            if c.execute(
                "SELECT 1 FROM buffer_support WHERE turn_id = ? AND read_at IS NOT NULL", (sample.turn_id,)
            ).fetchone():
                return False
            if sample.skill_generation < current:
                self._set_meta(c, "rejected_stale", self._meta(c, "rejected_stale") + 1)
                return False
            cur = c.execute(
                "INSERT OR IGNORE INTO buffer_samples(turn_id, session_id, tenant, generation, reward, source, state, "
                "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?)",
                (
                    sample.turn_id,
                    sample.session_id,
                    sample.tenant,
                    sample.skill_generation,
                    float(sample.reward),
                    source,
                    sample.created_at,
                    now,
                ),
            )
            return cur.rowcount > 0

    def drain(self, batch_size: int, *, generation: int | None = None, partial: bool = False) -> list[Sample]:
        """Take a batch of fresh samples (generation == current) for the trainer; they become pending.

        ``generation`` (or the generation function) is read first, so a bump that happened anywhere
        drops stale samples before the batch is formed. Returns [] when fewer than ``batch_size``
        fresh samples wait, unless ``partial``."""
        gen_now = generation if generation is not None else self._current()
        with self.db.transaction() as c:
            current = self._sync(c, gen_now)
            rows = c.execute(
                "SELECT * FROM buffer_samples WHERE state = 'queued' AND generation = ? ORDER BY created_at, turn_id LIMIT ?",
                (current, int(batch_size)),
            ).fetchall()
            if not rows or (len(rows) < batch_size and not partial):
                return []
            batch_id = f"b{time.time_ns()}"
            now = time.time()
            c.executemany(
                "UPDATE buffer_samples SET state = 'pending', batch_id = ?, updated_at = ? WHERE turn_id = ?",
                [(batch_id, now, r["turn_id"]) for r in rows],
            )
        return [_sample(r) for r in rows]

    def fresh_count(self) -> int:
        """Queued samples of the current generation: what the next drain can take (the trainer's ``ready``)."""
        gen_now = self._current()
        with self.db.transaction() as c:
            current = self._sync(c, gen_now)
            row = c.execute(
                "SELECT COUNT(*) FROM buffer_samples WHERE state = 'queued' AND generation = ?", (current,)
            ).fetchone()
            return int(row[0])

    def ack(self, turn_ids: Iterable[str]) -> int:
        """The trainer used these samples: mark them trained."""
        ids = list(turn_ids)
        with self.db.transaction() as c:
            return sum(
                c.execute(
                    "UPDATE buffer_samples SET state = 'trained', updated_at = ? WHERE turn_id = ? AND state = 'pending'",
                    (time.time(), t),
                ).rowcount
                for t in ids
            )

    def hold_back(self, size: int, keep: int) -> int:
        """Move one queued sample of the current generation into the validation set while it has fewer than
        ``size``, and only when more than ``keep`` queued samples would stay (a batch still forms). Returns how
        many moved (0 or 1). The newest is taken: the set follows the user's current behaviour."""
        gen_now = self._current()
        with self.db.transaction() as c:
            current = self._sync(c, gen_now)
            have = int(c.execute("SELECT COUNT(*) FROM buffer_samples WHERE state = 'validation'").fetchone()[0])
            queued = c.execute(
                "SELECT turn_id FROM buffer_samples WHERE state = 'queued' AND generation = ? "
                "ORDER BY created_at DESC, turn_id LIMIT ?",
                (current, int(keep) + 1),
            ).fetchall()
            if have >= size or len(queued) <= keep:
                return 0
            return c.execute(
                "UPDATE buffer_samples SET state = 'validation', updated_at = ? WHERE turn_id = ? AND state = 'queued'",
                (time.time(), queued[0][0]),
            ).rowcount

    def validation(self) -> list[Sample]:
        """The held-back validation set."""
        return [_sample(r) for r in self.db.query("SELECT * FROM buffer_samples WHERE state = 'validation'")]

    def skip(self, turn_ids: Iterable[str]) -> int:
        """A step had nothing to learn from these pending samples (all advantages 0): consumed, not trained."""
        ids = list(turn_ids)
        with self.db.transaction() as c:
            return sum(
                c.execute(
                    "UPDATE buffer_samples SET state = 'skipped', updated_at = ? WHERE turn_id = ? AND state = 'pending'",
                    (time.time(), t),
                ).rowcount
                for t in ids
            )

    def release(self, turn_ids: Iterable[str]) -> int:
        """Put a pending batch back in the queue (a paused trainer), unless it went stale meanwhile."""
        ids = list(turn_ids)
        with self.db.transaction() as c:
            return sum(
                c.execute(
                    "UPDATE buffer_samples SET state = 'queued', batch_id = NULL WHERE turn_id = ? AND state = 'pending'",
                    (t,),
                ).rowcount
                for t in ids
            )

    def is_fresh(self, turn_ids: Iterable[str]) -> bool:
        """True while every sample of a batch is still pending (no bump dropped it): check before an
        optimiser step, so a batch that went stale mid-update is not applied."""
        ids = list(turn_ids)
        if not ids:
            return False
        self.on_generation(self._current() or 0)
        rows = self.db.query(
            f"SELECT COUNT(*) AS n FROM buffer_samples WHERE state = 'pending' AND turn_id IN ({','.join('?' * len(ids))})",
            ids,
        )
        return int(rows[0]["n"]) == len(ids)

    def pending(self) -> list[Sample]:
        return [
            _sample(r)
            for r in self.db.query("SELECT * FROM buffer_samples WHERE state = 'pending' ORDER BY created_at")
        ]

    def recent(self, n: int, tenant: str | None = None, generation: int | None = None) -> list[Sample]:
        sql = "SELECT * FROM buffer_samples WHERE state IN ('queued', 'pending', 'trained')"
        args: list[Any] = []
        if tenant is not None:
            sql += " AND tenant = ?"
            args.append(tenant)
        if generation is not None:
            sql += " AND generation = ?"
            args.append(generation)
        sql += " ORDER BY created_at DESC LIMIT ?"
        args.append(int(n))
        return [_sample(r) for r in self.db.query(sql, args)]

    def stats(self) -> BufferStats:
        """The counts and counters as of one moment: a single statement, so on PostgreSQL (where each
        ``execute`` outside a transaction may take another pooled connection) a bump committed by the
        learner in between cannot pair the old queue with the new counters."""
        with self.db.lock:
            return BufferStats(**_stats_row(self.db.execute(STATS_SQL).fetchone()))

    def close(self) -> None:
        self.db.close()


def task_types(query: Callable[[str, list[str]], Sequence[Any]], turn_ids: Sequence[str]) -> dict[str, str]:
    """The host's task type of each labelled turn (``fl_turns.task_type``: ``metadata.task_type`` as the learning
    loop stored it), read with ``query`` (a database's or a transaction's) in chunks of 500 ids. The trainer
    groups advantages by it; the evolution queue keeps a support set to one."""
    out: dict[str, str] = {}
    for i in range(0, len(turn_ids), 500):
        part = list(turn_ids[i : i + 500])
        rows = query(f"SELECT turn_id, task_type FROM fl_turns WHERE turn_id IN ({','.join('?' * len(part))})", part)
        out.update({r["turn_id"]: str(r["task_type"]) for r in rows if r["task_type"]})
    return out


def _meta_sql(key: str) -> str:
    return f"(SELECT value FROM buffer_meta WHERE key = '{key}')"


def _count_sql(state: str) -> str:
    return f"(SELECT COUNT(*) FROM buffer_samples WHERE state = '{state}')"


_STATS_COLUMNS = {  # BufferStats's fields, in its order
    "generation": _meta_sql("generation"),
    "queued": _count_sql("queued"),
    "pending": _count_sql("pending"),
    "trained": _count_sql("trained"),
    "dropped_stale": _meta_sql("dropped_stale"),
    "support": "(SELECT COUNT(*) FROM buffer_support WHERE read_at IS NOT NULL)",  # reserved ones are still samples
    "rejected_stale": _meta_sql("rejected_stale"),
    "skipped": _count_sql("skipped"),
    "validation": _count_sql("validation"),
}
STATS_SQL = "SELECT " + ", ".join(_STATS_COLUMNS.values())


def _stats_row(row: Any) -> dict[str, int]:
    """:data:`STATS_SQL`'s one row as :class:`BufferStats` fields (a counter never set reads 0)."""
    return {k: int(v or 0) for k, v in zip(_STATS_COLUMNS, row, strict=True)}


def _sample(r: Any) -> Sample:
    return Sample(
        turn_id=r["turn_id"],
        session_id=r["session_id"],
        tenant=r["tenant"],
        skill_generation=int(r["generation"]),
        reward=float(r["reward"]),
        created_at=float(r["created_at"]),
    )


def read_stats(db_path: Path | str) -> dict[str, int]:
    """Buffer counts for ``status`` without creating anything (empty when there is no buffer yet)."""
    import sqlite3

    p = Path(db_path)
    if not p.exists():
        return {}
    try:
        conn = connect(p, readonly=True)
        try:
            row = conn.execute(STATS_SQL).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return {}
    return _stats_row(row)
