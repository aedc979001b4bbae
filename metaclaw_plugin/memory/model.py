"""A memory: one thing a user said that stays true across sessions, with where it came from and how long it holds."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Kind = Literal["preference", "fact", "project", "event", "summary"]
KINDS: tuple[str, ...] = ("preference", "fact", "project", "event", "summary")
# active: injected when relevant; superseded: a newer statement replaced it; forgotten: the user asked (text erased);
# quarantined: it reads as an instruction to the agent (never injected); expired: a dated event that passed.
Status = Literal["active", "superseded", "forgotten", "quarantined", "expired"]
DEFAULT_USER = "default"  # the user of a host that names none: one per tenant
SHARED_USER = "*"  # the tenant-wide bucket of shared project memories (memory.share: tenant)
# Buckets the plugin names, not a host: a turn's user named like one of them is a user of their own (stored as the
# name's keyed hash), so a client calling itself "default" never reads what the users nobody named said, nor "*"
# writes into every user's prompt. The memory API, CLI and tools name these buckets by these names.
RESERVED_USERS = frozenset({DEFAULT_USER, SHARED_USER})


@dataclass
class Memory:
    id: str
    tenant: str
    user: str
    kind: str
    subject: str  # what it is about, normalised: a newer memory on the same subject supersedes this one
    text: str  # the statement as the user made it (redacted)
    status: str = "active"
    standing: bool = False  # a preference about how to answer: injected on every main turn of the user
    shared: bool = False
    valid_from: float = field(default_factory=time.time)
    valid_to: float | None = None
    expires_at: float | None = None
    source: dict[str, Any] = field(default_factory=dict)  # session_id, turn_ids, extractor
    superseded_by: str | None = None
    screen: dict[str, Any] | None = None
    created_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)
    rev: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Candidate:
    """What an extractor proposes; the writer redacts, screens and files it (add, or supersede an old one)."""

    kind: str
    text: str
    subject: str
    standing: bool = False
    expires_at: float | None = None
    replaces: list[str] = field(default_factory=list)  # words naming an old value ("from Poetry to uv": poetry)
    target_id: str | None = None  # the model's update of a known memory
    op: Literal["add", "update", "delete"] = "add"
