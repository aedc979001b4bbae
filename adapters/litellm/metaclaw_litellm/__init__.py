"""metaclaw-plugin for LiteLLM: skill injection and trajectory capture in the proxy and the SDK.

Proxy ``config.yaml``::

    litellm_settings:
      callbacks: ["metaclaw_litellm.callback"]

SDK::

    import litellm, metaclaw_litellm
    litellm.callbacks = [metaclaw_litellm.MetaClawCallback()]

``callback`` is built on first access (the proxy reads it once, at start-up), from the environment
and the plugin config file, so that importing this package has no side effects.

Importing this package checks, once, that LiteLLM is installed within the supported range
(``SUPPORTED_LITELLM``, the same range as the ``litellm`` extra in ``pyproject.toml``): a missing LiteLLM,
or one outside the range, raises :class:`metaclaw_plugin.DidNotEnable` (an ``ImportError``) that says what
was found and how to fix it. ``METACLAW_ALLOW_UNSUPPORTED_HOST=1`` turns an out-of-range version into a
warning.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from metaclaw_plugin.integration import require_host

# [lowest supported, first unsupported): both ends are tested (see the README). Keep in step with pyproject.toml.
SUPPORTED_LITELLM = ("1.108.0", "1.111")

LITELLM_VERSION = require_host(
    "litellm", "litellm", *SUPPORTED_LITELLM, adapter="metaclaw_litellm", install="'metaclaw-plugin[litellm]'"
)

from .adapter import MetaClawCallback  # noqa: E402 - after the host check, which must come first

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
