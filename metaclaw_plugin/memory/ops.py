"""What people do with memories, shared by ``metaclaw-plugin memory ...`` and the ``/v1/memory`` API: list, show,
search, add, forget, history, export, import. Everything is scoped by tenant (and user where given); results are
plain JSON-able dicts."""

from __future__ import annotations

import time
from typing import Any

from ..bounds import home_identifiers
from ..privacy import redactor_for
from ..store import AnyDatabase
from ..types import DEFAULT_TENANT
from .guard import credential_kinds
from .model import DEFAULT_USER, KINDS, SHARED_USER, Candidate, Memory
from .rules import classify
from .store import MemoryStore
from .text import term_set
from .writer import MemoryWriter

EXPORT_FORMAT = "metaclaw-memory/1"


class MemoryError_(ValueError):
    """A request the memory cannot honour, phrased for the person who made it."""


class MemoryOps:
    def __init__(self, db: AnyDatabase, settings: Any):
        self.store = MemoryStore(db)
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
        return {
            "format": EXPORT_FORMAT,
            "tenant": tenant,
            "user": user,
            "memories": [m.as_dict() for m in rows],
            "skipped": self.store.malformed(tenant, user),
        }

    def malformed(self, tenant: str | None = None, user: str | None = None) -> list[dict[str, Any]]:
        t, u = self.key(tenant, user) if tenant is not None else (None, None)
        return self.store.malformed(t, u)

    def import_(self, doc: Any, tenant: str | None = None) -> int:
        if not isinstance(doc, dict) or doc.get("format") != EXPORT_FORMAT or not isinstance(doc.get("memories"), list):
            raise MemoryError_(f"not a memory export (expected a JSON object with format {EXPORT_FORMAT!r})")
        rows = []
        for i, d in enumerate(doc["memories"]):
            if not isinstance(d, dict) or not all(
                isinstance(d.get(k), str) for k in ("id", "tenant", "user", "kind", "subject", "text")
            ):
                raise MemoryError_(f"memories[{i}] is not a memory (id, tenant, user, kind, subject, text)")
            if d["kind"] not in KINDS:
                raise MemoryError_(f"memories[{i}]: unknown kind {d['kind']!r}")
            rows.append({k: v for k, v in d.items() if k in Memory.__dataclass_fields__})
        return self.store.restore(rows, self.key(tenant)[0] if tenant else None)


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
