"""The sample buffer's tables: query samples by state (``buffer_samples``), the turns sent to the evolver
(``buffer_support``) and the buffer's counters (``buffer_meta``).

What the states mean and when a sample moves is :mod:`metaclaw_plugin.training.buffer`'s; here are its statements.
A function taking ``c`` runs inside the caller's transaction (or on a database, for one statement); one taking
``db`` reads a database.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..types import Sample
from .backend import AnyDatabase
from .sqlite import read_file


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


# Counters (buffer_meta) ------------------------------------------------------------------------------------------
def meta(c: Any, key: str, default: int = 0) -> int:
    row = c.execute("SELECT value FROM buffer_meta WHERE key = ?", (key,)).fetchone()
    return int(row[0]) if row else default


def set_meta(c: Any, key: str, value: int) -> None:
    c.execute(
        "INSERT INTO buffer_meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, str(int(value))),
    )


def generation(db: AnyDatabase) -> int:
    with db.lock:
        return meta(db, "generation")


# Support (buffer_support) ----------------------------------------------------------------------------------------
def reserve(c: Any, turns: Iterable[tuple[str, str, str, int]], reason: str) -> list[str]:
    """Record turns (turn_id, session_id, tenant, generation) as sent to the evolver: the ids of those not
    recorded before."""
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


def take(c: Any, turn_ids: Iterable[str]) -> int:
    """Mark reserved turns read by an evolver call, and delete those still queued or pending. Returns how many were
    deleted."""
    now, n = time.time(), 0
    for turn_id in turn_ids:
        c.execute("UPDATE buffer_support SET read_at = ? WHERE turn_id = ? AND read_at IS NULL", (now, turn_id))
        n += c.execute(
            "DELETE FROM buffer_samples WHERE turn_id = ? AND state IN ('queued', 'pending')", (turn_id,)
        ).rowcount
    return n


def reserved(db: AnyDatabase, turn_id: str) -> bool:
    """Whether the turn was sent to the evolver (read by a call or not)."""
    return bool(db.query("SELECT 1 FROM buffer_support WHERE turn_id = ?", [turn_id]))


def is_support(c: Any, turn_id: str) -> bool:
    """Whether an evolver call read the turn."""
    return bool(
        c.execute("SELECT 1 FROM buffer_support WHERE turn_id = ? AND read_at IS NOT NULL", (turn_id,)).fetchone()
    )


# Query samples (buffer_samples) ----------------------------------------------------------------------------------
def insert(c: Any, sample: Sample, source: str | None) -> bool:
    """Queue ``sample`` unless its turn is already known. True when it was."""
    return (
        c.execute(
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
                time.time(),
            ),
        ).rowcount
        > 0
    )


def drop_older(c: Any, generation: int) -> int:
    """Drop the queued and pending samples older than ``generation``. Returns how many."""
    return int(
        c.execute(
            "UPDATE buffer_samples SET state = 'dropped', batch_id = NULL, updated_at = ? "
            "WHERE state IN ('queued', 'pending') AND generation < ?",
            (time.time(), generation),
        ).rowcount
    )


def queued(
    c: Any, generation: int, limit: int, *, newest_first: bool = False, tenant: str | None = None
) -> list[Sample]:
    """Up to ``limit`` queued samples of ``generation`` (of ``tenant`` when given), oldest first (or newest first;
    ties by turn id)."""
    order = "created_at DESC, turn_id" if newest_first else "created_at, turn_id"
    sql = "SELECT * FROM buffer_samples WHERE state = 'queued' AND generation = ?"
    args: list[Any] = [generation]
    if tenant is not None:
        sql += " AND tenant = ?"
        args.append(tenant)
    rows = c.execute(f"{sql} ORDER BY {order} LIMIT ?", (*args, int(limit))).fetchall()
    return [_sample(r) for r in rows]


def count(c: Any, state: str, generation: int | None = None, tenant: str | None = None) -> int:
    """The samples in ``state`` (of ``generation``, of ``tenant`` when given)."""
    sql = "SELECT COUNT(*) FROM buffer_samples WHERE state = ?"
    args: list[Any] = [state]
    if generation is not None:
        sql += " AND generation = ?"
        args.append(generation)
    if tenant is not None:
        sql += " AND tenant = ?"
        args.append(tenant)
    return int(c.execute(sql, args).fetchone()[0])


def ready_tenants(c: Any, generation: int, n: int) -> list[str]:
    """The tenants with at least ``n`` queued samples of ``generation``, by name."""
    rows = c.execute(
        "SELECT tenant FROM buffer_samples WHERE state = 'queued' AND generation = ? GROUP BY tenant "
        "HAVING COUNT(*) >= ? ORDER BY tenant",
        (generation, int(n)),
    ).fetchall()
    return [str(r[0]) for r in rows]


def form_batch(c: Any, batch_id: str, turn_ids: Sequence[str]) -> None:
    """Queued samples become the pending batch ``batch_id``."""
    now = time.time()
    c.executemany(
        "UPDATE buffer_samples SET state = 'pending', batch_id = ?, updated_at = ? WHERE turn_id = ?",
        [(batch_id, now, t) for t in turn_ids],
    )


def move(c: Any, turn_ids: Iterable[str], frm: str, to: str) -> int:
    """Samples of ``turn_ids`` in state ``frm`` go to state ``to``. Returns how many moved."""
    now = time.time()
    return sum(
        c.execute(
            "UPDATE buffer_samples SET state = ?, updated_at = ? WHERE turn_id = ? AND state = ?", (to, now, t, frm)
        ).rowcount
        for t in turn_ids
    )


def requeue(c: Any, turn_ids: Iterable[str]) -> int:
    """Pending samples of ``turn_ids`` go back to the queue, out of their batch. Returns how many."""
    return sum(
        c.execute(
            "UPDATE buffer_samples SET state = 'queued', batch_id = NULL WHERE turn_id = ? AND state = 'pending'", (t,)
        ).rowcount
        for t in turn_ids
    )


def count_pending(db: AnyDatabase, turn_ids: Sequence[str]) -> int:
    """How many of ``turn_ids`` are pending."""
    rows = db.query(
        f"SELECT COUNT(*) AS n FROM buffer_samples WHERE state = 'pending' AND turn_id IN ({','.join('?' * len(turn_ids))})",
        list(turn_ids),
    )
    return int(rows[0]["n"])


def pending(db: AnyDatabase) -> list[Sample]:
    return [_sample(r) for r in db.query("SELECT * FROM buffer_samples WHERE state = 'pending' ORDER BY created_at")]


def validation(db: AnyDatabase, tenant: str | None = None) -> list[Sample]:
    if tenant is None:
        return [_sample(r) for r in db.query("SELECT * FROM buffer_samples WHERE state = 'validation'")]
    rows = db.query("SELECT * FROM buffer_samples WHERE state = 'validation' AND tenant = ?", [tenant])
    return [_sample(r) for r in rows]


def held_back(c: Any, tenant: str | None = None) -> list[Sample]:
    """The held-back samples (of ``tenant`` when given), oldest first, inside the transaction ``c``."""
    where, args = (" AND tenant = ?", [tenant]) if tenant is not None else ("", [])
    rows = c.execute(
        f"SELECT * FROM buffer_samples WHERE state = 'validation'{where} ORDER BY created_at, turn_id", args
    ).fetchall()
    return [_sample(r) for r in rows]


def rewarded(db: AnyDatabase, n: int, tenant: str | None = None) -> list[Sample]:
    """The latest ``n`` samples in any state (each a live turn with its settled reward), newest first."""
    where, args = ("WHERE tenant = ? ", [tenant]) if tenant is not None else ("", [])
    rows = db.query(f"SELECT * FROM buffer_samples {where}ORDER BY created_at DESC LIMIT ?", [*args, int(n)])
    return [_sample(r) for r in rows]


def recent(db: AnyDatabase, n: int, tenant: str | None = None, generation: int | None = None) -> list[Sample]:
    """The latest ``n`` samples queued, pending or trained (of ``tenant``, of ``generation``), newest first."""
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
    return [_sample(r) for r in db.query(sql, args)]


def _sample(r: Any) -> Sample:
    return Sample(
        turn_id=r["turn_id"],
        session_id=r["session_id"],
        tenant=r["tenant"],
        skill_generation=int(r["generation"]),
        reward=float(r["reward"]),
        created_at=float(r["created_at"]),
    )


# Stats -----------------------------------------------------------------------------------------------------------
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
_STATS_SQL = "SELECT " + ", ".join(_STATS_COLUMNS.values())


def _stats_row(row: Any) -> dict[str, int]:
    """:data:`_STATS_SQL`'s one row as :class:`BufferStats` fields (a counter never set reads 0)."""
    return {k: int(v or 0) for k, v in zip(_STATS_COLUMNS, row, strict=True)}


def stats(db: AnyDatabase) -> BufferStats:
    """The counts and counters as of one moment: a single statement, so on PostgreSQL (where each ``execute``
    outside a transaction may take another pooled connection) a bump committed by the learner in between cannot
    pair the old queue with the new counters."""
    with db.lock:
        return BufferStats(**_stats_row(db.execute(_STATS_SQL).fetchone()))


def read_stats(db_path: Path | str) -> dict[str, int]:
    """Buffer counts for ``status`` without creating anything (empty when there is no buffer yet)."""
    rows = read_file(Path(db_path), _STATS_SQL)
    return _stats_row(rows[0]) if rows else {}
