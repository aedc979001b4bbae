"""Picking up weights that a trainer in another process publishes: a cheap poll of ``policy.weights``.

The trainer stores each new :class:`WeightsRef` in the ``runtime_state`` table (training/weights.py). The
watcher reads those two rows (the latest for every tenant, and each tenant's own latest under
``training.scope: tenant``) every ``interval`` seconds on its own thread and hands each ref it has not seen,
tenant by tenant, to each subscriber (the served policy's swap, the vLLM publisher). A subscriber that fails is logged and
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
from ..training.weights import WeightsRef, by_tenant, latest

log = logging.getLogger("metaclaw_plugin.serving")


class WeightsWatcher:
    def __init__(
        self,
        db: AnyDatabase,
        subscribers: Sequence[Callable[[WeightsRef], Any]],
        *,
        interval: float = 2.0,
        seen: Sequence[WeightsRef] = (),
        name: str = "weights",
        retries: int = 3,
    ) -> None:
        if interval <= 0:
            raise ValueError("interval must be > 0")
        self.db = db
        self.subscribers = list(subscribers)
        self.interval = interval
        self.seen: dict[str | None, WeightsRef] = {r.tenant: r for r in seen}  # whose -> the latest handed on
        self.retries = retries
        # (subscriber, whose) -> (a ref it failed on, attempts)
        self._pending: dict[tuple[int, str | None], tuple[WeightsRef, int]] = {}
        self.counters: Counter[str] = Counter()
        self.service = Service.every(f"metaclaw-watch-{name}", interval, self.check)

    def start(self) -> None:
        self.service.start()

    def stop(self, timeout: float = 5.0) -> None:
        self.service.stop(timeout)

    def check(self) -> WeightsRef | None:
        """One poll: the newest ref handed to the subscribers, or None when nothing changed."""
        try:
            refs = published(self.db)
        except Exception:
            self.counters["poll_errors"] += 1
            log.exception("reading the published weights failed; trying again in %.1fs", self.interval)
            return None
        new = None
        for whose, ref in refs.items():
            if self.seen.get(whose) != ref:
                self.seen[whose] = new = ref
                self.counters["refs"] += 1
                self._pending.update({(i, whose): (ref, 0) for i in range(len(self.subscribers))})
        for (i, whose), (want, attempts) in list(self._pending.items()):
            try:
                self.subscribers[i](want)
                del self._pending[(i, whose)]
            except Exception:
                self.counters["subscriber_errors"] += 1
                log.exception("publishing step %d (%s) failed (attempt %d)", want.step, want.path, attempts + 1)
                if attempts + 1 > self.retries:
                    self.counters["given_up"] += 1
                    del self._pending[(i, whose)]
                else:
                    self._pending[(i, whose)] = (want, attempts + 1)
        return new


def published(db: AnyDatabase) -> dict[str | None, WeightsRef]:
    """The latest weights of each tenant that has its own (scope tenant), and under None those for every
    tenant (scope global) when the newest published are such."""
    refs: dict[str | None, WeightsRef] = {t: r for t, r in by_tenant(db).items()}
    ref = latest(db)
    if ref is not None and ref.tenant is None:
        refs[None] = ref
    return refs
