"""The SQLite backend: how every component connects to ``metaclaw.db``, and the one narrow
interface (:class:`Database`) that the background jobs use for their SQL.

Connections are WAL, ``synchronous=NORMAL`` and wait on a busy database instead of failing.
Every writable open reads ``PRAGMA user_version`` (microseconds) and, when it is behind, runs the
schema migrations (see :mod:`.schema`) under a file lock.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from filelock import FileLock

from .schema import CURRENT, MIGRATIONS

log = logging.getLogger("metaclaw_plugin.store")


class SchemaTooNew(RuntimeError):
    """The database was written by a newer release: opening it could lose what that release stores."""


def connect(path: Path | str, *, rows: bool = False, readonly: bool = False) -> sqlite3.Connection:
    """A connection to the plugin's database, schema migrated (the file is created 0600)."""
    p = Path(path).expanduser()
    if readonly:
        conn = sqlite3.connect(f"file:{p}?mode=ro", uri=True, timeout=5, check_same_thread=False)
    else:
        p.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not p.exists():
            os.close(os.open(p, os.O_WRONLY | os.O_CREAT, 0o600))
        conn = sqlite3.connect(p, timeout=30, isolation_level=None, check_same_thread=False)
        if int(conn.execute("PRAGMA user_version").fetchone()[0]) != CURRENT:
            migrate(p)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=30000")
    if rows:
        conn.row_factory = sqlite3.Row
    return conn


def file_stat(path: Path) -> os.stat_result | None:
    """The database file's stat, None when there is none: a connection held open notices by the (device, inode)
    that the file at the path was deleted or replaced under it."""
    try:
        return os.stat(path)
    except OSError:
        return None


def read_file(path: Path, sql: str, args: Iterable[Any] = ()) -> list[sqlite3.Row]:
    """Rows from the database file, opened read-only and never created, for a report: [] when there is no file or
    it cannot be read (an older home without the table)."""
    if not path.exists():
        return []
    try:
        conn = connect(path, rows=True, readonly=True)
        try:
            return conn.execute(sql, tuple(args)).fetchall()
        finally:
            conn.close()
    except sqlite3.Error:
        return []


def schema_version(path: Path | str) -> int:
    conn = sqlite3.connect(f"file:{Path(path).expanduser()}?mode=ro", uri=True, timeout=5)
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()


def migrate(path: Path | str) -> list[int]:
    """Bring the database to :data:`CURRENT`. Returns the versions applied (none when up to date)."""
    p = Path(path).expanduser().resolve()
    with FileLock(f"{p}.migrate.lock", timeout=60, mode=0o600):
        applied = _apply(p)  # reads the version again under the lock: another process may have migrated
    if applied:
        log.info("database %s migrated to schema %d (applied %s)", p, CURRENT, applied)
    return applied


def _apply(p: Path) -> list[int]:
    conn = sqlite3.connect(p, timeout=60, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA busy_timeout=60000")
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version > CURRENT:
            raise SchemaTooNew(
                f"{p} has schema version {version}; this release knows up to {CURRENT}. "
                "Upgrade metaclaw-plugin, or point db_path at another file."
            )
        applied = []
        for m in MIGRATIONS:
            if m.version <= version:
                continue
            conn.execute("BEGIN IMMEDIATE")
            try:
                for stmt in m.statements:
                    conn.execute(stmt)
                conn.execute(f"PRAGMA user_version = {int(m.version)}")
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            applied.append(m.version)
        return applied
    finally:
        conn.close()


class Database:
    """One connection and a lock: the narrow interface every learning job's SQL goes through.

    ``execute``/``query`` take ``?`` placeholders; ``transaction()`` yields a connection inside
    ``BEGIN IMMEDIATE`` and commits or rolls back. :class:`.postgres.PostgresDatabase` implements the same calls."""

    def __init__(self, path: Path | str):
        self.path = Path(path).expanduser()
        self.lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None

    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = connect(self.path, rows=True)
        return self._conn

    def execute(self, sql: str, args: Iterable[Any] = ()) -> sqlite3.Cursor:
        with self.lock:
            return self.conn().execute(sql, tuple(args))

    def query(self, sql: str, args: Iterable[Any] = ()) -> list[sqlite3.Row]:
        with self.lock:
            return self.conn().execute(sql, tuple(args)).fetchall()

    def transaction(self) -> _Tx:
        return _Tx(self)

    def close(self) -> None:
        with self.lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


class _Tx:
    def __init__(self, db: Database):
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
