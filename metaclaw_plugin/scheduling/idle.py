"""Idle detectors: how long since the user last touched the machine or the agent.

Each one reduces to "seconds idle", parsed from one command's output (so each parser is tested on recorded
output) or read from the plugin (host traffic):

* ``macos``: ``ioreg -c IOHIDSystem``, key ``HIDIdleTime`` (nanoseconds).
* ``x11``: ``xprintidle`` (milliseconds; it asks the XScreenSaver extension).
* ``logind``: ``loginctl show-session <id> -p IdleHint -p IdleSinceHint`` (Wayland and headless sessions;
  ``IdleSinceHint`` is microseconds since the epoch; ``IdleHint=no`` means active, i.e. idle 0).
* ``host``: seconds since the last host request the plugin saw (the right signal on a server).

A detector that fails (command missing or broken, odd output, timeout) reads unknown, which counts as present.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable

from .signals import Reading, unknown

Runner = Callable[[list[str]], str]


def run_command(argv: list[str]) -> str:
    """Run a short probe; raises on a missing command, a non-zero exit or a 3 s timeout."""
    p = subprocess.run(argv, capture_output=True, text=True, timeout=3)
    if p.returncode:
        raise RuntimeError(f"{argv[0]} exited {p.returncode}: {p.stderr.strip()[:200]}")
    return p.stdout


# Parsers (pure) ---------------------------------------------------------------------------------------------------
_HID = re.compile(r'"HIDIdleTime"\s*=\s*(\d+)')


def parse_ioreg(out: str) -> float:
    m = _HID.search(out)
    if not m:
        raise ValueError("no HIDIdleTime in ioreg output")
    return int(m.group(1)) / 1e9


def parse_xprintidle(out: str) -> float:
    s = out.strip()
    if not s.isdigit():
        raise ValueError(f"xprintidle printed {s[:40]!r}, not milliseconds")
    return int(s) / 1000.0


def parse_logind(out: str, now: float) -> float:
    props = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    hint = props.get("IdleHint")
    if hint not in ("yes", "no"):
        raise ValueError("no IdleHint in loginctl output")
    if hint == "no":
        return 0.0
    since = int(props.get("IdleSinceHint") or 0)
    if since <= 0:
        raise ValueError("IdleHint=yes without IdleSinceHint")
    return max(0.0, now - since / 1e6)


# Detectors -----------------------------------------------------------------------------------------------------
class IdleDetector:
    """An activity signal from a function returning seconds idle.

    ``optional`` detectors are the ones picked by default: one that has never answered on this machine (no
    ``ioreg`` off macOS, no X display, no systemd) is *off here* and neutral, and is not asked again; once it has
    answered, a failure reads unknown (present), like a detector the config names explicitly."""

    activity = True

    def __init__(
        self,
        name: str,
        idle_seconds: Callable[[float], float],
        threshold_s: float,
        present_s: float,
        optional: bool = False,
    ):
        self.name = name
        self._idle = idle_seconds
        self.threshold_s = float(threshold_s)
        self.present_s = float(present_s)
        self.optional = optional
        self.worked = False
        self.off: str | None = None

    def read(self, now: float) -> Reading:
        if self.off is not None:
            return Reading(away=False, detail=f"off here ({self.off})")
        try:
            idle = float(self._idle(now))
        except Exception as e:
            why = f"{type(e).__name__}: {str(e).strip()[:160]}"
            if self.optional and not self.worked:
                self.off = why
                return Reading(away=False, detail=f"off here ({why})")
            return unknown(why)
        self.worked = True
        detail = f"idle {idle / 60:.1f} min"
        if idle >= self.threshold_s:
            # the predictor: an idle period lasts as long again as it has lasted (at the threshold: threshold)
            return Reading(away=True, until=now + idle, detail=detail)
        return Reading(away=False, present=idle < self.present_s, detail=detail)


def macos_idle(run: Runner = run_command) -> Callable[[float], float]:
    return lambda now: parse_ioreg(run(["ioreg", "-c", "IOHIDSystem", "-d", "4"]))


def x11_idle(run: Runner = run_command) -> Callable[[float], float]:
    return lambda now: parse_xprintidle(run(["xprintidle"]))


def logind_session(run: Runner = run_command) -> str:
    """This user's graphical (or only) session: $XDG_SESSION_ID, else the user's Display session."""
    sid = os.environ.get("XDG_SESSION_ID")
    if sid:
        return sid
    out = run(["loginctl", "show-user", str(os.getuid()), "-p", "Display", "--value"]).strip()
    if not out:
        raise RuntimeError("no logind session for this user")
    return out


def logind_idle(run: Runner = run_command) -> Callable[[float], float]:
    def probe(now: float) -> float:
        sid = logind_session(run)
        return parse_logind(run(["loginctl", "show-session", sid, "-p", "IdleHint", "-p", "IdleSinceHint"]), now)

    return probe


def host_idle(last_request: Callable[[], float], started: float | None = None) -> Callable[[float], float]:
    """Seconds since the last host request, counting from ``started`` (this process's start) when none came
    yet; with no ``started`` and no request on record the reading is unknown."""

    def idle(now: float) -> float:
        seen = max(last_request() or 0.0, started or 0.0)
        if seen <= 0:
            raise LookupError("no host request recorded yet")
        return max(0.0, now - seen)

    return idle


SYSTEM = {"macos": macos_idle, "x11": x11_idle, "logind": logind_idle}
