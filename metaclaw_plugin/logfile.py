"""The plugin's own log file, ``$METACLAW_HOME/logs/metaclaw.log``: warnings and errors of the background
work (judge, evolver, trials), redacted, so that a failing fast loop can be diagnosed after the fact even
when the host swallows its loggers. ``doctor`` names it when the fast loop is unavailable."""

from __future__ import annotations

import logging
import os
import threading
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import Any

LOGGER = "metaclaw_plugin"
_current: tuple[Path, logging.Handler] | None = None
_lock = threading.Lock()


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
    """Every file it opens, rotated ones included, is created with mode 0600."""

    def _open(self) -> Any:
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        return os.fdopen(fd, "a", encoding=self.encoding)


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
        logger.addHandler(handler)
        _current = (path, handler)
    return path
