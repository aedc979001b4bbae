"""Memories kept in the home's database (SQLite or PostgreSQL; their SQL is :mod:`metaclaw_plugin.store.memories`).

Every change takes the next number of one counter row inside its transaction (the row lock orders writers on
PostgreSQL; ``BEGIN IMMEDIATE`` does on SQLite), so a reader that remembers the last number it saw finds every later
change with one indexed query: that is how each process's in-memory view, and every host's, stays current. Never
called on the request path.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Iterable, Sequence
from typing import Any

from ..store import AnyDatabase
from ..store import memories as table
from ..store.passages import next_rev
from ..types import new_id
from .model import KINDS, Memory


class BadRow(ValueError):
    """A stored row that is not a memory (a wrong type, bad JSON, a NULL, a number that is not finite): readers skip
    it and say so, never raise."""


_STATUSES = ("active", "superseded", "forgotten", "quarantined", "expired")
_MAX_TS = 253402300799.0  # 9999-12-31T23:59:59Z: the last second a date can be rendered
log = logging.getLogger("metaclaw_plugin.memory")


def _text(r: Any, col: str, *, optional: bool = False) -> str | None:
    v = r[col]
    if v is None and optional:
        return None
    if not isinstance(v, str):
        raise BadRow(f"{col} is {'NULL' if v is None else type(v).__name__}, not text")
    return v


def _number(r: Any, col: str, *, optional: bool = False, when: bool = True) -> float | None:
    v = r[col]
    if v is None and optional:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise BadRow(f"{col} is {'NULL' if v is None else type(v).__name__}, not a number")
    f = float(v)
    if not math.isfinite(f) or (when and not -_MAX_TS <= f <= _MAX_TS):
        raise BadRow(f"{col} is {f!r}, not a time")
    return f


def _flag(r: Any, col: str) -> bool:
    v = r[col]
    if isinstance(v, bool) or (isinstance(v, int) and v in (0, 1)):
        return bool(v)
    raise BadRow(f"{col} is {v!r}, not 0 or 1")


def _object(r: Any, col: str) -> dict[str, Any] | None:
    v = r[col]
    if v is None or v == "":
        return None
    if isinstance(v, dict):  # a JSON column read as JSON
        return v
    if not isinstance(v, str):
        raise BadRow(f"{col} is {type(v).__name__}, not JSON text")
    try:
        obj = json.loads(v)
    except ValueError:
        raise BadRow(f"{col} is not valid JSON") from None
    if obj is None:
        return None
    if not isinstance(obj, dict):
        raise BadRow(f"{col} is JSON {type(obj).__name__}, not an object")
    return obj


def _row(r: Any) -> Memory:
    """One stored row as a memory; :class:`BadRow` when any column is not what a memory holds."""
    mid = _text(r, "id")
    if not mid:
        raise BadRow("id is empty")
    kind, status = _text(r, "kind"), _text(r, "status")
    if kind not in KINDS:
        raise BadRow(f"kind {kind!r} is not one of {', '.join(KINDS)}")
    if status not in _STATUSES:
        raise BadRow(f"status {status!r} is not one of {', '.join(_STATUSES)}")
    rev = r["rev"]
    if isinstance(rev, bool) or not isinstance(rev, int):
        raise BadRow(f"rev is {rev!r}, not an integer")
    return Memory(
        id=mid,
        tenant=_text(r, "tenant") or "",
        user=_text(r, "user_id") or "",
        kind=kind or "",
        subject=_text(r, "subject") or "",
        text=_text(r, "text") or "",
        status=status or "",
        standing=_flag(r, "standing"),
        shared=_flag(r, "shared"),
        valid_from=_number(r, "valid_from") or 0.0,
        valid_to=_number(r, "valid_to", optional=True),
        expires_at=_number(r, "expires_at", optional=True, when=False),
        source=_object(r, "source") or {},
        superseded_by=_text(r, "superseded_by", optional=True),
        screen=_object(r, "screen"),
        created_at=_number(r, "created_at") or 0.0,
        updated_at=_number(r, "updated_at") or 0.0,
        rev=rev,
    )


def _lenient(r: Any) -> Memory:
    """What a malformed row's history needs (who, what, when), each column taken only if it has the right type."""

    def text(col: str) -> str:
        v = r[col]
        return v if isinstance(v, str) else ""

    vt = r["valid_to"]
    finite = isinstance(vt, (int, float)) and not isinstance(vt, bool) and math.isfinite(vt)
    return Memory(
        id=_raw_id(r),
        tenant=text("tenant"),
        user=text("user_id"),
        kind=text("kind"),
        subject=text("subject"),
        text=text("text"),
        valid_to=float(vt) if finite else None,
    )


def _raw_id(r: Any) -> str:
    v = r["id"]
    return v if isinstance(v, str) else repr(v)


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
            m.rev = next_rev(tx)
            table.insert(tx, m)
            table.add_history(tx, m, "quarantined" if m.status == "quarantined" else "added", detail, now)
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
        row = table.row_in(tx, memory_id, tenant)
        if row is None or (row["status"] == status) or row["status"] == "forgotten":
            return False
        try:
            m = _row(row)
        except BadRow:  # a malformed row can still be closed (forgotten: that is how a person removes it)
            m = _lenient(row)
        rev = next_rev(tx)
        erase = status == "forgotten"
        table.end(tx, memory_id, status, valid_to=m.valid_to or now, by=by, now=now, rev=rev, erase=erase)
        detail = {k: v for k, v in (("by", by), ("reason", reason)) if v}
        table.add_history(tx, m, status, detail or None, now)
        if erase:
            table.erase_history(tx, memory_id)
        return True

    def expire(self, now: float | None = None) -> int:
        """Close the validity of dated memories whose date has passed (the view already skips them)."""
        now = time.time() if now is None else now
        return sum(
            self.close(mid, tenant, "expired", reason="its date passed") for mid, tenant in table.expired(self.db, now)
        )

    # Batches for the elected learner (PostgreSQL shared by hosts) ---------------------------------------------
    def hand_off(self, tenant: str, batch: dict[str, Any], host: str) -> None:
        """Queue a batch of turns for the host that extracts (this one is not the elected learner)."""
        table.hand_off(self.db, tenant, batch, host, time.time())

    def take_pending(self, limit: int = 50) -> list[dict[str, Any]]:
        """Claim the oldest handed-off batches: each row is deleted by the one host that gets it."""
        return table.take_pending(self.db, limit)

    # Reads ------------------------------------------------------------------------------------------------
    # A row that is not a memory (written by hand, by an older or newer version, or damaged) is skipped and logged
    # once; ``malformed`` lists them. No such row can make a read raise: memory stays on for everyone else.
    _warned: set[str] = set()

    def _parse(self, rows: Iterable[Any]) -> list[Memory]:
        out = []
        for r in rows:
            try:
                out.append(_row(r))
            except BadRow as e:
                rid = _raw_id(r)
                if rid not in self._warned and len(self._warned) < 10_000:
                    self._warned.add(rid)
                    log.warning("memory: row %s skipped, it is malformed (%s)", rid[:64], e)
            except Exception as e:  # any other surprise in a row (a driver's odd type): skipped the same way
                log.warning("memory: row %s skipped (%s: %s)", _raw_id(r)[:64], type(e).__name__, e)
        return out

    def get(self, memory_id: str, tenant: str | None = None) -> Memory | None:
        """The memory, or None when there is none (or its row is malformed: see :meth:`raw`)."""
        got = self._parse(table.by_id(self.db, memory_id, tenant)[:1])
        return got[0] if got else None

    def raw(self, memory_id: str, tenant: str | None = None) -> dict[str, Any] | None:
        """A row as stored, whether or not it is a well-formed memory; with ``why`` when it is not."""
        rows = table.by_id(self.db, memory_id, tenant)
        if not rows:
            return None
        r = rows[0]
        out = {k: r[k] for k in table.COLUMNS}
        try:
            _row(r)
            out["why"] = None
        except Exception as e:
            out["why"] = str(e)
        return out

    def malformed(self, tenant: str | None = None, user: str | None = None, limit: int = 1000) -> list[dict[str, Any]]:
        """The rows readers skip: ``{"id", "tenant", "user", "status", "why"}`` each (values that are not text shown
        as their repr)."""
        out: list[dict[str, Any]] = []
        for r in table.rows(self.db, tenant, user):
            try:
                _row(r)
            except Exception as e:
                out.append(
                    {
                        "id": _raw_id(r),
                        **{
                            k: v if isinstance(v, str) else repr(v)
                            for k, v in (("tenant", r["tenant"]), ("user", r["user_id"]), ("status", r["status"]))
                        },
                        "why": str(e),
                    }
                )
                if len(out) >= limit:
                    break
        return out

    def find(
        self,
        tenant: str | None = None,
        user: str | None = None,
        *,
        statuses: Sequence[str] | None = ("active",),
        kinds: Sequence[str] | None = None,
        limit: int = 0,
    ) -> list[Memory]:
        return self._parse(
            table.rows(self.db, tenant, user, statuses=statuses, kinds=kinds, newest_first=True, limit=limit)
        )

    def history(self, memory_id: str, tenant: str | None = None) -> list[dict[str, Any]]:
        out = []
        for r in table.history(self.db, memory_id, tenant):
            at, detail = r["at"], r["detail"]
            try:
                parsed = json.loads(detail) if isinstance(detail, str) and detail else None
            except ValueError:
                parsed = {"unreadable": True}
            ok_at = isinstance(at, (int, float)) and not isinstance(at, bool) and math.isfinite(at)
            out.append(
                {
                    "action": r["action"] if isinstance(r["action"], str) else repr(r["action"]),
                    "text": r["text"] if isinstance(r["text"], str) else None,
                    "detail": parsed if isinstance(parsed, dict) or parsed is None else {"value": parsed},
                    "at": float(at) if ok_at else 0.0,
                }
            )
        return out

    def rev(self) -> int:
        return table.rev(self.db)

    def changed_since(self, rev: int) -> set[tuple[str, str]]:
        """The (tenant, user) buckets with a change after ``rev``."""
        return table.changed_since(self.db, rev)

    def counts(self, tenant: str | None = None) -> dict[str, dict[str, int]]:
        """Memories per status and kind: ``{"active": {"fact": 3, ...}, "quarantined": {...}}``."""
        return table.counts(self.db, tenant)
