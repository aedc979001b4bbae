"""metaclaw-plugin: make the agent you already run learn from its own use."""

from typing import Any

from .config import ConfigError, Settings
from .events import Feedback, SessionEnd, TurnRecorded
from .integration import DidNotEnable
from .plugin import MetaClawPlugin
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
]
__version__ = "0.1.0"


def served_policy(name: str | None = None, settings: Settings | None = None) -> Any:
    """This process's trainable policy, ``metaclaw/<name>`` (``metaclaw_plugin.serving.ServedPolicy``), for the
    adapters' rl/auto entry points: built from ``settings`` (default: the default config) on first call and
    loaded in the background. Raises ``RuntimeError`` with the reason when it cannot be served (no
    ``training.base_model``, no torch)."""
    from .serving import shared_policy

    return shared_policy(name, settings)
