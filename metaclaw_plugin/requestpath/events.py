"""What the request path tells the learning side, and the bus it tells it on.

``MetaClawPlugin`` publishes; background components subscribe. Delivery happens in the plugin's
background worker, never on the host's thread, and a subscriber's exception is counted and logged
by the worker like any other background fault. The learning side depends on these types only,
never on the plugin object.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..types import Turn, TurnContext


@dataclass
class SessionState:
    """A live session as the plugin tracks it in memory."""

    tenant: str
    session_id: str
    host: str
    started_at: float
    last_at: float
    turn_ids: list[str] = field(default_factory=list)
    main_turns: int = 0
    user: str | None = None  # whose session it is (a session belongs to one tenant and user)
    given: str = ""  # the id the host gave (``session_id`` is it, namespaced by the user: see sessions.py)
    last_main: str | None = None  # the latest main turn: what feedback that names no turn scores
    fresh: bool = False  # first seen in this process: its first main turn ends the user's earlier sessions


@dataclass
class TurnRecorded:
    turn: Turn
    session: SessionState
    ctx: TurnContext | None = None  # the request's context (metadata such as task_type, shadow arms)


@dataclass
class SessionEnd:
    tenant: str
    session_id: str
    host: str
    outcome: dict[str, Any] | None
    reason: str
    turn_ids: list[str]
    # A session an earlier process left open, ended by the idle sweep: its stored turns (this process never saw
    # them; memory extraction reads what the earlier process had not extracted yet).
    stored_turns: list[Turn] | None = None


@dataclass
class Feedback:
    tenant: str
    session_id: str
    turn_id: str
    score: float | None
    text: str | None
    resolved: bool


class Events:
    """Subscribers per event type; ``publish`` hands each event to ``deliver`` (the worker)."""

    def __init__(self, deliver: Callable[[str, Callable[..., Any], Any], Any]):
        self._deliver = deliver
        self._subs: dict[type, list[Callable[[Any], Any]]] = {}

    def subscribe(self, kind: type, fn: Callable[[Any], Any]) -> None:
        self._subs.setdefault(kind, []).append(fn)

    def unsubscribe(self, kind: type, fn: Callable[[Any], Any]) -> None:
        subs = self._subs.get(kind, [])
        if fn in subs:
            subs.remove(fn)

    def wanted(self, kind: type) -> bool:
        return bool(self._subs.get(kind))

    def publish(self, event: Any) -> None:
        for fn in self._subs.get(type(event), ()):
            self._deliver(f"{type(event).__name__}:{getattr(fn, '__qualname__', fn)}", fn, event)
