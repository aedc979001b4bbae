"""One trainer per home: a lock file holding the owner's PID, host and a heartbeat.

Taking it is a check-and-write under a short :mod:`filelock` guard, so two processes never both win. A lock
whose heartbeat is older than ``stale_s``, or whose PID is gone on this host, is taken over (a crashed trainer
must not stop training for good). The owner refreshes the heartbeat while it trains.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import Any

from filelock import FileLock

from ..infra.procs import pid_alive

LOCK_FILE = "trainer.lock"


class TrainerLock:
    def __init__(self, home: Path, stale_s: float = 120.0):
        self.path = Path(home).expanduser() / LOCK_FILE
        self.stale_s = float(stale_s)
        self._guard = FileLock(f"{self.path}.guard", timeout=10, mode=0o600)
        self.me = {"pid": os.getpid(), "host": socket.gethostname()}
        self.held = False

    def holder(self) -> dict[str, Any] | None:
        try:
            return dict(json.loads(self.path.read_text()))
        except (OSError, ValueError):
            return None

    def _stale(self, h: dict[str, Any], now: float) -> bool:
        if now - float(h.get("heartbeat", 0)) > self.stale_s:
            return True
        return h.get("host") == self.me["host"] and not pid_alive(int(h.get("pid", 0)))

    def _mine(self, h: dict[str, Any] | None) -> bool:
        return bool(h) and all(h.get(k) == v for k, v in self.me.items())  # type: ignore[union-attr]

    def _write(self, now: float) -> None:
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump({**self.me, "heartbeat": now}, f)
        os.replace(tmp, self.path)

    def acquire(self) -> bool:
        """Take the lock (or keep it); False when a live process holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with self._guard:
            now = time.time()
            h = self.holder()
            if h is not None and not self._mine(h) and not self._stale(h, now):
                return False
            self._write(now)
            self.held = True
            return True

    def heartbeat(self) -> bool:
        """Refresh the heartbeat; False (and not held) when another process took the lock over."""
        if not self.held:
            return False
        with self._guard:
            if not self._mine(self.holder()):
                self.held = False
                return False
            self._write(time.time())
            return True

    def release(self) -> None:
        with self._guard:
            if self._mine(self.holder()):
                self.path.unlink(missing_ok=True)
        self.held = False
