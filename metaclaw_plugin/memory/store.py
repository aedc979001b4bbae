"""The memory tables (``memories``, ``memory_history``, ``memory_rev``; see :mod:`metaclaw_plugin.store.schema`), on
SQLite or PostgreSQL through the home's database.

Every change takes the next number of one counter row inside its transaction (the row lock orders writers on
PostgreSQL; ``BEGIN IMMEDIATE`` does on SQLite), so a reader that remembers the last number it saw finds every later
change with one indexed query: that is how each process's in-memory view, and every host's, stays current. Never
called on the request path.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from typing import Any

from ..store import AnyDatabase
from ..types import new_id
from .model import Memory

_COLS = (
    "id, tenant, user_id, kind, subject, text, status, standing, shared, valid_from, valid_to, expires_at, source, "
    "superseded_by, screen, created_at, updated_at, rev"
)


def _row(r: Any) -> Memory:
    return Memory(
        id=r["id"],
        tenant=r["tenant"],
        user=r["user_id"],
        kind=r["kind"],
        subject=r["subject"],
        text=r["text"],
        status=r["status"],
        standing=bool(r["standing"]),
        shared=bool(r["shared"]),
        valid_from=float(r["valid_from"]),
        valid_to=r["valid_to"],
        expires_at=r["expires_at"],
        source=json.loads(r["source"]) if r["source"] else {},
        superseded_by=r["superseded_by"],
        screen=json.loads(r["screen"]) if r["screen"] else None,
        created_at=float(r["created_at"]),
        updated_at=float(r["updated_at"]),
        rev=int(r["rev"]),
    )


def _next_rev(tx: Any) -> int:
    tx.execute("INSERT OR IGNORE INTO memory_rev(id, rev) VALUES (1, 0)")
    tx.execute("UPDATE memory_rev SET rev = rev + 1 WHERE id = 1")
    return int(tx.execute("SELECT rev FROM memory_rev WHERE id = 1").fetchone()[0])


def _log(tx: Any, m: Memory, action: str, detail: dict[str, Any] | None, at: float) -> None:
    tx.execute(
        "INSERT INTO memory_history(memory_id, tenant, user_id, action, text, detail, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (m.id, m.tenant, m.user, action, m.text, json.dumps(detail) if detail else None, at),
    )


class MemoryStore:
    """Reads and writes of memories; each write also appends to the memory's history."""

    def __init__(self, db: AnyDatabase):
        self.db = db

    # Writes -----------------------------------------------------------------------------------------------
    def add(
        self,
        m: Memory,
        *,
        supersedes: Sequence[str] = (),
        detail: dict[str, Any] | None = None,
        keep_times: bool = False,
    ) -> Memory:
        """Insert ``m`` (a new id when empty) and close the validity of ``supersedes`` (same tenant only)."""
        now = time.time()
        m.id = m.id or new_id()
        if not keep_times:
            m.created_at = m.updated_at = now
        with self.db.transaction() as tx:
            m.rev = _next_rev(tx)
            tx.execute(
                f"INSERT INTO memories({_COLS}) VALUES ({', '.join('?' * 18)})",
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
            _log(tx, m, "quarantined" if m.status == "quarantined" else "added", detail, now)
            for old_id in supersedes:
                self._close(tx, old_id, m.tenant, "superseded", now, by=m.id)
        return m

    def close(self, memory_id: str, tenant: str, status: str, *, by: str | None = None, reason: str = "") -> bool:
        """End a memory's validity: ``superseded``, ``expired``, or ``forgotten`` (its text is erased, here and in
        its history: the user asked for it to go)."""
        with self.db.transaction() as tx:
            return self._close(tx, memory_id, tenant, status, time.time(), by=by, reason=reason)

    def _close(
        self, tx: Any, memory_id: str, tenant: str, status: str, now: float, *, by: str | None = None, reason: str = ""
    ) -> bool:
        row = tx.execute(f"SELECT {_COLS} FROM memories WHERE id = ? AND tenant = ?", (memory_id, tenant)).fetchone()
        if row is None or (row["status"] == status) or row["status"] == "forgotten":
            return False
        m = _row(row)
        rev = _next_rev(tx)
        erase = status == "forgotten"
        tx.execute(
            "UPDATE memories SET status = ?, valid_to = ?, superseded_by = COALESCE(?, superseded_by), updated_at = ?, "
            "rev = ?, text = CASE WHEN ? = 1 THEN '' ELSE text END WHERE id = ?",
            (status, m.valid_to or now, by, now, rev, int(erase), memory_id),
        )
        detail = {k: v for k, v in (("by", by), ("reason", reason)) if v}
        _log(tx, m, status, detail or None, now)
        if erase:
            tx.execute("UPDATE memory_history SET text = NULL WHERE memory_id = ?", (memory_id,))
        return True

    def restore(self, rows: Iterable[dict[str, Any]], tenant: str | None = None) -> int:
        """Import exported memories (``export`` output); an id already here is skipped. ``tenant`` overrides theirs."""
        n = 0
        for d in rows:
            fields = {k: d[k] for k in Memory.__dataclass_fields__ if k in d}
            m = Memory(**fields)
            if tenant and tenant != m.tenant:
                m.tenant, m.id = tenant, new_id()  # a copy into another tenant: ids are global
            if self.get(m.id) is not None:
                continue
            self.add(m, detail={"imported": True}, keep_times=True)
            n += 1
        return n

    def expire(self, now: float | None = None) -> int:
        """Close the validity of dated memories whose date has passed (the view already skips them)."""
        now = time.time() if now is None else now
        rows = self.db.query(
            "SELECT id, tenant FROM memories WHERE status = 'active' AND expires_at IS NOT NULL AND expires_at < ?",
            (now,),
        )
        return sum(self.close(r[0], r[1], "expired", reason="its date passed") for r in rows)

    # Batches for the elected learner (PostgreSQL shared by hosts) ---------------------------------------------
    def hand_off(self, tenant: str, batch: dict[str, Any], host: str) -> None:
        """Queue a batch of turns for the host that extracts (this one is not the elected learner)."""
        self.db.execute(
            "INSERT INTO memory_pending(tenant, batch, host, created_at) VALUES (?, ?, ?, ?)",
            (tenant, json.dumps(batch), host, time.time()),
        )

    def take_pending(self, limit: int = 50) -> list[dict[str, Any]]:
        """Claim the oldest handed-off batches: each row is deleted by the one host that gets it."""
        out = []
        for r in self.db.query("SELECT id, batch FROM memory_pending ORDER BY id LIMIT ?", (limit,)):
            with self.db.transaction() as tx:
                if tx.execute("DELETE FROM memory_pending WHERE id = ?", (r[0],)).rowcount == 1:
                    out.append(json.loads(r[1]))
        return out

    # Reads ------------------------------------------------------------------------------------------------
    def get(self, memory_id: str, tenant: str | None = None) -> Memory | None:
        sql = f"SELECT {_COLS} FROM memories WHERE id = ?" + (" AND tenant = ?" if tenant else "")
        rows = self.db.query(sql, (memory_id, tenant) if tenant else (memory_id,))
        return _row(rows[0]) if rows else None

    def find(
        self,
        tenant: str | None = None,
        user: str | None = None,
        *,
        statuses: Sequence[str] | None = ("active",),
        kinds: Sequence[str] | None = None,
        limit: int = 0,
    ) -> list[Memory]:
        where, args = [], []
        if tenant is not None:
            where.append("tenant = ?")
            args.append(tenant)
        if user is not None:
            where.append("user_id = ?")
            args.append(user)
        for col, values in (("status", statuses), ("kind", kinds)):
            if values:
                where.append(f"{col} IN ({', '.join('?' * len(values))})")
                args.extend(values)
        sql = f"SELECT {_COLS} FROM memories" + (f" WHERE {' AND '.join(where)}" if where else "")
        sql += " ORDER BY created_at DESC, rev DESC" + (f" LIMIT {int(limit)}" if limit > 0 else "")
        return [_row(r) for r in self.db.query(sql, args)]

    def history(self, memory_id: str, tenant: str | None = None) -> list[dict[str, Any]]:
        sql = "SELECT action, text, detail, at FROM memory_history WHERE memory_id = ?"
        args: list[Any] = [memory_id]
        if tenant:
            sql += " AND tenant = ?"
            args.append(tenant)
        rows = self.db.query(sql + " ORDER BY at, id", args)
        return [
            {
                "action": r["action"],
                "text": r["text"],
                "detail": json.loads(r["detail"]) if r["detail"] else None,
                "at": float(r["at"]),
            }
            for r in rows
        ]

    def rev(self) -> int:
        rows = self.db.query("SELECT rev FROM memory_rev WHERE id = 1")
        return int(rows[0][0]) if rows else 0

    def changed_since(self, rev: int) -> set[tuple[str, str]]:
        """The (tenant, user) buckets with a change after ``rev``."""
        rows = self.db.query("SELECT DISTINCT tenant, user_id FROM memories WHERE rev > ?", (rev,))
        return {(r[0], r[1]) for r in rows}

    def counts(self, tenant: str | None = None) -> dict[str, dict[str, int]]:
        """Memories per status and kind: ``{"active": {"fact": 3, ...}, "quarantined": {...}}``."""
        sql = "SELECT status, kind, COUNT(*) FROM memories" + (" WHERE tenant = ?" if tenant else "")
        out: dict[str, dict[str, int]] = {}
        for r in self.db.query(sql + " GROUP BY status, kind", (tenant,) if tenant else ()):
            out.setdefault(r[0], {})[r[1]] = int(r[2])
        return out
