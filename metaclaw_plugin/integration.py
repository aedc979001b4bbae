"""What every adapter shares, so that an adapter only translates its host's events.

In the style of Sentry's SDK integrations and OpenTelemetry's instrumentors:

* :func:`require_host`: an adapter calls it once, at import, before it imports its host. A missing host, or one
  outside the version range the adapter was tested against, raises :class:`DidNotEnable` (an ``ImportError``)
  with what was found, what is supported and the ``pip`` command that fixes it. ``METACLAW_ALLOW_UNSUPPORTED_HOST=1``
  turns an out-of-range version into a warning; a missing host always raises.
* :class:`PluginHandle`: the plugin an adapter object uses: the one passed in, or one built on first use (the
  process-wide default, or one from ``settings``/``config_file``). A build that fails is retried after a delay
  instead of on every request; meanwhile the adapter passes requests through.
* The contract with the core: ``plugin.prepare_turn(ctx, messages, tools=...)`` returns a :class:`PreparedTurn`
  (``.block``, rendered by the adapter into its host's message type; ``.messages``, the request as sent), kept on
  the host's per-call object, else in an :class:`InFlight` table (one expiry policy), and handed back to
  ``plugin.complete_turn(prepared, response, ...)``. ``on_session_end``/``on_feedback`` end and score sessions.
* :class:`FailOpen`: the one way a hook handles its own failure: log it, count it, never raise into the host.
* :class:`HostModel`: the host's own model, which an adapter offers with ``plugin.host_models.offer(...)`` when it
  sees a request (``learning.model: host``); the plugin's calls through it run inside a mark that
  :func:`in_plugin_call` reads, and carry :data:`PLUGIN_CALL_TAG`, so an adapter passes them through unrecorded.
* :func:`session_id_from`: the session-id fallback chain (header, metadata, fingerprint), with
  :func:`clean_session_id` and :func:`conversation_fingerprint`. The core files each session under its user
  (``metaclaw_plugin.requestpath.sessions``).

Adapters import the core through this module and the package's top-level names only; the names of the core that
they need (``MetaClawPlugin``, ``Settings``, ``TurnContext``, ...) are re-exported here for that reason.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import logging
import os
import re
import threading
import time
import warnings
from collections import Counter
from collections.abc import Callable
from typing import Any
from uuid import UUID

from .config import Settings
from .hostmodel import TAG as PLUGIN_CALL_TAG
from .hostmodel import HostModel, HostReply, in_plugin_call
from .plugin import MetaClawPlugin
from .requestpath.turns import FailOpen, InFlight, PreparedTurn
from .skillbank.render import append_block, has_block
from .text import content_text
from .types import DEFAULT_TENANT, Message, TurnContext, new_id

__all__ = [
    "ALLOW_UNSUPPORTED_ENV",
    "DEFAULT_TENANT",
    "PLUGIN_CALL_TAG",
    "RETRY_PLUGIN_AFTER",
    "DidNotEnable",
    "FailOpen",
    "HostModel",
    "HostReply",
    "InFlight",
    "Message",
    "MetaClawPlugin",
    "PluginHandle",
    "PreparedTurn",
    "Settings",
    "TurnContext",
    "append_block",
    "clean_session_id",
    "content_text",
    "conversation_fingerprint",
    "default_plugin",
    "has_block",
    "in_plugin_call",
    "new_id",
    "require_host",
    "session_id_from",
]

log = logging.getLogger("metaclaw_plugin.integration")

ALLOW_UNSUPPORTED_ENV = "METACLAW_ALLOW_UNSUPPORTED_HOST"
RETRY_PLUGIN_AFTER = 30.0  # seconds between attempts to build a plugin whose build or start failed
SESSION_ID_MAX = 200


# ------------------------------------------------------------------------------------------------
# Host checks
# ------------------------------------------------------------------------------------------------
class DidNotEnable(ImportError):
    """The adapter cannot run with this environment's host (missing, or outside the supported versions).

    An ``ImportError``, so that ``try: import metaclaw_litellm except ImportError`` keeps working.
    """


_RELEASE = re.compile(r"\d+(?:\.\d+)*")


def _release(version: str) -> tuple[int, ...] | None:
    """The numeric release of a version string (``"1.108.7.post1"`` -> ``(1, 108, 7)``), trailing zeros dropped.

    Pre-release and local parts are ignored, so ``1.110.0rc1`` counts as ``1.110.0``: out of a ``<1.110`` range,
    which errs on the side of saying "untested".
    """
    m = _RELEASE.match(version.strip().lstrip("vV"))
    if m is None:
        return None
    parts = [int(p) for p in m.group(0).split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def require_host(
    dist_name: str,
    import_name: str,
    min_version: str,
    below_version: str,
    *,
    adapter: str,
    install: str | None = None,
) -> str | None:
    """Check once, at the adapter's import, that its host is installed within ``[min_version, below_version)``.

    Returns the version found (None when the host is importable but has no package metadata, a vendored copy,
    which is allowed with a warning only under ``METACLAW_ALLOW_UNSUPPORTED_HOST=1``).
    Raises :class:`DidNotEnable` with a message that says what is missing or which version was found, the
    supported range and the command that installs a supported version. Not for the request path.
    """
    spec = f">={min_version},<{below_version}"
    fix = f"pip install {install or repr(dist_name + spec)}"
    try:
        found: str | None = importlib.metadata.version(dist_name)
    except importlib.metadata.PackageNotFoundError:
        found = None
    if found is None:
        try:
            importable = importlib.util.find_spec(import_name) is not None
        except (ImportError, ValueError):
            importable = False
        if not importable:
            raise DidNotEnable(f"{adapter} needs {dist_name} ({spec}), which is not installed. Install it with: {fix}")
        problem = f"{adapter} could not tell which version of {dist_name} is installed (no package metadata)"
    else:
        rel, lo, hi = _release(found), _release(min_version), _release(below_version)
        if rel is not None and lo is not None and hi is not None and lo <= rel < hi:
            return found
        problem = f"{adapter} supports {dist_name} {spec}, but {dist_name} {found} is installed"
    if os.environ.get(ALLOW_UNSUPPORTED_ENV, "").strip().lower() in ("1", "true", "yes", "on"):
        msg = f"{problem}; running anyway because {ALLOW_UNSUPPORTED_ENV} is set (untested, unsupported)"
        warnings.warn(msg, RuntimeWarning, stacklevel=2)
        log.warning("%s", msg)
        return found
    raise DidNotEnable(
        f"{problem}. Install a supported version with: {fix}; or set {ALLOW_UNSUPPORTED_ENV}=1 to run it anyway "
        "(untested, unsupported)."
    )


# ------------------------------------------------------------------------------------------------
# The plugin: the default instance, lazy build with retry
# ------------------------------------------------------------------------------------------------
_default_lock = threading.Lock()
_defaults: dict[tuple[str | None, str | None], MetaClawPlugin] = {}


def default_plugin() -> MetaClawPlugin:
    """One plugin per process and config source (``METACLAW_CONFIG``, ``METACLAW_HOME``), shared by every adapter
    object built without one: two plugins on one home would be two writers of one journal and database."""
    key = (os.environ.get("METACLAW_CONFIG"), os.environ.get("METACLAW_HOME"))
    with _default_lock:
        plugin = _defaults.get(key)
        if plugin is None:
            plugin = _defaults[key] = MetaClawPlugin()
        return plugin


def _forget_default(plugin: MetaClawPlugin) -> None:
    """Drop a default plugin that failed to start, so that the next attempt re-reads the config."""
    with _default_lock:
        for k in [k for k, v in _defaults.items() if v is plugin]:
            del _defaults[k]


class PluginHandle:
    """An adapter object's plugin: the one given, else built on first :meth:`get`.

    With neither ``settings`` nor ``config_file`` the build is :func:`default_plugin`. With ``start=True`` the plugin
    is started too (a start failure counts as a build failure). A failed build is logged, counted
    (``errors["plugin_start"]`` when an ``errors`` counter is given), kept in :attr:`error`, and retried after
    ``retry_after`` seconds: until then :meth:`get` returns None at once and the adapter passes requests through,
    so a broken config costs a failed request nothing and a fixed one is picked up without a restart.
    """

    def __init__(
        self,
        plugin: MetaClawPlugin | None = None,
        *,
        settings: Settings | None = None,
        config_file: str | None = None,
        start: bool = True,
        host: str = "host",
        logger: logging.Logger | None = None,
        errors: Counter[str] | None = None,
        retry_after: float = RETRY_PLUGIN_AFTER,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._plugin = plugin
        self._settings = settings
        self._config_file = config_file
        self._start = start
        self._host = host
        self._log = logger or log
        self._errors = errors
        self._retry_after = retry_after
        self._clock = clock
        self._retry_at = 0.0
        self._lock = threading.Lock()
        self.error: str | None = None
        self.failures = 0

    @property
    def plugin(self) -> MetaClawPlugin | None:
        """The plugin if it is built; never builds."""
        return self._plugin

    def get(self) -> MetaClawPlugin | None:
        """The plugin (started when ``start=True``), or None while it cannot be built. Cheap once built: one
        attribute read (and the ``started`` check with ``start=True``). An explicit plugin whose ``start()``
        raises raises into the caller's fail-open guard."""
        p = self._plugin
        if p is not None:
            if self._start and not p.started:
                p.start()
            return p
        if self._clock() < self._retry_at:
            return None
        with self._lock:
            if self._plugin is None and self._clock() >= self._retry_at:
                self._build()
            return self._plugin

    def _build(self) -> None:
        shared = self._settings is None and self._config_file is None
        p: MetaClawPlugin | None = None
        try:
            if self._settings is not None:
                p = MetaClawPlugin(self._settings)
            elif self._config_file is not None:
                p = MetaClawPlugin(config_file=self._config_file)
            else:
                p = default_plugin()
            if self._start:
                p.start()
        except Exception as e:
            if shared and p is not None:
                _forget_default(p)
            self.failures += 1
            self._retry_at = self._clock() + self._retry_after
            self.error = f"{type(e).__name__}: {e}"
            if self._errors is not None:
                self._errors["plugin_start"] += 1
            self._log.error(
                "metaclaw: the plugin could not start (%s); %s requests pass through unchanged, retrying in %ds",
                self.error,
                self._host,
                int(self._retry_after),
                exc_info=self.failures == 1,
            )
            return
        self.error = None
        self._plugin = p


# ------------------------------------------------------------------------------------------------
# Session ids
# ------------------------------------------------------------------------------------------------
def clean_session_id(value: Any) -> str | None:
    """A usable session id from a host value, or None: strings stripped, numbers and UUIDs as text, empty values and
    other types refused; an id longer than ``SESSION_ID_MAX`` maps to one stable hashed id, so ids stay bounded."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float, UUID)):
        value = str(value)
    if not isinstance(value, str):
        return None
    value = value.strip()
    if not value:
        return None
    if len(value) > SESSION_ID_MAX:
        value = "h-" + hashlib.blake2b(value.encode("utf-8", "replace"), digest_size=12).hexdigest()
    return value


def conversation_fingerprint(
    plugin: MetaClawPlugin | None, messages: Any, tenant: Any = None, user: Any = None
) -> str | None:
    """The session of a conversation whose client sends no session id (``fp-<hex>``): from the tenant, the user and
    the conversation's opening (the user's words of its first user message, not the system prompt or the client's
    wrappers); a request that continues a conversation the plugin has seen keeps its id, and a new conversation that
    opens like an earlier one of the same user gets its own (see ``metaclaw_plugin.requestpath.sessions``). The
    adapter marks the turn ``metadata["session_source"] = "fingerprint"`` (an id of this form a client names is not
    taken as it is). None without a plugin (the table of conversations is the plugin's: the adapter uses a per-call
    id) or without a user message with words."""
    if plugin is None:
        return None
    return plugin.conversation_session(messages, tenant, user)


def _first(candidates: Any) -> str | None:
    if type(candidates) is tuple:
        for c in candidates:
            if c is not None:
                sid = clean_session_id(c() if callable(c) else c)
                if sid is not None:
                    return sid
        return None
    return clean_session_id(candidates() if callable(candidates) else candidates)


def session_id_from(
    *,
    header: Any = None,
    metadata: Any = None,
    fingerprint: Any = None,
) -> tuple[str | None, str]:
    """The session id of a turn and where it came from, trying in order: ``header`` (an id the caller gave
    explicitly: a transport header, an adapter argument), ``metadata``, ``fingerprint`` (of the conversation, for
    clients that send nothing: :func:`conversation_fingerprint`).

    Returns ``(id, source)`` with source ``"header"``, ``"metadata"`` or ``"fingerprint"``, or ``(None, "none")``:
    the adapter then picks its own last resort (a per-call or per-run id). Each step may be a value, a zero-argument
    callable (called only when the steps before it gave nothing: pass costly ones such as a fingerprint that way),
    or a tuple of those, tried in order. Values go through :func:`clean_session_id`.

    The user is not a step: a user's id named as a session (the old ``user:<name>``) was a name anyone could
    claim first. The core files every session under its user (``metaclaw_plugin.requestpath.sessions``), so one id
    named by two users is two sessions.
    """
    # Steps that were not given cost nothing: this runs on every request of every adapter.
    if header is not None:
        sid = _first(header)
        if sid is not None:
            return sid, "header"
    if metadata is not None:
        sid = _first(metadata)
        if sid is not None:
            return sid, "metadata"
    if fingerprint is not None:
        sid = _first(fingerprint)
        if sid is not None:
            return sid, "fingerprint"
    return None, "none"
