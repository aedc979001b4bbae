"""Picking up weights that a trainer in another process publishes: a cheap poll of ``policy.weights``.

The trainer stores each new :class:`WeightsRef` in the ``runtime_state`` table (training/weights.py). The
watcher reads that one row every ``interval`` seconds on its own thread and hands a ref it has not seen to
each subscriber (the served policy's swap, the vLLM publisher). A subscriber that fails is logged and
counted, and gets the same ref again at the next polls (a vLLM server restarting, a network blip), at most
``retries`` times: broken LoRA weights are not retried forever, and a failed publish is never taken for done.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from ..infra.service import Service
from ..store import AnyDatabase
from ..training.weights import WeightsRef, latest

log = logging.getLogger("metaclaw_plugin.serving")


class WeightsWatcher:
    def __init__(
        self,
        db: AnyDatabase,
        subscribers: Sequence[Callable[[WeightsRef], Any]],
        *,
        interval: float = 2.0,
        seen: WeightsRef | None = None,
        name: str = "weights",
        retries: int = 3,
    ) -> None:
        if interval <= 0:
            raise ValueError("interval must be > 0")
        self.db = db
        self.subscribers = list(subscribers)
        self.interval = interval
        self.seen = seen
        self.retries = retries
        self._pending: dict[int, tuple[WeightsRef, int]] = {}  # subscriber -> (a ref it failed on, attempts)
        self.counters: Counter[str] = Counter()
        self.service = Service.every(f"metaclaw-watch-{name}", interval, self.check)

    def start(self) -> None:
        self.service.start()

    def stop(self, timeout: float = 5.0) -> None:
        self.service.stop(timeout)

    def check(self) -> WeightsRef | None:
        """One poll: the new ref handed to the subscribers, or None when nothing changed."""
        try:
            ref = latest(self.db)
        except Exception:
            self.counters["poll_errors"] += 1
            log.exception("reading the published weights failed; trying again in %.1fs", self.interval)
            return None
        if ref is not None and ref != self.seen:
            self.seen = ref
            self.counters["refs"] += 1
            self._pending = {i: (ref, 0) for i in range(len(self.subscribers))}
        elif not self._pending:
            return None
        for i, (want, attempts) in list(self._pending.items()):
            try:
                self.subscribers[i](want)
                del self._pending[i]
            except Exception:
                self.counters["subscriber_errors"] += 1
                log.exception("publishing step %d (%s) failed (attempt %d)", want.step, want.path, attempts + 1)
                if attempts + 1 > self.retries:
                    self.counters["given_up"] += 1
                    del self._pending[i]
                else:
                    self._pending[i] = (want, attempts + 1)
        return ref if ref == self.seen else None
