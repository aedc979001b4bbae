"""The one way the package runs a loop on a thread of its own: :class:`Service` (start, stop with a join deadline,
status). Every background thread of the core (the worker, the writer, the learners, the listeners, the watchers,
the trainer) is one, so each stops the same way and none can take the host down: the body's exceptions are logged
and counted, and the body runs again (fail open).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")
log = logging.getLogger("metaclaw_plugin.service")

Body = Callable[[threading.Event], Any]


def yield_to_host() -> None:
    """Let the host's threads in between two units of background work. A thread busy in Python holds the GIL until
    the interpreter takes it away (every 5 ms by default), so an event loop woken by a socket waits up to that long
    for each step of a request; dropping the GIL between units (a passage screened, a note read) bounds its wait by
    one unit's cost instead."""
    time.sleep(0)


def yielding(items: Iterable[T], every: int = 8) -> Iterator[T]:
    """``items``, letting the host's threads in (:func:`yield_to_host`) after every ``every`` of them: a loop of
    background work over many small units (passages indexed after a burst of turns) never holds the GIL for long."""
    for i, item in enumerate(items, 1):
        yield item
        if i % every == 0:
            yield_to_host()


class Service:
    """A named daemon thread running ``body(stop)`` until it returns or ``stop`` is set.

    ``wake`` is called by :meth:`stop` after setting ``stop``, for a body that waits on something else (a queue's
    sentinel, an event). A body that raises is logged, counted and run again after ``retry`` seconds, unless it
    is stopping or ``retry`` is None (a one-off run: the thread ends). Each start has a stop event of its own: a
    thread that outlived its deadline still sees its stop.
    """

    def __init__(self, name: str, body: Body, *, wake: Callable[[], Any] | None = None, retry: float | None = 1.0):
        self.name = name
        self._body = body
        self._wake = wake
        self.retry = retry
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.errors = 0
        self.restarts = 0
        self.last_error: str | None = None
        self.late = False  # the last stop's deadline passed with the thread still running

    @classmethod
    def every(cls, name: str, seconds: float, fn: Callable[[], Any]) -> Service:
        """``fn()`` every ``seconds`` (the first call after one period) until stopped; a call that raises is logged
        and counted, and the next comes one period later. For a poll that may block on I/O, which must not
        hold up the plugin's worker (its ``every`` is for the quick ones)."""

        def body(stop: threading.Event) -> None:
            while not stop.wait(seconds):
                svc.guarded(fn)

        svc = cls(name, body)
        return svc

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> bool:
        """Start the thread unless it runs (False then)."""
        if self.running:
            return False
        self._stop = stop = threading.Event()
        self._thread = threading.Thread(target=self._main, args=(stop,), name=self.name, daemon=True)
        self._thread.start()
        return True

    def stop(self, timeout: float = 10.0) -> bool:
        """Ask the body to end and wait up to ``timeout`` seconds. False, logged, when it is still running then
        (it is a daemon: it never holds up the process's exit). Called from the body itself, it only asks."""
        t = self._thread
        if t is None:
            return True
        self._stop.set()
        if self._wake is not None:
            self.guarded(self._wake)
        if t is not threading.current_thread():
            t.join(timeout)
        self._thread = None
        self.late = t.is_alive() and t is not threading.current_thread()
        if self.late:
            log.warning("%s did not stop within %.1fs; left running as a daemon", self.name, timeout)
        return not self.late

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the body to end by itself (a one-off run); True when it has."""
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(timeout)
        return t is None or not t.is_alive()

    def guarded(self, fn: Callable[[], Any]) -> None:
        """Call ``fn()``; an exception is logged and counted here, never raised."""
        try:
            fn()
        except Exception as e:
            self._failed(e)

    def services(self) -> list[Service]:
        return [self]

    def status(self) -> dict[str, Any]:
        return {
            "running": self.running,
            "errors": self.errors,
            "restarts": self.restarts,
            "last_error": self.last_error,
            "late": self.late,
        }

    def _failed(self, e: Exception) -> None:
        self.errors += 1
        self.last_error = f"{type(e).__name__}: {e}"
        log.error("%s failed (the host is unaffected): %s", self.name, self.last_error, exc_info=e)

    def _main(self, stop: threading.Event) -> None:
        while True:
            try:
                self._body(stop)
                return
            except Exception as e:
                self._failed(e)
            if self.retry is None or stop.wait(self.retry):
                return
            self.restarts += 1


def run_all(work: Sequence[Callable[[], T]], workers: int, name: str) -> list[T]:
    """Each of ``work`` called on a pool of at most ``workers`` threads named ``name``, the results in order; one at a
    time where a pool would not help. The pool ends with the call: nothing it starts outlives it."""
    if workers <= 1 or len(work) <= 1:
        return [w() for w in work]
    with ThreadPoolExecutor(max_workers=min(workers, len(work)), thread_name_prefix=name) as ex:
        return list(ex.map(lambda w: w(), work))
