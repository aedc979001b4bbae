"""One learner among the hosts that share a database: :class:`LearnerElection` and its ``is_leader()``.

The learner (evolution, shadow trials, reviews; the trainer checks the same object) runs on the host that holds a
PostgreSQL session advisory lock, taken on a connection of its own. When that host dies, its session ends and
the server releases the lock; another host's next try (every ``check_every`` seconds) takes it. TCP keepalives
on both ends bound how long a host cut off by the network keeps the lock (~10 s), and the holder steps down as
soon as its own connection fails, so two learners never act at once for longer than that bound.
The holder records itself in ``runtime_state`` (key ``learner``) with a heartbeat, for status on every host.

With SQLite there is one home on one machine: the host is always the learner.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
from typing import Any

from ..infra.service import Service
from .postgres import PostgresDatabase

log = logging.getLogger("metaclaw_plugin.store")

LEARNER_LOCK = 0x6D63_0003
KEEPALIVE = {"keepalives": 1, "keepalives_idle": 3, "keepalives_interval": 2, "keepalives_count": 2}


def host_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class LearnerElection:
    def __init__(self, db: PostgresDatabase | None, *, host: str | None = None, check_every: float = 1.0):
        self.db = db
        self.host = host or host_id()
        self.check_every = check_every
        self._leader = db is None
        self._conn: Any = None
        self._since: float | None = time.time() if db is None else None
        self.service = Service.every("metaclaw-election", check_every, self.check)
        self.changes = 0
        self.last_error: str | None = None

    def is_leader(self) -> bool:
        """Whether this host runs the learner now (a flag: no I/O)."""
        return self._leader

    def start(self) -> LearnerElection:
        if self.db is None or self.service.running:
            return self
        self.check()
        self.service.start()
        return self

    def stop(self) -> None:
        self.service.stop(5)
        self._drop()

    def services(self) -> list[Service]:
        return [self.service]

    def check(self) -> bool:
        """Take the lock if free, or prove it is still held (a heartbeat). Steps down on any connection error."""
        if self.db is None:
            return True
        try:
            if self._conn is None or self._conn.closed:
                self._conn = self.db.connect(autocommit=True, extra=KEEPALIVE)
                for name, value in (("tcp_keepalives_idle", 3), ("tcp_keepalives_interval", 2)):
                    self._conn.execute(f"SET {name} = {int(value)}")
                self._conn.execute("SET tcp_keepalives_count = 2")
            if not self._leader:
                got = bool(self._conn.execute("SELECT pg_try_advisory_lock(%s)", (LEARNER_LOCK,)).fetchone()[0])
                if got:
                    self._set(True)
            if self._leader:
                now = time.time()
                self._conn.execute(
                    "INSERT INTO runtime_state(key, value, updated_at) VALUES ('learner', %s, %s) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                    (json.dumps({"host": self.host, "pid": os.getpid(), "since": self._since}), now),
                )
            self.last_error = None
        except Exception as e:
            self.last_error = f"{type(e).__name__}: {e}"
            self._drop()
        return self._leader

    def _set(self, leader: bool) -> None:
        if leader != self._leader:
            self.changes += 1
            self._since = time.time() if leader else None
            log.info("this host (%s) %s the learner", self.host, "is now" if leader else "is no longer")
        self._leader = leader

    def _drop(self) -> None:
        if self.db is not None:
            self._set(False)
        if self._conn is not None:
            try:
                self._conn.close()  # ends the session: the server releases the lock
            except Exception:
                pass
            self._conn = None

    def status(self) -> dict[str, Any]:
        out: dict[str, Any] = {"host": self.host, "leader": self._leader, "since": self._since}
        if self.db is None:
            out["how"] = "single host (sqlite)"
        else:
            out["how"] = f"advisory lock on {self.db.where}, checked every {self.check_every:g}s"
            if self.last_error:
                out["error"] = self.last_error
        return out
