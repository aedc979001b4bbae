"""The host's traffic as the request path sees it, and the plugin's own calls giving way to it.

The plugin's own calls to the host's model (the judge, memory extraction, skill review, the evolver, with
``learning.model: host``) run in the host's process and take one of its upstream slots: on a busy proxy they cost
its users capacity. So they wait for a quiet moment, the way training waits for an idle window.

The request path keeps the signal, and only keeps it: :meth:`HostTraffic.start` and :meth:`HostTraffic.end`
are a counter step and two attribute writes (no lock, no I/O, never a wait). The waiting is
:meth:`GiveWay.wait`'s, on the caller's background thread: it reads the counters, sleeps until the host could be
quiet, reads them again. A call never waits longer than the bound: on a host that is never quiet, learning still
moves, one call per bound, and each such call is counted.
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

POLL_S = 0.1  # while requests are in flight: how often a waiting call looks again (an end has no wake-up)


@dataclass(frozen=True)
class GiveWayPolicy:
    """When the host counts as quiet (``learning.give_way*``)."""

    enabled: bool = True
    quiet_s: float = 0.5  # this long with no more than `quiet_in_flight` requests in flight
    quiet_in_flight: int = 0  # requests in flight the host may have and still count as quiet
    max_wait_s: float = 30.0  # the bound: a call waits no longer, then goes

    def describe(self) -> str:
        if not self.enabled:
            return "off (learning.give_way): the plugin's calls go at once, beside the host's requests"
        busy = "any request" if self.quiet_in_flight == 0 else f"more than {self.quiet_in_flight} requests"
        return (
            f"the plugin's calls wait while the host has {busy} in flight, until {self.quiet_s:g} s quiet, "
            f"at most {self.max_wait_s:g} s"
        )


class HostTraffic:
    """Requests the host has in flight, and when it last had more than the policy's ``quiet_in_flight``.

    Written by the request path on every request's start and end; read by waiting calls. The counts come from
    ``itertools.count`` (one atomic step each), so two threads never lose a request; a stored count may lag one
    step behind a racing thread's until the next request, which a waiting call tolerates."""

    def __init__(self, quiet_in_flight: int = 0, clock: Callable[[], float] = time.monotonic) -> None:
        self.quiet_in_flight = quiet_in_flight
        self._clock = clock
        self._starts = itertools.count(1)
        self._ends = itertools.count(1)
        self.started = 0
        self.ended = 0
        self.busy_at = -math.inf  # the last time a start or an end saw more than quiet_in_flight in flight

    def start(self) -> None:
        n = next(self._starts)
        self.started = n
        if n - self.ended > self.quiet_in_flight:
            self.busy_at = self._clock()

    def end(self) -> None:
        n = next(self._ends)
        if self.started - n >= self.quiet_in_flight:  # in flight until this end: started - (n - 1)
            self.busy_at = self._clock()
        self.ended = n

    def in_flight(self) -> int:
        return max(0, self.started - self.ended)

    def quiet_in(self, policy: GiveWayPolicy) -> float:
        """Seconds until the host can count as quiet (0: it is now), were nothing to start meanwhile. Requests in
        flight that showed no sign of life (no start or end while busy) for the bound count as gone: an answer the
        host never reported must not hold every call to the bound."""
        since = self._clock() - self.busy_at
        if self.in_flight() > policy.quiet_in_flight and since < policy.max_wait_s:
            return POLL_S
        return max(0.0, policy.quiet_s - since)


@dataclass
class GiveWayCounts:
    calls: int = 0  # calls that passed the gate
    waited: int = 0  # of them, calls that found the host busy and waited
    went_at_bound: int = 0  # of those, calls that went after the bound with the host still busy
    waited_s: float = 0.0
    waiting: int = 0  # calls waiting now


class GiveWay:
    """The one place the plugin's calls to the host's model wait for the host (:class:`~.hostmodel.HostModels`
    holds it; the learning client calls :meth:`wait` before each call). ``close`` ends every wait at once (the plugin
    stopping): the call goes, as it would have without the gate, and the learning loops stop at their deadline."""

    def __init__(self, policy: GiveWayPolicy | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.policy = policy or GiveWayPolicy()
        self.traffic = HostTraffic(self.policy.quiet_in_flight, clock)  # the request path writes it
        self._clock = clock
        self._closing = threading.Event()
        self._lock = threading.Lock()  # the counts, between background threads (never taken on the request path)
        self.counts = GiveWayCounts()

    def wait(self) -> None:
        """Return when the call may go: the host is quiet, the policy is off, the bound has passed or the gate
        closed."""
        p = self.policy
        left = self.traffic.quiet_in(p) if p.enabled and not self._closing.is_set() else 0.0
        if left <= 0:
            with self._lock:
                self.counts.calls += 1
            return
        t0 = self._clock()
        with self._lock:
            self.counts.waiting += 1
        at_bound = False
        try:
            while left > 0:
                bound_left = t0 + p.max_wait_s - self._clock()
                if bound_left <= 0:
                    at_bound = True
                    break
                if self._closing.wait(min(left, bound_left)):
                    break
                left = self.traffic.quiet_in(p)
        finally:
            with self._lock:
                c = self.counts
                c.waiting -= 1
                c.waited_s += self._clock() - t0
                c.calls += 1
                c.waited += 1
                c.went_at_bound += at_bound

    def close(self) -> None:
        self._closing.set()

    def open(self) -> None:
        self._closing.clear()

    def status(self) -> dict[str, Any]:
        p, c = self.policy, self.counts
        return {
            "enabled": p.enabled,
            "quiet_s": p.quiet_s,
            "quiet_in_flight": p.quiet_in_flight,
            "max_wait_s": p.max_wait_s,
            "host_in_flight": self.traffic.in_flight(),
            "calls": c.calls,
            "waited": c.waited,
            "went_at_bound": c.went_at_bound,
            "waited_s": round(c.waited_s, 3),
            "waiting": c.waiting,
        }
