"""The SQL of the memory tables (``memories``, ``memory_history``, ``memory_pending``; the counter ``memory_rev`` is
shared with the passages, see :func:`.passages.next_rev`), in SQLite's dialect (the PostgreSQL backend translates it).

Rows come back as stored: :mod:`metaclaw_plugin.memory.store` reads each into a memory and skips one that is not, so
one damaged row never stops a read. Writes take the transaction of the caller, which numbers the change once for the
memory and its history.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Protocol

from .backend import AnyDatabase, Query
from .passages import filters

COLUMNS: tuple[str, ...] = (
    "id",
    "tenant",
    "user_id",
    "kind",
    "subject",
    "text",
    "status",
    "standing",
    "shared",
    "valid_from",
    "valid_to",
    "expires_at",
    "source",
    "superseded_by",
    "screen",
    "created_at",
    "updated_at",
    "rev",
)
_COLS = ", ".join(COLUMNS)


class Written(Protocol):
    """What a memory row is written from (:class:`metaclaw_plugin.memory.model.Memory`, which this layer sits
    below)."""

    id: str
    tenant: str
    user: str
    kind: str
    subject: str
    text: str
    status: str
    standing: bool
    shared: bool
    valid_from: float
    valid_to: float | None
    expires_at: float | None
    source: dict[str, Any]
    superseded_by: str | None
    screen: dict[str, Any] | None
    created_at: float
    updated_at: float
    rev: int


# Writes, inside the caller's transaction ---------------------------------------------------------------------------
def insert(tx: Any, m: Written) -> None:
    tx.execute(
        f"INSERT INTO memories({_COLS}) VALUES ({', '.join('?' * len(COLUMNS))})",
        (
            m.id,
            m.tenant,
            m.user,
            m.kind,
            m.subject,
            m.text,
            m.status,
            int(m.standing),
            int(m.shared),
            m.valid_from,
            m.valid_to,
            m.expires_at,
            json.dumps(m.source) if m.source else None,
            m.superseded_by,
            json.dumps(m.screen) if m.screen else None,
            m.created_at,
            m.updated_at,
            m.rev,
        ),
    )


def add_history(tx: Any, m: Written, action: str, detail: dict[str, Any] | None, at: float) -> None:
    """Append to the memory's history."""
    tx.execute(
        "INSERT INTO memory_history(memory_id, tenant, user_id, action, text, detail, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (m.id, m.tenant, m.user, action, m.text, json.dumps(detail) if detail else None, at),
    )


def row_in(tx: Any, memory_id: str, tenant: str) -> Any:
    """The memory's row as stored (None when there is none), read inside ``tx`` before it is changed."""
    return tx.execute(f"SELECT {_COLS} FROM memories WHERE id = ? AND tenant = ?", (memory_id, tenant)).fetchone()


def end(
    tx: Any, memory_id: str, status: str, *, valid_to: float, by: str | None, now: float, rev: int, erase: bool
) -> None:
    """Close the memory's validity with ``status``; ``by`` (when given) names its successor; ``erase`` empties its
    text, and its history's (a forgotten memory)."""
    tx.execute(
        "UPDATE memories SET status = ?, valid_to = ?, superseded_by = COALESCE(?, superseded_by), updated_at = ?, "
        "rev = ?, text = CASE WHEN ? = 1 THEN '' ELSE text END WHERE id = ?",
        (status, valid_to, by, now, rev, int(erase), memory_id),
    )


def erase_history(tx: Any, memory_id: str) -> None:
    tx.execute("UPDATE memory_history SET text = NULL WHERE memory_id = ?", (memory_id,))


# Batches handed to the elected learner ----------------------------------------------------------------------------
def hand_off(db: AnyDatabase, tenant: str, batch: dict[str, Any], host: str, at: float) -> None:
    db.execute(
        "INSERT INTO memory_pending(tenant, batch, host, created_at) VALUES (?, ?, ?, ?)",
        (tenant, json.dumps(batch), host, at),
    )


def take_pending(db: AnyDatabase, limit: int) -> list[dict[str, Any]]:
    """Claim the oldest handed-off batches: each row is deleted by the one host that gets it."""
    out = []
    for r in db.query("SELECT id, batch FROM memory_pending ORDER BY id LIMIT ?", (limit,)):
        with db.transaction() as tx:
            if tx.execute("DELETE FROM memory_pending WHERE id = ?", (r[0],)).rowcount == 1:
                out.append(json.loads(r[1]))
    return out


# Reads -------------------------------------------------------------------------------------------------------------
def expired(db: AnyDatabase, now: float) -> list[tuple[str, str]]:
    """(id, tenant) of the active memories whose date is before ``now``."""
    got = db.query(
        "SELECT id, tenant FROM memories WHERE status = 'active' AND expires_at IS NOT NULL AND expires_at < ?",
        (now,),
    )
    return [(r[0], r[1]) for r in got]


def by_id(db: AnyDatabase, memory_id: str, tenant: str | None = None) -> list[Any]:
    """The memory's row as stored (none, or one), of ``tenant`` when given."""
    sql = f"SELECT {_COLS} FROM memories WHERE id = ?" + (" AND tenant = ?" if tenant else "")
    return db.query(sql, (memory_id, tenant) if tenant else (memory_id,))


def rows(
    db: AnyDatabase,
    tenant: str | None = None,
    user: str | None = None,
    *,
    statuses: Sequence[str] | None = None,
    kinds: Sequence[str] | None = None,
    newest_first: bool = False,
    limit: int = 0,
) -> list[Any]:
    """The rows of one (tenant, user) bucket of the given statuses and kinds (None keeps all), as stored; the newest
    first (by creation, then change) or in the table's order."""
    where, args = filters(tenant, user, statuses, kinds)
    sql = f"SELECT {_COLS} FROM memories" + (f" WHERE {' AND '.join(where)}" if where else "")
    sql += " ORDER BY created_at DESC, rev DESC" if newest_first else ""
    sql += f" LIMIT {int(limit)}" if limit > 0 else ""
    return db.query(sql, args)


def history(db: AnyDatabase, memory_id: str, tenant: str | None = None) -> list[Any]:
    """The memory's history rows (action, text, detail, at), oldest first, as stored."""
    sql = "SELECT action, text, detail, at FROM memory_history WHERE memory_id = ?"
    args: list[Any] = [memory_id]
    if tenant:
        sql += " AND tenant = ?"
        args.append(tenant)
    return db.query(sql + " ORDER BY at, id", args)


def rev(db: AnyDatabase) -> int:
    """The memory counter's last number (0 before the first change)."""
    got = db.query("SELECT rev FROM memory_rev WHERE id = 1")
    return int(got[0][0]) if got else 0


def changed_since(db: AnyDatabase, rev: int) -> set[tuple[str, str]]:
    """The (tenant, user) buckets with a change after ``rev``."""
    got = db.query("SELECT DISTINCT tenant, user_id FROM memories WHERE rev > ?", (rev,))
    return {(r[0], r[1]) for r in got if isinstance(r[0], str) and isinstance(r[1], str)}


def counts(db: AnyDatabase, tenant: str | None = None) -> dict[str, dict[str, int]]:
    """Memories per status and kind: ``{"active": {"fact": 3, ...}, "quarantined": {...}}``."""
    sql = "SELECT status, kind, COUNT(*) FROM memories" + (" WHERE tenant = ?" if tenant else "")
    out: dict[str, dict[str, int]] = {}
    for r in db.query(sql + " GROUP BY status, kind", (tenant,) if tenant else ()):
        out.setdefault(str(r[0]), {})[str(r[1])] = int(r[2])
    return out


def per_user(query: Query) -> list[Any]:
    """(tenant, user_id, status, n): how many memories each user has per status, for a person to look at."""
    return query(
        "SELECT tenant, user_id, status, COUNT(*) AS n FROM memories GROUP BY tenant, user_id, status "
        "ORDER BY tenant, user_id"
    )
