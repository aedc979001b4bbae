"""The plugin as the rest of the package sees it: typed protocols, so that the scheduler, the sidecar and the
dashboard are checked by mypy against what they use of :class:`~metaclaw_plugin.MetaClawPlugin` without importing
it (the learning side never imports the plugin object; see the import contracts in ``pyproject.toml``).

This module imports only the request path's types, never the learning side, the scheduler or the plugin itself.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from .config import Settings
from .hostmodel import HostModels
from .infra.service import Service
from .memory.store import MemoryStore
from .requestpath.bounds import Identifiers
from .requestpath.turns import InFlight, PreparedTurn
from .skillbank.bank import SkillBank
from .store.election import LearnerElection
from .store.pg_library import SharedSkillLibrary
from .store.trajectories import TrajectoryStore
from .types import Message, Session, Turn, TurnContext

if TYPE_CHECKING:  # the request path never imports starlette
    from starlette.requests import HTTPConnection


class BackgroundPart(Protocol):
    """A loop the plugin starts and stops with itself (the library listener, the election, the memory learner, the
    learning loop, the scheduler), and the threads it runs on (for status)."""

    def start(self) -> object: ...

    def stop(self) -> object: ...

    def status(self) -> dict[str, Any]: ...

    def services(self) -> list[Service]: ...


class LearningPart(BackgroundPart, Protocol):
    """The learning loop: its election, which the scheduler shares (the plugin's own, else one it made)."""

    @property
    def election(self) -> LearnerElection: ...


class SchedulerPart(BackgroundPart, Protocol):
    """The slow loop's scheduler (OMLS): woken when the mode changes."""

    def wake(self) -> None: ...


class PluginLike(Protocol):
    """What the scheduler's attach, the sidecar (its app and its scheduler routes) and the dashboard use (the
    signatures restate :class:`~metaclaw_plugin.MetaClawPlugin`'s, down to the arguments these callers pass)."""

    # Written by scheduling.attach when it attaches the scheduler.
    scheduler: SchedulerPart | None
    scheduler_note: str | None
    # The host's own model (learning.model: host); the sidecar offers an OpenClaw gateway's provider here.
    host_models: HostModels

    @property
    def settings(self) -> Settings: ...

    @property
    def errors(self) -> Counter[str]: ...

    @property
    def learning(self) -> LearningPart | None: ...

    @property
    def election(self) -> LearnerElection | None: ...

    @property
    def ids(self) -> Identifiers: ...

    @property
    def last_request_at(self) -> float: ...

    @property
    def skills(self) -> SkillBank: ...

    @property
    def store(self) -> TrajectoryStore: ...

    @property
    def library(self) -> SharedSkillLibrary | None: ...

    @property
    def inflight(self) -> InFlight[str, PreparedTurn]: ...

    def start(self) -> object: ...

    def stop(self) -> None: ...

    def status(self) -> dict[str, Any]: ...

    def attach_loop(self, name: str, loop: BackgroundPart) -> None: ...

    def read_session(self, session_id: str, tenant: str | None = None, user: str | None = None) -> Session | None: ...

    def knows_session(self, session_id: str, tenant: str | None = None, user: str | None = None) -> bool: ...

    def end_named_session(
        self, session_id: str, tenant: str | None = None, outcome: dict[str, Any] | None = None, reason: str = "host"
    ) -> list[str]: ...

    def sync_library(self) -> str | None: ...

    @property
    def memory_store(self) -> MemoryStore | None: ...

    def refresh_memory(self) -> bool: ...

    def prepare_turn(
        self,
        ctx: TurnContext,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        inject: bool = True,
        injected_skills: Sequence[str] | None = None,
        record: bool = True,
    ) -> PreparedTurn: ...

    def complete_turn(
        self,
        prepared: PreparedTurn,
        response: Message | None,
        *,
        ctx: TurnContext | None = None,
        usage: dict[str, Any] | None = None,
        error: str | None = None,
        latency_ms: float | None = None,
    ) -> Turn: ...

    def on_session_end(
        self, ctx: TurnContext, outcome: dict[str, Any] | None = None, *, reason: str = "host", every_user: bool = True
    ) -> None: ...

    def on_feedback(self, ctx: TurnContext, score: Any = None, text: str | None = None) -> None: ...


def plugin_of(request: HTTPConnection) -> PluginLike:
    """The plugin an HTTP app keeps in its state (``app.state.plugin``): the sidecar's and the dashboard's handlers
    are module-level functions that read it there."""
    plugin: PluginLike = request.app.state.plugin
    return plugin
