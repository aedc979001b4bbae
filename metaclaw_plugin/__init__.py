"""metaclaw-plugin: make the agent you already run learn from its own use."""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .config import ConfigError, Settings
from .integration import DidNotEnable
from .plugin import MetaClawPlugin
from .requestpath.events import Feedback, SessionEnd, TurnRecorded
from .types import TurnContext

__all__ = [
    "ConfigError",
    "DidNotEnable",
    "Feedback",
    "MetaClawPlugin",
    "SessionEnd",
    "Settings",
    "TurnContext",
    "TurnRecorded",
    "served_policy",
    "user_memory",
]
__version__ = "0.1.0"


def served_policy(name: str | None = None, settings: Settings | None = None) -> Any:
    """This process's trainable policy, ``metaclaw/<name>`` (``metaclaw_plugin.serving.ServedPolicy``), for the
    adapters' rl/auto entry points: built from ``settings`` (default: the default config) on first call and
    loaded in the background. Raises ``RuntimeError`` with the reason when it cannot be served (no
    ``training.base_model``, no torch)."""
    from .serving import shared_policy

    return shared_policy(name, settings)


@contextmanager
def user_memory(plugin: MetaClawPlugin, tenant: str | None = None, user: str | None = None) -> Iterator[Any]:
    """One user's memories (``metaclaw_plugin.learning.memory.ops.UserMemory``: ``search``, ``store``,
    ``forget``), for adapters whose agents manage memory themselves. A database connection is opened for the block
    and closed after; the plugin's view follows a write at once. Raises ``ValueError`` with the reason for a request
    it cannot honour (an empty text, a credential, an id that is not the user's)."""
    from .learning.memory.ops import MemoryOps, UserMemory
    from .store import open_database

    db = open_database(plugin.settings)
    try:
        yield UserMemory(MemoryOps(db, plugin.settings), tenant, user)
    finally:
        db.close()
        plugin.refresh_memory()
