"""The contract between an adapter and the core, as data: a turn between its two host events.

``MetaClawPlugin.prepare_turn`` returns a :class:`PreparedTurn` (the block to inject and the record of the
request); the adapter renders ``prepared.block`` into its host's own message type, keeps the prepared turn on the
host's per-call object (LiteLLM's call data, a LangChain wrapper's frame) and hands it back to
``MetaClawPlugin.complete_turn`` with the response. A host with no per-call object keeps it in an
:class:`InFlight` table, the one expiry policy for every such table. :class:`FailOpen` is the one way a hook
handles its own failure. Adapters reach these names through ``metaclaw_plugin.integration``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from ..skillbank.bank import Injection
from ..types import Message, TurnContext

INFLIGHT_TTL = 900.0  # seconds without a touch after which an entry is forgotten (a request never answered)
INFLIGHT_MAX = 50_000  # entries beyond this go oldest first (a host that never answers at all)

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


@dataclass
class PreparedTurn:
    """A turn between its request and its response.

    ``block``: what to inject (``block.text`` is the fenced block, ``""`` for none; ``block.names`` the skills in
    it). The adapter renders the text into its host's message type; ``messages`` is the request as sent, in
    OpenAI format with the block rendered in the same way (appended to the leading system message, or a new one
    first), and is what the turn records.
    """

    ctx: TurnContext
    block: Injection
    messages: list[Message]
    tools: list[dict[str, Any]] | None = None
    t0: float = field(default_factory=time.monotonic)
    rendered: bool = False  # block.text was rendered in by this plugin (stored without a second redaction)
    in_flight: bool = False  # counted in the host's traffic until it completes (a recorded request)


class InFlight(Generic[K, V]):
    """Entries between two host events, for hosts with no per-call object to carry them.

    One policy for every such table: an entry is forgotten ``ttl`` seconds after it was last put or read, and
    the least recently touched go first beyond ``max_items``. Thread-safe; every operation is O(1) amortised.
    """

    def __init__(
        self, ttl: float = INFLIGHT_TTL, max_items: int = INFLIGHT_MAX, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.ttl = ttl
        self.max_items = max_items
        self._clock = clock
        self._items: OrderedDict[K, tuple[float, V]] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, key: K, value: V) -> None:
        now = self._clock()
        with self._lock:
            self._items[key] = (now, value)
            self._items.move_to_end(key)
            self._expire(now)

    def get(self, key: K) -> V | None:
        """The entry (its clock restarts), or None when absent or expired."""
        now = self._clock()
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return None
            if now - item[0] > self.ttl:
                del self._items[key]
                return None
            self._items[key] = (now, item[1])
            self._items.move_to_end(key)
            return item[1]

    def pop(self, key: K) -> V | None:
        """Remove and return the entry, or None when absent or expired."""
        now = self._clock()
        with self._lock:
            item = self._items.pop(key, None)
        return item[1] if item is not None and now - item[0] <= self.ttl else None

    def sweep(self) -> int:
        """Forget what has expired (also done on every put); returns how many entries went."""
        with self._lock:
            return self._expire(self._clock())

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __contains__(self, key: object) -> bool:
        with self._lock:
            item = self._items.get(key)  # type: ignore[arg-type]
        return item is not None and self._clock() - item[0] <= self.ttl

    def __len__(self) -> int:
        return len(self._items)

    def _expire(self, now: float) -> int:
        gone = 0
        while self._items:
            key, (at, _) = next(iter(self._items.items()))
            if now - at <= self.ttl and len(self._items) <= self.max_items:
                break
            del self._items[key]
            gone += 1
        return gone


# ------------------------------------------------------------------------------------------------
# Fail-open
# ------------------------------------------------------------------------------------------------
class Counted(Protocol):
    """What keeps a count of its failures by where they happened (an adapter object, the plugin)."""

    @property
    def errors(self) -> MutableMapping[str, int]: ...


class FailOpen:
    """A hook's failure reporter: log the exception, count it, never raise into the host.

    Call it inside ``except Exception:`` (free on the success path: the request path keeps its plain ``try``)::

        fail = FailOpen(log, "metaclaw_litellm", what="the request")
        try: ...
        except Exception:
            fail("async_pre_call_hook", self)   # self.errors["async_pre_call_hook"] += 1

    or use ``with fail.guard(where, owner):`` where a context manager reads better. ``owner`` is anything with an
    ``errors`` counter (the adapter object, or the plugin); ``prefix`` namespaces the counter key.
    """

    __slots__ = ("_message", "logger", "prefix")

    def __init__(self, logger: logging.Logger, name: str, *, what: str = "the host call", prefix: str = "") -> None:
        self.logger = logger
        self.prefix = prefix
        self._message = f"{name} %s failed; {what} continues unchanged"

    def __call__(self, where: str, owner: Counted | None = None) -> None:
        try:
            self.logger.exception(self._message, where)
            if owner is not None:
                owner.errors[self.prefix + where] += 1
        except Exception:  # pragma: no cover - logging or the counter itself broke: still never raise
            pass

    def guard(self, where: str, owner: Counted | None = None) -> _Guard:
        """A context manager that reports and swallows an ``Exception`` (not ``BaseException``: cancellation,
        ``KeyboardInterrupt`` and ``GeneratorExit`` still propagate)."""
        return _Guard(self, where, owner)


class _Guard:
    __slots__ = ("_fail", "_owner", "_where")

    def __init__(self, fail: FailOpen, where: str, owner: Counted | None) -> None:
        self._fail, self._where, self._owner = fail, where, owner

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        if exc_type is not None and issubclass(exc_type, Exception):
            self._fail(self._where, self._owner)
            return True
        return False
