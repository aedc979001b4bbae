"""metaclaw-plugin: make the agent you already run learn from its own use."""

from .config import ConfigError, Settings
from .plugin import MetaClawPlugin, SessionEnd, TurnRecorded
from .types import TurnContext

__all__ = ["ConfigError", "MetaClawPlugin", "SessionEnd", "Settings", "TurnContext", "TurnRecorded"]
__version__ = "0.1.0"
