"""The one small interface every signal implements, and the gate that turns their readings into a window.

A signal answers "is the user away, and until when?". Two kinds:

* **schedule** signals (the sleep window, the calendar) say when the user is expected to be away; outside that
  they say nothing (``away=False``), and they never veto.
* **activity** signals (the idle detectors) measure the user: idle at least ``idle_minutes`` is a reason to be
  away; input within ``present_minutes`` means the user is at the machine and vetoes any window. A detector that
  fails reads *unknown*, which counts as present: failing safe means not training.

The gate opens a window when some signal says away, no activity signal says present, and the window is
predicted to last ``min_window_minutes``. Predictions: the sleep window and a calendar event end when they say;
an idle period is predicted to last as long again as it has lasted so far (at the threshold that is
``idle_minutes``, so with the defaults, 30 >= 15, an idle window opens as soon as it is reached).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

log = logging.getLogger("metaclaw_plugin.scheduling")


@dataclass(frozen=True)
class Reading:
    away: bool  # a reason to train now
    present: bool = False  # the user is at the machine (or unknown): vetoes a window
    until: float | None = None  # predicted end of the away period (epoch seconds)
    detail: str = ""

    def as_dict(self) -> dict[str, object]:
        return {"away": self.away, "present": self.present, "until": self.until, "detail": self.detail}


def unknown(detail: str) -> Reading:
    """A detector that cannot tell: the user counts as present."""
    return Reading(away=False, present=True, detail=f"unknown ({detail}); treated as present")


@runtime_checkable
class Signal(Protocol):
    name: str
    activity: bool  # True for idle detectors (may veto); False for schedules

    def read(self, now: float) -> Reading: ...


@runtime_checkable
class Schedule(Signal, Protocol):
    def next_away(self, now: float) -> tuple[float, float] | None:
        """The next away period (start, end) that starts after ``now``, if known."""
        ...


@dataclass(frozen=True)
class Decision:
    open: bool
    reason: str
    until: float | None = None
    readings: dict[str, Reading] = field(default_factory=dict)


def safe_read(sig: Signal, now: float) -> Reading:
    try:
        return sig.read(now)
    except Exception as e:  # a broken signal must not break the scheduler, and must not let it train
        log.warning("signal %s failed: %s", sig.name, e)
        if sig.activity:
            return unknown(f"{type(e).__name__}: {e}")
        return Reading(away=False, detail=f"failed ({type(e).__name__}: {e}); not away")


class Gate:
    """Combines the signals into a :class:`Decision` for ``auto`` mode."""

    def __init__(self, signals: list[Signal], min_window_s: float):
        self.signals = signals
        self.min_window_s = float(min_window_s)

    def decide(self, now: float) -> Decision:
        readings = {s.name: safe_read(s, now) for s in self.signals}
        present = [f"{n}: {r.detail}" for n, r in readings.items() if r.present]
        if present:
            return Decision(False, "user present (" + "; ".join(present) + ")", None, readings)
        away = {n: r for n, r in readings.items() if r.away}
        if not away:
            return Decision(False, "no signal says the user is away", None, readings)
        ends = [r.until for r in away.values() if r.until is not None]
        until = max(ends) if ends else None
        names = ", ".join(f"{n}: {r.detail}" for n, r in away.items())
        if until is None or until - now < self.min_window_s:
            left = "unknown" if until is None else f"{(until - now) / 60:.1f} min"
            return Decision(
                False, f"away ({names}) but the window is predicted to last {left} < minimum", until, readings
            )
        return Decision(True, f"away ({names}) for {(until - now) / 60:.0f} min", until, readings)

    def next_window(self, now: float) -> tuple[float, float, str] | None:
        """The earliest upcoming schedule window long enough to open (start, end, signal)."""
        best: tuple[float, float, str] | None = None
        for s in self.signals:
            if not isinstance(s, Schedule) or s.activity:
                continue
            try:
                nxt = s.next_away(now)
            except Exception as e:
                log.warning("signal %s failed: %s", s.name, e)
                continue
            if nxt and nxt[1] - nxt[0] >= self.min_window_s and (best is None or nxt[0] < best[0]):
                best = (nxt[0], nxt[1], s.name)
        return best
