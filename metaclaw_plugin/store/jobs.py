"""The learning side's job queues, one API for both: ``fl_judge_queue`` (a turn to score, named by its turn id) and
``fl_evolve_queue`` (a support set for the evolver, named by a number). Owns both tables.

A job is ``pending`` until it ends in a final state (done, failed, skipped...); ``next_at`` is when it is due.
A failed attempt is counted and the job waits :func:`backoff` (the one formula, which the LLM client's in-call
retries use too), until ``max_attempts`` fail it for good. Hosts sharing a database take a job with
:meth:`Jobs.claim`, a lease on its due time: a host that dies mid-job leaves it due again once the lease ends.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .backend import AnyDatabase, Query

MAX_BACKOFF = 3600.0  # seconds: the longest wait between two attempts


def backoff(
    first: float, failures: int, *, cap: float = MAX_BACKOFF, rand: Callable[[], float] = random.random
) -> float:
    """Seconds to wait after the ``failures``-th failure in a row: ``first``, doubled per failure, times a jitter in
    [0.5, 1.5) (so that what failed together does not retry together), at most ``cap``."""
    return min(cap, first * 2.0 ** min(failures - 1, 64) * (0.5 + rand()))


@dataclass(frozen=True)
class Jobs:
    """One queue table. ``c`` below is the database, or a transaction whose other writes the change joins."""

    table: str
    key: str  # the column that names a job
    order: str  # the column due jobs are taken in the order of

    def enqueue(self, c: Any, job: Mapping[str, Any], *, at: float, now: float) -> None:
        """Queue a job (``job``: its own columns) due at ``at``. A job already queued under its key stays as it is."""
        cols = [*job, "next_at", "created_at"]
        c.execute(
            f"INSERT OR IGNORE INTO {self.table}({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
            [*job.values(), at, now],
        )

    def due(self, db: AnyDatabase, now: float, limit: int | None = None) -> list[Any]:
        """Pending jobs due by ``now`` (``inf``: every pending job), in queue order, at most ``limit``."""
        sql = f"SELECT * FROM {self.table} WHERE state = 'pending' AND next_at <= ? ORDER BY {self.order}"
        return db.query(f"{sql} LIMIT ?", [now, limit]) if limit is not None else db.query(sql, [now])

    def pending_of(self, db: AnyDatabase, keys: Sequence[Any]) -> set[Any]:
        """Which of these jobs are still pending."""
        if not keys:
            return set()
        rows = db.query(f"SELECT {self.key} FROM {self.table} WHERE state = 'pending' AND {self._among(keys)}", keys)
        return {r[0] for r in rows}

    def claim(self, db: AnyDatabase, rows: Sequence[Any], *, lease: float, now: float) -> list[Any]:
        """The rows (read by :meth:`due`) this host takes: each job's due time moves ``lease`` seconds past ``now``,
        compared and set on the due time read, so of hosts racing for a job exactly one takes it."""
        sql = f"UPDATE {self.table} SET next_at = ? WHERE {self.key} = ? AND state = 'pending' AND next_at = ?"
        return [r for r in rows if db.execute(sql, [now + lease, r[self.key], r["next_at"]]).rowcount == 1]

    def defer(self, c: Any, keys: Sequence[Any], until: float, error: str | None = None) -> None:
        """Make the jobs due at ``until`` (no attempt counted); ``error``, when given, is noted as the last one."""
        if error is None:
            self._set(c, keys, "next_at = ?", [until])
        else:
            self._set(c, keys, "next_at = ?, last_error = ?", [until, error])

    def finish(self, c: Any, keys: Sequence[Any], state: str, error: str | None = None) -> None:
        """End the jobs in ``state``, noting ``error`` (or none) as the last error."""
        self._set(c, keys, "state = ?, last_error = ?", [state, error])

    def fail(
        self, c: Any, keys: Sequence[Any], attempts: int, error: str, *, first: float, max_attempts: int, now: float
    ) -> bool:
        """A failed attempt (``attempts`` made, this one included): the jobs wait :func:`backoff` from ``first``, or
        fail for good at ``max_attempts``. Returns whether they gave up."""
        if attempts >= max_attempts:
            self._set(c, keys, "state = 'failed', attempts = ?, last_error = ?", [attempts, error])
            return True
        self._set(
            c, keys, "attempts = ?, next_at = ?, last_error = ?", [attempts, now + backoff(first, attempts), error]
        )
        return False

    def counts(self, query: Query) -> dict[str, int]:
        """How many jobs are in each state (for status)."""
        return {str(r[0]): int(r[1]) for r in query(f"SELECT state, COUNT(*) FROM {self.table} GROUP BY state")}

    def _among(self, keys: Sequence[Any]) -> str:
        return f"{self.key} IN ({','.join('?' * len(keys))})"

    def _set(self, c: Any, keys: Sequence[Any], sets: str, args: list[Any]) -> None:
        c.execute(f"UPDATE {self.table} SET {sets} WHERE {self._among(keys)}", [*args, *keys])


JUDGE = Jobs("fl_judge_queue", key="turn_id", order="next_at")
EVOLVE = Jobs("fl_evolve_queue", key="id", order="id")


def evolution_done(c: Any, ids: Sequence[int], report: str, now: float) -> None:
    """Evolution jobs whose call succeeded, with the (redacted) report of what it did."""
    EVOLVE._set(c, ids, "state = 'done', report = ?, done_at = ?", [report, now])
