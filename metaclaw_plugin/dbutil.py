"""A shared way to open the plugin's SQLite file from background components (WAL, one lock each)."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path
from typing import Any, Iterable


class DB:
    """One connection plus a lock; every background table of the fast loop goes through one of these."""

    def __init__(self, path: Path | str, schema: str = ""):
        self.path = Path(path).expanduser()
        self.schema = schema
        self.lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None

    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            if not self.path.exists():
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))
            c = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            c.row_factory = sqlite3.Row
            c.execute("PRAGMA journal_mode=WAL")
            c.execute("PRAGMA synchronous=NORMAL")
            c.execute("PRAGMA busy_timeout=30000")
            if self.schema:
                c.executescript(self.schema)
            self._conn = c
        return self._conn

    def execute(self, sql: str, args: Iterable[Any] = ()) -> sqlite3.Cursor:
        with self.lock:
            return self.conn().execute(sql, tuple(args))

    def query(self, sql: str, args: Iterable[Any] = ()) -> list[sqlite3.Row]:
        with self.lock:
            return self.conn().execute(sql, tuple(args)).fetchall()

    def transaction(self) -> "_Tx":
        return _Tx(self)

    def close(self) -> None:
        with self.lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


class _Tx:
    def __init__(self, db: DB):
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        self.db.lock.acquire()
        c = self.db.conn()
        c.execute("BEGIN IMMEDIATE")
        return c

    def __exit__(self, exc_type: Any, *rest: Any) -> None:
        try:
            self.db.conn().execute("ROLLBACK" if exc_type else "COMMIT")
        finally:
            self.db.lock.release()
