"""Picking up weights that a trainer in another process publishes: a cheap poll of ``policy.weights``.

The trainer stores each new :class:`WeightsRef` in the ``runtime_state`` table (training/weights.py). The
watcher reads that one row every ``interval`` seconds on its own thread and hands a ref it has not seen to
each subscriber (the served policy's swap, the vLLM publisher). A subscriber that fails is logged and
counted; the ref still counts as seen, so a broken adapter is not retried every poll.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from ..store import Database
from ..training.weights import WeightsRef, latest

log = logging.getLogger("metaclaw_plugin.serving")


class WeightsWatcher:
    def __init__(
        self,
        db: Database,
        subscribers: Sequence[Callable[[WeightsRef], Any]],
        *,
        interval: float = 2.0,
        seen: WeightsRef | None = None,
        name: str = "weights",
    ) -> None:
        if interval <= 0:
            raise ValueError("interval must be > 0")
        self.db = db
        self.subscribers = list(subscribers)
        self.interval = interval
        self.seen = seen
        self.counters: Counter[str] = Counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"metaclaw-watch-{name}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def check(self) -> WeightsRef | None:
        """One poll: the new ref handed to the subscribers, or None when nothing changed."""
        try:
            ref = latest(self.db)
        except Exception:
            self.counters["poll_errors"] += 1
            log.exception("reading the published weights failed; trying again in %.1fs", self.interval)
            return None
        if ref is None or ref == self.seen:
            return None
        self.seen = ref
        self.counters["refs"] += 1
        for sub in self.subscribers:
            try:
                sub(ref)
            except Exception:
                self.counters["subscriber_errors"] += 1
                log.exception("publishing step %d (%s) failed", ref.step, ref.path)
        return ref

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.check()
