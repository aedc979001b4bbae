"""What people do with memories, shared by ``metaclaw-plugin memory ...`` and the ``/v1/memory`` API: list, show,
search, add, forget, history, export, import. Everything is scoped by tenant (and user where given); results are
plain JSON-able dicts.

Whatever enters here passes the writer's gates (:meth:`~.writer.MemoryWriter.file`: credential refusal, redaction,
screening, dedup), an import included: a file's memories are filed row by row as statements of the caller's tenant
and user, their ``status``, ``standing``, ``screen``, ``tenant`` and ``user`` never taken from the file, and a row that
is not a memory is rejected with the reason while the others go in.
"""

from __future__ import annotations

import hashlib
import math
import time
from typing import Any

from ...memory.model import DEFAULT_USER, KINDS, SHARED_USER, Candidate
from ...memory.store import MemoryStore
from ...memory.text import term_set
from ...privacy import redactor_for
from ...requestpath.bounds import ID_MAX, home_identifiers
from ...store import AnyDatabase
from ...store.passages import Passage, PassageStore
from ...types import DEFAULT_TENANT
from .guard import credential_kinds
from .rules import classify
from .writer import MemoryWriter

EXPORT_FORMAT = "metaclaw-memory/1"
MAX_IMPORT_ROWS = 100_000
MAX_TEXT = 4000  # characters of one memory's text in an import (what the API's add accepts)
_HISTORY = ("superseded", "forgotten", "expired")


class MemoryError_(ValueError):
    """A request the memory cannot honour, phrased for the person who made it."""


class MemoryOps:
    def __init__(self, db: AnyDatabase, settings: Any):
        self.store = MemoryStore(db)
        self.passages = PassageStore(db)
        redactor = redactor_for(settings.privacy)  # what people add is redacted like what is extracted
        self.writer = MemoryWriter(self.store, settings, redactor)
        self.settings = settings
        self.ids = home_identifiers(settings, redactor)
        self.redactor = redactor

    def key(self, tenant: str | None, user: str | None = None, *, own: bool = False) -> tuple[str, str | None]:
        """(tenant, user) as the hooks store them (stripped, NFC, a long or secret-bearing one hashed): a name given
        here must reach the memories the request path keeps and injects under it, and no others. ``own``: the user
        speaks for themself (a write, an agent's tools), so a user named like the tenant-wide bucket is not it."""
        t = self.ids.joinable(tenant, "tenant") if tenant is not None else None
        u = self.ids.joinable(user, "user") if user is not None else None
        if own and u == SHARED_USER:
            u = self.ids.hashed(u)
        return t or DEFAULT_TENANT, u

    def list_(
        self,
        tenant: str = DEFAULT_TENANT,
        user: str | None = None,
        kind: str | None = None,
        status: str = "active",
        limit: int = 200,
    ) -> list[dict[str, Any]]:
        tenant, user = self.key(tenant, user)
        if status == "malformed":  # the rows readers skip, with why
            return self.store.malformed(tenant, user, limit)
        if kind is not None and kind not in KINDS:
            raise MemoryError_(f"unknown kind {kind!r} (one of {', '.join(KINDS)})")
        statuses = None if status == "all" else (status,)
        return [
            m.as_dict()
            for m in self.store.find(tenant, user, statuses=statuses, kinds=(kind,) if kind else None, limit=limit)
        ]

    def show(self, memory_id: str, tenant: str = DEFAULT_TENANT) -> dict[str, Any]:
        tenant, _ = self.key(tenant)
        m = self.store.get(memory_id, tenant)
        if m is None:
            raw = self.store.raw(memory_id, tenant)
            if raw is not None:
                raise MemoryError_(
                    f"memory {memory_id!r} is malformed ({raw['why']}); `metaclaw-plugin memory forget {memory_id}` "
                    "removes it"
                )
            raise MemoryError_(f"no memory {memory_id!r} in tenant {tenant!r}")
        return {**m.as_dict(), "history": self.store.history(memory_id, tenant)}

    def history(self, memory_id: str, tenant: str = DEFAULT_TENANT) -> list[dict[str, Any]]:
        return self.show(memory_id, tenant)["history"]

    def search(
        self, query: str, tenant: str = DEFAULT_TENANT, user: str | None = None, limit: int = 20
    ) -> list[dict[str, Any]]:
        """Active memories sharing words with ``query``, most in common first."""
        tenant, user = self.key(tenant, user)
        want = term_set(query)
        if not want:
            return []
        scored = []
        for m in self.store.find(tenant, user, statuses=("active",)):
            n = len(want & term_set(m.text))
            if n:
                scored.append((n, m))
        scored.sort(key=lambda x: (-x[0], -x[1].created_at))
        return [{**m.as_dict(), "matched": n} for n, m in scored[:limit]]

    def candidate(self, text: str, kind: str | None = None) -> Candidate:
        """A statement as the rules read it (kind, subject, whether it is a standing preference, its date)."""
        found = classify(text, time.time(), self.settings.memory.event_days, explicit=True)
        cand = found or Candidate(kind or "fact", text, " ".join(sorted(term_set(text))[:6]) or text.casefold()[:60])
        cand.text = text
        if kind is not None and kind != cand.kind:
            cand.kind = kind
            cand.standing = cand.standing and kind == "preference"
        return cand

    def add(
        self, text: str, tenant: str = DEFAULT_TENANT, user: str | None = None, kind: str | None = None
    ) -> dict[str, Any]:
        """Add a memory by hand; it passes the same gates as an extracted one (credential refusal, redaction,
        screening, dedup). Raises :class:`MemoryError_` saying why when it is not kept."""
        tenant, user = self.key(tenant, user, own=True)
        text = " ".join((text or "").split())
        if not text:
            raise MemoryError_("the memory text is empty")
        if kind is not None and kind not in KINDS:
            raise MemoryError_(f"unknown kind {kind!r} (one of {', '.join(KINDS)})")
        filed = self.writer.file(tenant, user or DEFAULT_USER, self.candidate(text, kind), {"extractor": "person"})
        if filed.memory is None:
            raise MemoryError_(f"not kept: {filed.detail}")
        return filed.memory.as_dict()

    def forget(
        self,
        tenant: str = DEFAULT_TENANT,
        memory_id: str | None = None,
        user: str | None = None,
        about: str | None = None,
    ) -> list[str]:
        """Forget one memory by id, or the user's memories that ``about`` describes. Their text is erased."""
        tenant, user = self.key(tenant, user, own=True)
        if memory_id:
            if self.store.raw(memory_id, tenant) is None:  # a malformed row can be forgotten too
                raise MemoryError_(f"no memory {memory_id!r} in tenant {tenant!r}")
            return [memory_id] if self.store.close(memory_id, tenant, "forgotten", reason="a person asked") else []
        if about:
            return self.writer.forget(tenant, user or DEFAULT_USER, about)
        raise MemoryError_("say which memory to forget: an id, or --about TEXT")

    def export(self, tenant: str = DEFAULT_TENANT, user: str | None = None) -> dict[str, Any]:
        """Every memory of the tenant (or one user), any status; malformed rows are listed under ``skipped``."""
        tenant, user = self.key(tenant, user)
        rows = self.store.find(tenant, user, statuses=None)
        said = self.passages.find(tenant, user, statuses=("active", "quarantined", "superseded"), oldest_first=True)
        return {
            "format": EXPORT_FORMAT,
            "tenant": tenant,
            "user": user,
            "memories": [m.as_dict() for m in rows],
            "passages": [p.as_dict() for p in said],  # what the user said (forgotten ones are erased, not exported)
            "skipped": self.store.malformed(tenant, user),
        }

    def malformed(self, tenant: str | None = None, user: str | None = None) -> list[dict[str, Any]]:
        t, u = self.key(tenant, user) if tenant is not None else (None, None)
        return self.store.malformed(t, u)

    def import_(self, doc: Any, tenant: str | None = None, user: str | None = None) -> dict[str, Any]:
        """File an export's memories as statements of ``tenant`` and ``user`` (the caller's: the default tenant and its
        default user unless named), each through every gate of :meth:`~.writer.MemoryWriter.file`. The file's
        ``tenant``, ``user``, ``status``, ``standing`` and ``screen`` are never trusted: the gates decide what is
        active and what is quarantined, and a memory the file marks quarantined stays so. History (superseded,
        forgotten, expired rows) is not imported. Returns ``{"imported": n, "quarantined": q, "rejected": [{"row": i,
        "why": ...}]}``; a malformed row is rejected alone."""
        if not isinstance(doc, dict) or doc.get("format") != EXPORT_FORMAT or not isinstance(doc.get("memories"), list):
            raise MemoryError_(f"not a memory export (expected a JSON object with format {EXPORT_FORMAT!r})")
        owner_tenant, owner = self.key(tenant if tenant is not None else DEFAULT_TENANT, user, own=True)
        rows: list[Any] = doc["memories"]
        rejected: list[dict[str, Any]] = []
        todo: list[tuple[float, int, dict[str, Any]]] = []
        for i, d in enumerate(rows):
            if i >= MAX_IMPORT_ROWS:
                rejected.append({"row": i, "why": f"over {MAX_IMPORT_ROWS} rows in one import"})
                continue
            why = _import_problem(d)
            if why is not None:
                rejected.append({"row": i, "why": why})
                continue
            todo.append((_said_at(d), i, d))
        todo.sort(key=lambda x: (x[0], x[1]))  # oldest first: a later statement supersedes an earlier one
        with self.writer.bulk():
            imported, quarantined = self._file_rows(todo, owner_tenant, owner or DEFAULT_USER, rejected)
        rejected.sort(key=lambda r: r["row"])
        said = self._import_passages(doc.get("passages"), owner_tenant, owner or DEFAULT_USER)
        return {"imported": imported, "quarantined": quarantined, "rejected": rejected, "passages": said}

    def _import_passages(self, rows: Any, tenant: str, user: str) -> dict[str, Any]:
        """An export's passages (what its user said), as said by the caller's user, each through the gates a turn
        passes (:meth:`~.writer.MemoryWriter.passage`), dated when it was said. The file's ids, users, statuses and
        screens are never used; one imported twice is one passage."""
        out: dict[str, Any] = {"imported": 0, "quarantined": 0, "rejected": []}
        if rows is None:
            return out
        if not isinstance(rows, list):
            out["rejected"].append({"row": None, "why": "passages is not a list"})
            return out
        now = time.time()
        kept: list[Passage] = []
        for i, d in enumerate(rows[:MAX_IMPORT_ROWS]):
            if not isinstance(d, dict):
                out["rejected"].append({"row": i, "why": f"not a JSON object ({type(d).__name__})"})
                continue
            text, at, session = d.get("text"), d.get("at"), d.get("session_id")
            if not isinstance(text, str) or not text.strip() or len(text) > MAX_TEXT:
                out["rejected"].append({"row": i, "why": "text is missing, empty or too long"})
                continue
            when = float(at) if _finite(at) else -1.0  # type: ignore[arg-type]  # a finite number, checked
            if not 0 < when <= now:
                out["rejected"].append({"row": i, "why": "at (when it was said) is not a past time"})
                continue
            session = session if isinstance(session, str) and session else "imported"
            pid = "pi-" + hashlib.blake2b(f"{tenant}\0{user}\0{when}\0{text}".encode(), digest_size=12).hexdigest()
            p = self.writer.passage(pid, tenant, user, session[:ID_MAX], text, when)
            if p is None:
                out["rejected"].append({"row": i, "why": "nothing of it may be kept (a question, or a credential)"})
                continue
            kept.append(p)
        if len(rows) > MAX_IMPORT_ROWS:
            out["rejected"].append({"row": MAX_IMPORT_ROWS, "why": f"over {MAX_IMPORT_ROWS} rows in one import"})
        added = self.passages.add(kept)
        out["imported"] = len(added)
        out["quarantined"] = sum(p.status == "quarantined" for p in added)
        return out

    def _file_rows(
        self, todo: list[tuple[float, int, dict[str, Any]]], tenant: str, user: str, rejected: list[dict[str, Any]]
    ) -> tuple[int, int]:
        imported = quarantined = 0
        for said, i, d in todo:
            text = " ".join(d["text"].split())
            cand = self.candidate(text, d["kind"])
            if d["kind"] == "event" and cand.expires_at is None and _finite(d.get("expires_at")):
                cand.expires_at = float(d["expires_at"])
            source: dict[str, Any] = {"extractor": "import"}
            if isinstance(d.get("id"), str) and d["id"].isascii() and d["id"].isalnum() and len(d["id"]) <= 64:
                source["imported_id"] = d["id"]
            marked = (
                {"codes": ["imported_quarantined"], "reasons": ["quarantined in the file it was imported from"]}
                if d.get("status") == "quarantined"
                else None
            )
            try:
                filed = self.writer.file(tenant, user, cand, source, quarantine=marked, said_at=said or None)
            except Exception as e:  # one row's failure is that row's
                rejected.append({"row": i, "why": f"could not be filed ({type(e).__name__})"})
                continue
            if filed.memory is None:
                rejected.append({"row": i, "why": f"not kept: {filed.detail}"})
                continue
            imported += 1
            quarantined += filed.memory.status == "quarantined"
        return imported, quarantined


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _said_at(d: dict[str, Any]) -> float:
    for k in ("valid_from", "created_at"):
        v = d.get(k)
        if isinstance(v, (int, float)) and _finite(v) and 0 < v <= time.time():
            return float(v)
    return 0.0


def _import_problem(d: Any) -> str | None:
    """Why an export row cannot be imported, or None. Only what the import reads is checked: the rest of the row
    is never used."""
    if not isinstance(d, dict):
        return f"not a JSON object ({type(d).__name__})"
    text, kind, status = d.get("text"), d.get("kind"), d.get("status", "active")
    if not isinstance(text, str):
        return "text is missing or not a string"
    if not text.strip():
        return "text is empty (a forgotten memory's text is erased)"
    if len(text) > MAX_TEXT:
        return f"text is longer than {MAX_TEXT} characters"
    if not isinstance(kind, str) or kind not in KINDS:
        return f"kind must be one of {', '.join(KINDS)}"
    if not isinstance(status, str):
        return "status is not a string"
    if status in _HISTORY:
        return f"{status} in the file: history is not imported"
    if status not in ("active", "quarantined"):
        return f"unknown status {status[:40]!r}"
    for k in ("valid_from", "created_at", "expires_at"):
        v = d.get(k)
        if v is not None and not _finite(v):
            return f"{k} is not a finite number"
    return None


class UserMemory:
    """One user's memories, for an agent that manages them itself (LangChain's ``memory_tools``, OpenClaw's
    ``memory_*`` tools): every operation stays inside (tenant, user), plus the tenant's shared project memories
    the user may read when ``memory.share`` is ``tenant``. Nothing reaches another user's memories, not even by id."""

    def __init__(self, ops: MemoryOps, tenant: str | None, user: str | None):
        self.ops = ops
        t, u = ops.key(tenant, user, own=True)
        self.tenant = t
        self.user = u or DEFAULT_USER

    def _owners(self) -> tuple[str, ...]:
        return (self.user, SHARED_USER) if self.ops.settings.memory.share == "tenant" else (self.user,)

    def search(self, query: str, limit: int = 8) -> list[dict[str, Any]]:
        """The user's active memories (and the tenant's shared ones) matching ``query``; a row that holds a
        credential (stored before credentials were refused) never reaches an agent, and the text is redacted again."""
        rows = [r for owner in self._owners() for r in self.ops.search(query, self.tenant, owner, limit)]
        rows = [
            {**r, "text": self.ops.redactor.redact(r["text"])}
            for r in rows
            if not credential_kinds(r["text"], self.ops.redactor)
        ]
        rows.sort(key=lambda r: (-r["matched"], -r["created_at"]))
        return rows[:limit]

    def store(self, text: str, kind: str | None = None) -> dict[str, Any]:
        return self.ops.add(text, self.tenant, self.user, kind)

    def forget(self, about: str | None = None, memory_id: str | None = None) -> list[str]:
        if memory_id:
            m = self.ops.store.get(memory_id, self.tenant)
            if (
                m is None
                or m.user not in self._owners()
                or (m.user == SHARED_USER and m.source.get("user") != self.user)
            ):
                raise MemoryError_(f"no memory {memory_id!r} of this user")
            return self.ops.forget(self.tenant, memory_id)
        return self.ops.forget(self.tenant, None, self.user, about)
