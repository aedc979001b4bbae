"""The plugin's logging: its own log file, and a throttle on what reaches the host's.

The log file, ``$METACLAW_HOME/logs/metaclaw.log``, holds the warnings and errors of the background work (judge,
evolver, trials), redacted, so that a failing fast loop can be diagnosed after the fact even when the host swallows
its loggers. ``doctor`` names it when the fast loop is unavailable.

The throttle: a fault that repeats on every turn (a full disk, a read-only home) must not flood the host's stderr.
Each of the plugin's loggers (``metaclaw_plugin``, ``metaclaw_litellm``, ``metaclaw_langchain`` and their children)
hands its records to the host's root handlers through one :class:`_Throttle`: a record like one already shown in the
last minute (same logger, level, message and exception type) is counted, not shown, and the next one shown says how
many were not. The log file's own write errors are one line on stderr a minute, not a traceback each.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import Any

LOGGER = "metaclaw_plugin"
QUIET_LOGGERS = (LOGGER, "metaclaw_litellm", "metaclaw_langchain")
WINDOW = 60.0  # seconds during which a record like one already shown is counted, not shown
_current: tuple[Path, logging.Handler] | None = None
_lock = threading.Lock()


class _Throttle(logging.Filter):
    """At most one record of a kind per :data:`WINDOW`; the next one shown carries how many were held back."""

    def __init__(self) -> None:
        super().__init__()
        self._seen: dict[tuple[Any, ...], list[float]] = {}  # kind -> [window start, held back]
        self._lock = threading.Lock()
        self.held = 0  # records not shown, in all

    def reset(self) -> None:
        with self._lock:
            self._seen.clear()

    def filter(self, record: logging.LogRecord) -> bool:
        """Decided once per record: the file's handler and the host's see the same records."""
        shown = getattr(record, "_metaclaw_shown", None)
        if shown is None:
            shown = self._decide(record)
            record._metaclaw_shown = shown
        return bool(shown)

    def _decide(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[0].__name__ if record.exc_info and record.exc_info[0] else None
        kind = (record.name, record.levelno, str(record.msg)[:200], exc)
        now = time.monotonic()
        with self._lock:
            entry = self._seen.get(kind)
            if entry is not None and now - entry[0] < WINDOW:
                entry[1] += 1
                self.held += 1
                return False
            held = int(entry[1]) if entry is not None else 0
            if len(self._seen) >= 4096:
                self._seen.clear()
            self._seen[kind] = [now, 0]
        if held:
            record.msg = f"{record.msg} [{held} more like this in the last {WINDOW:.0f} s not shown]"
        return True


class _ToHost(logging.Handler):
    """Hands the plugin's records to the host's root handlers, as propagation would, once throttled."""

    def emit(self, record: logging.LogRecord) -> None:
        handlers = logging.getLogger().handlers
        if not handlers and logging.lastResort is not None:
            handlers = [logging.lastResort]  # what Python does for a record no handler takes
        mine = {h for name in QUIET_LOGGERS for h in logging.getLogger(name).handlers}
        for h in handlers:
            if record.levelno >= h.level and h not in mine:  # one the host (or pytest) put on ours too: it has it
                h.handle(record)


THROTTLE = _Throttle()
_TO_HOST = _ToHost()
_TO_HOST.addFilter(THROTTLE)


def quiet_logging() -> None:
    """Route the plugin's loggers to the host's handlers through the throttle (idempotent). A host that adds its own
    handlers to these loggers still gets every record."""
    for name in QUIET_LOGGERS:
        logger = logging.getLogger(name)
        if _TO_HOST not in logger.handlers:
            logger.addHandler(_TO_HOST)
        logger.propagate = False


def held_back() -> dict[str, int]:
    """For ``status``: records the throttle held back, and log-file writes that failed."""
    h = _current[1] if _current is not None else None
    return {"log_records_held_back": THROTTLE.held, "log_file_errors": getattr(h, "write_errors", 0)}


def log_file(home: Path) -> Path:
    return Path(home).expanduser() / "logs" / "metaclaw.log"


class _RedactingFormatter(logging.Formatter):
    """Formats as usual, then redacts the whole line, traceback included (exceptions can quote user text)."""

    def __init__(self, redactor: Any) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")
        self._redactor = redactor

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        return self._redactor.redact(text) if self._redactor is not None else text


class _PrivateRotatingHandler(RotatingFileHandler):
    """Every file it opens, rotated ones included, is created with mode 0600. A record it cannot write (a full disk,
    a read-only home) is counted, with one line on stderr a minute at most instead of a traceback each."""

    write_errors = 0
    _said = -WINDOW

    def _open(self) -> Any:
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        return os.fdopen(fd, "a", encoding=self.encoding)

    def handleError(self, record: logging.LogRecord) -> None:
        self.write_errors += 1
        now = time.monotonic()
        if now - self._said < WINDOW:
            return
        self._said = now
        e = sys.exc_info()[1]
        try:
            sys.stderr.write(
                f"metaclaw: cannot write its log file {self.baseFilename} ({type(e).__name__}: {e}); "
                f"{self.write_errors} records not written so far\n"
            )
        except Exception:
            pass


def attach_log_file(home: Path, redactor: Any, level: str = "WARNING") -> Path:
    """Point the ``metaclaw_plugin`` logger's file handler at this home (mode 0600, 1 MB x 3). One file per
    process: a plugin started for another home takes the handler over, so no home gets another's records."""
    global _current
    path = log_file(home)
    with _lock:
        if _current is not None and _current[0] == path:
            return path
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        handler = _PrivateRotatingHandler(path, maxBytes=1_000_000, backupCount=2, encoding="utf-8", delay=True)
        handler.setLevel(max(logging.WARNING, logging.getLevelName(level)))
        handler.setFormatter(_RedactingFormatter(redactor))
        logger = logging.getLogger(LOGGER)
        if _current is not None:
            logger.removeHandler(_current[1])
            _current[1].close()
        handler.addFilter(THROTTLE)
        logger.addHandler(handler)
        _current = (path, handler)
    quiet_logging()
    return path
