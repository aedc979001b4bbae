"""metaclaw-plugin for LiteLLM: skill injection and trajectory capture in the proxy and the SDK.

Proxy ``config.yaml``::

    litellm_settings:
      callbacks: ["metaclaw_litellm.callback"]

SDK::

    import litellm, metaclaw_litellm
    litellm.callbacks = [metaclaw_litellm.MetaClawCallback()]

``callback`` is built on first access (the proxy reads it once, at start-up), from the environment
and the plugin config file, so that importing this package has no side effects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .adapter import MetaClawCallback

if TYPE_CHECKING:
    callback: MetaClawCallback

__all__ = ["MetaClawCallback"]  # not "callback": a star import must not start a plugin

_callback: MetaClawCallback | None = None


def __getattr__(name: str) -> Any:
    if name == "callback":
        global _callback
        if _callback is None:
            from .adapter import make_default_callback

            _callback = make_default_callback()
        return _callback
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), "callback"])
