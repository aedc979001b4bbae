"""metaclaw-plugin: make the agent you already run learn from its own use."""

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
]
__version__ = "0.1.0"
