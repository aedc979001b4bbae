"""Neutral data model shared by the core and every adapter.

Messages are plain OpenAI chat-format dicts (``{"role": ..., "content": ...}``) so that no host
framework type ever reaches the core. Everything else is a small dataclass.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

Message = dict[str, Any]
TurnKind = Literal["main", "side"]
SkillStatus = Literal["active", "quarantined", "retired"]
SkillOrigin = Literal["builtin", "user", "evolved"]
# convention: a standing rule of a user or tenant (a format, naming, required fields, a workflow step), injected on
# every main turn of its tenant; procedure: task knowledge, retrieved by relevance.
SkillKind = Literal["convention", "procedure"]
KindFrom = Literal["default", "metadata", "inferred"]

DEFAULT_TENANT = "default"


def new_id() -> str:
    return uuid.uuid4().hex


@dataclass
class TurnContext:
    """Who is talking, in which session, and which request this is.

    Adapters create one per model call and pass the same object (or one with the same
    ``request_id``) to ``on_request`` and ``on_response``; that is how a response finds its request.
    """

    session_id: str
    tenant: str = DEFAULT_TENANT
    user: str | None = None
    kind: TurnKind = "main"
    host: str = "unknown"
    model: str | None = None
    request_id: str = field(default_factory=new_id)
    metadata: dict[str, Any] = field(default_factory=dict)
    # Filled by the plugin during on_request, for the adapter's benefit.
    injected_skills: list[str] = field(default_factory=list)
    skill_generation: int | None = None
    started_at: float = field(default_factory=time.time)


MAX_TASK_TYPE = 100  # characters of a host's metadata.task_type that are kept


def task_type_of(ctx: TurnContext | None) -> str | None:
    """The host's label for the kind of work of a turn (``metadata.task_type``, cut to :data:`MAX_TASK_TYPE`):
    it picks the turn's verifier, its training group and the conventions that reach it. None: unlabelled."""
    tt = ctx.metadata.get("task_type") if ctx is not None and isinstance(ctx.metadata, dict) else None
    return str(tt)[:MAX_TASK_TYPE] if tt is not None and str(tt) else None


@dataclass
class Skill:
    """One SKILL.md: front matter fields plus the Markdown body."""

    name: str
    description: str
    body: str
    category: str = "general"
    origin: SkillOrigin = "user"
    generation: int = 0
    status: SkillStatus = "active"
    source_sessions: list[str] = field(default_factory=list)
    created_at: str = ""
    always: bool = False
    tenant: str | None = None  # None: shared by every tenant
    kind: SkillKind = "procedure"
    extra_metadata: dict[str, Any] = field(default_factory=dict)
    # Where the kind comes from: "metadata" (the file's metadata.kind, set-kind, an evolver that said it), "inferred"
    # (a learned skill whose text states a standing rule: skillbank.rulekind; never written to the file), or
    # "default" (not said: a procedure, or a convention built in code).
    kind_from: KindFrom = "default"

    def summary(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "category": self.category,
            "status": self.status,
            "origin": self.origin,
            "generation": self.generation,
            "tenant": self.tenant,
            "kind": self.kind,
            "kind_from": self.kind_from,
        }


@dataclass
class Turn:
    """One model call as the store keeps it."""

    turn_id: str
    session_id: str
    tenant: str
    kind: TurnKind
    messages: list[Message]
    response: Message | None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    model: str | None = None
    usage: dict[str, Any] | None = None
    latency_ms: float | None = None
    injected_skills: list[str] = field(default_factory=list)
    skill_generation: int = 0
    error: str | None = None
    host: str = "unknown"
    user: str | None = None
    created_at: float = field(default_factory=time.time)
    seq: int = 0  # order within the session, assigned by the store
    tools: list[dict[str, Any]] | None = None  # the request's tool definitions (OpenAI format), as sent


@dataclass
class Session:
    session_id: str
    tenant: str
    host: str = "unknown"
    started_at: float = 0.0
    last_at: float = 0.0
    ended_at: float | None = None
    outcome: dict[str, Any] | None = None
    turns: list[Turn] = field(default_factory=list)


@dataclass
class Sample:
    """A training sample, stamped with the skill generation it was produced under."""

    turn_id: str
    session_id: str
    tenant: str
    skill_generation: int
    reward: float
    created_at: float = field(default_factory=time.time)
