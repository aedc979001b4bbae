"""The PostgreSQL backend: the same narrow interface as :class:`.sqlite.Database`, through psycopg 3 and a pool.

Callers keep writing the SQL they write for SQLite (``?`` placeholders, ``INSERT OR IGNORE``, upserts whose
``DO UPDATE`` names the old row's columns bare, two-argument ``MAX``/``MIN``, ``json_each`` over an array);
:func:`translate` turns each statement into PostgreSQL once (cached). The schema comes from the same migration
registry (:mod:`.schema`), its DDL translated by :func:`translate_ddl`; the version is kept in a one-row
``schema_version`` table and migrations run under an advisory lock, so racing hosts apply each one once.

``transaction()`` takes a transaction-scoped advisory lock first: writers are serialised as with SQLite's
``BEGIN IMMEDIATE``, which the jobs' read-then-write steps (turn sequence numbers, queue claims) rely on.
The password comes from the environment (``PGPASSWORD``, or the variable ``storage.password_env`` names),
never from the URL, and URLs are shown only through :func:`redact_url`.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..config import check_url
from .schema import CURRENT, MIGRATIONS
from .sqlite import SchemaTooNew

log = logging.getLogger("metaclaw_plugin.store")

WRITE_LOCK = 0x6D63_0001  # advisory lock keys (any 64-bit numbers no other app uses: "mc" + a number)
MIGRATE_LOCK = 0x6D63_0002


def redact_url(url: str) -> str:
    """The URL with any password replaced, for status, doctor and logs."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "postgresql://<unparseable>"
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urlunsplit((parts.scheme, f"{user}:***@{netloc}", parts.path, parts.query, parts.fragment))


def missing_driver() -> str | None:
    import importlib.util

    for mod in ("psycopg", "psycopg_pool"):
        if importlib.util.find_spec(mod) is None:
            return f"{mod} is not installed (pip install 'metaclaw-plugin[postgres]')"
    return None


# SQL translation -----------------------------------------------------------------------------------------------
_TOKEN = re.compile(r"'(?:[^']|'')*'|\"[^\"]*\"|--[^\n]*|\?|%|[^'\"?%-]+|-")
_KEYWORDS = frozenset(
    [
        "case",
        "when",
        "then",
        "else",
        "end",
        "null",
        "is",
        "not",
        "and",
        "or",
        "in",
        "exists",
        "select",
        "from",
        "true",
        "false",
        "like",
        "between",
        "cast",
        "as",
        "distinct",
        "excluded",
        "where",
    ]
)
_RESERVED = re.compile(r"(?<![.\w])(user)(?!\w)")  # column names that PostgreSQL reserves (turns.user)
_IDENT = re.compile(r"(?<![.\w\"])([A-Za-z_]\w*)(?![\w\"])")


def _outside_quotes(sql: str) -> list[tuple[bool, str]]:
    """(is_code, text) pieces: quoted strings/identifiers and comments are left as they are."""
    return [(not (t[0] in "'\"" or t.startswith("--")), t) for t in _TOKEN.findall(sql)]


def _qualify_update(table: str, clause: str) -> str:
    """In ``DO UPDATE SET ...``, PostgreSQL reads a bare column as ambiguous (old row or ``excluded``); SQLite
    reads it as the old row. Qualify bare columns with the table, except the assignment targets."""

    def fix(code: str, prev_tail: str) -> str:
        out = []
        pos = 0
        for m in _IDENT.finditer(code):
            name = m.group(1)
            before = (prev_tail + code[: m.start()]).rstrip()
            after = code[m.end() :].lstrip()
            is_target = after.startswith("=") and not after.startswith("==") and re.search(r"(SET|,)$", before, re.I)
            if name.lower() in _KEYWORDS or after.startswith("(") or is_target:
                continue
            out.append(code[pos : m.start()] + f"{table}.{name}")
            pos = m.end()
        out.append(code[pos:])
        return "".join(out)

    pieces = []
    tail = "SET"  # the clause starts right after it
    for code, text in _outside_quotes(clause):
        pieces.append(fix(text, tail) if code else text)
        tail = (tail + text)[-16:]
    return "".join(pieces)


@lru_cache(maxsize=4096)
def translate(sql: str) -> str:
    """One statement in SQLite's dialect as PostgreSQL: ``?`` -> ``%s`` (and ``%`` escaped), ``INSERT OR IGNORE``
    -> ``ON CONFLICT DO NOTHING``, scalar ``MAX(a, b)``/``MIN(a, b)`` -> ``GREATEST``/``LEAST``, ``json_each(x)``
    over a JSON array in a text column -> ``json_array_elements_text`` (its column is ``value`` too), upsert
    columns qualified."""
    if re.search(r"\bINSERT\s+OR\s+REPLACE\b", sql, re.I):
        raise ValueError("INSERT OR REPLACE is SQLite-only: write INSERT ... ON CONFLICT(key) DO UPDATE SET ...")
    ignore = re.match(r"\s*INSERT\s+OR\s+IGNORE\s+INTO\b", sql, re.I)
    if ignore:
        sql = "INSERT INTO" + sql[ignore.end() :]
    m = re.search(r"\bON\s+CONFLICT\s*(\([^)]*\))?\s*DO\s+UPDATE\s+SET\b", sql, re.I)
    table = re.match(r"\s*INSERT\s+INTO\s+(\w+)", sql, re.I)
    if m and table:
        sql = sql[: m.end()] + _qualify_update(table.group(1), sql[m.end() :])
    out = []
    for code, text in _outside_quotes(sql):
        if not code:
            text = text.replace("%", "%%")  # psycopg reads placeholders inside quotes too
        else:
            text = {"?": "%s", "%": "%%"}.get(text, text)
            text = re.sub(r"\bMAX\(([^(),]+),([^(),]+)\)", r"GREATEST(\1,\2)", text, flags=re.I)
            text = re.sub(r"\bMIN\(([^(),]+),([^(),]+)\)", r"LEAST(\1,\2)", text, flags=re.I)
            text = re.sub(r"\bjson_each\(([^(),]+)\)", r"json_array_elements_text(CAST(\1 AS json))", text, flags=re.I)
            text = _RESERVED.sub(r'"\1"', text)
        out.append(text)
    sql = "".join(out)
    if ignore:
        ret = re.search(r"\bRETURNING\b", sql, re.I)
        sql = (
            f"{sql[: ret.start()]} ON CONFLICT DO NOTHING {sql[ret.start() :]}"
            if ret
            else sql.rstrip().rstrip(";") + " ON CONFLICT DO NOTHING"
        )
    return sql


def translate_ddl(sql: str) -> str:
    """A schema statement of the registry as PostgreSQL: 64-bit integers, double precision, identity keys."""
    sql = re.sub(
        r"\bINTEGER\s+PRIMARY\s+KEY\s+AUTOINCREMENT\b", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", sql
    )
    sql = re.sub(r"\bINTEGER\b", "BIGINT", sql)
    sql = _RESERVED.sub(r'"\1"', sql)
    return re.sub(r"\bREAL\b", "DOUBLE PRECISION", sql)


def _args(args: Iterable[Any]) -> tuple[Any, ...]:
    # SQLite stores a bool as 0/1 in an INTEGER column; PostgreSQL refuses a boolean there.
    return tuple(int(a) if type(a) is bool else a for a in args)


# Rows and results --------------------------------------------------------------------------------------------------
class Row(tuple):
    """A result row read by position or by column name, like :class:`sqlite3.Row` (``dict(row)`` works)."""

    _names: tuple[str, ...] = ()

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            try:
                return tuple.__getitem__(self, self._names.index(key))
            except ValueError:
                raise IndexError(f"no column {key!r}") from None
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._names)


def _row_factory(cursor: Any) -> Any:
    names = tuple(d.name for d in cursor.description or ())
    cls = type("Row", (Row,), {"_names": names, "__slots__": ()})
    return lambda values: cls(values)


class Result:
    """What ``execute`` returns: the rows already fetched, and ``rowcount``."""

    def __init__(self, rows: list[Row], rowcount: int):
        self._rows = rows
        self._i = 0
        self.rowcount = rowcount

    def fetchone(self) -> Any:  # a Row or None (Any, as sqlite3.Cursor.fetchone is typed)
        if self._i >= len(self._rows):
            return None
        self._i += 1
        return self._rows[self._i - 1]

    def fetchall(self) -> list[Row]:
        rest, self._i = self._rows[self._i :], len(self._rows)
        return rest

    def __iter__(self) -> Iterator[Row]:
        return iter(self.fetchall())


def _run(conn: Any, sql: str, args: Iterable[Any]) -> Result:
    cur = conn.cursor(row_factory=_row_factory)
    cur.execute(translate(sql), _args(args))
    rows = cur.fetchall() if cur.description else []
    return Result(rows, cur.rowcount)


class PgTx:
    """The handle ``transaction()`` yields: ``execute``/``executemany`` like a sqlite3 connection's."""

    def __init__(self, conn: Any):
        self.conn = conn

    def execute(self, sql: str, args: Iterable[Any] = ()) -> Result:
        return _run(self.conn, sql, args)

    def executemany(self, sql: str, seq: Iterable[Sequence[Any]]) -> Result:
        cur = self.conn.cursor()
        cur.executemany(translate(sql), [_args(a) for a in seq])
        return Result([], cur.rowcount)


# The database -------------------------------------------------------------------------------------------------------
def conninfo(url: str, password_env: str | None = None) -> dict[str, Any]:
    """Connection keywords: the URL, and the password from ``password_env`` when set (else libpq reads PGPASSWORD)."""
    kw: dict[str, Any] = {"conninfo": url, "connect_timeout": 5, "application_name": "metaclaw-plugin"}
    if password_env:
        pw = os.environ.get(password_env)
        if pw is None:
            raise RuntimeError(f"storage.password_env names {password_env}, which is not set")
        kw["password"] = pw
    return kw


def is_transient(exc: BaseException) -> bool:
    """True for a lost or refused connection (retry later), False for an error in the SQL or the data."""
    import psycopg
    import psycopg_pool

    return isinstance(exc, psycopg.OperationalError | psycopg_pool.PoolTimeout)


class PostgresDatabase:
    """A pool of connections to one PostgreSQL database, schema migrated on first use."""

    def __init__(self, url: str, *, password_env: str | None = None, max_size: int = 8, timeout: float = 10.0):
        problem = check_url(url) or missing_driver()
        if problem:
            raise ValueError(problem)
        self.url = url
        self.password_env = password_env
        self.max_size = max_size
        self.timeout = timeout
        self.lock = threading.RLock()
        self._pool: Any = None
        self._local = threading.local()  # the connection of this thread's open transaction, if any

    @property
    def where(self) -> str:
        return redact_url(self.url)

    def connect(self, *, autocommit: bool = False, extra: dict[str, Any] | None = None) -> Any:
        """One connection outside the pool (LISTEN, the election's lock, migrations)."""
        import psycopg

        kw = {**conninfo(self.url, self.password_env), **(extra or {})}
        return psycopg.connect(kw.pop("conninfo"), autocommit=autocommit, **kw)

    def pool(self) -> Any:
        with self.lock:
            if self._pool is None:
                from psycopg_pool import ConnectionPool

                migrate_postgres(self)
                kw = conninfo(self.url, self.password_env)
                self._pool = ConnectionPool(
                    kw.pop("conninfo"),
                    kwargs=kw,
                    min_size=1,
                    max_size=self.max_size,
                    timeout=self.timeout,
                    open=True,
                    name="metaclaw",
                    reconnect_timeout=0,  # a failed connect gives up at once; the next request for a connection tries again
                    check=ConnectionPool.check_connection,
                )
            return self._pool

    def execute(self, sql: str, args: Iterable[Any] = ()) -> Result:
        inside = getattr(self._local, "conn", None)
        if inside is not None:  # as with SQLite's one connection: a call inside a transaction is part of it
            return _run(inside, sql, args)
        with self.pool().connection() as conn:
            return _run(conn, sql, args)

    def query(self, sql: str, args: Iterable[Any] = ()) -> list[Row]:
        return self.execute(sql, args).fetchall()

    @contextmanager
    def reads(self) -> Iterator[Callable[..., list[Row]]]:
        """A ``query`` for several reads on one connection of the pool: a page's dozens of small queries take one
        connection, not one each (with its liveness check)."""
        with self.pool().connection() as conn:
            yield lambda sql, args=(): _run(conn, sql, args).fetchall()

    def transaction(self) -> _PgTransaction:
        return _PgTransaction(self)

    def close(self) -> None:
        with self.lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None


class _PgTransaction:
    def __init__(self, db: PostgresDatabase):
        self.db = db
        self._cm: Any = None
        self._tx: Any = None

    def __enter__(self) -> PgTx:
        if getattr(self.db._local, "conn", None) is not None:  # SQLite refuses a nested BEGIN too
            raise RuntimeError("a transaction is already open in this thread")
        self._cm = self.db.pool().connection()
        conn = self._cm.__enter__()
        try:
            self._tx = conn.transaction()
            self._tx.__enter__()
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
        except BaseException as e:
            self._cm.__exit__(type(e), e, e.__traceback__)
            raise
        self.db._local.conn = conn
        return PgTx(conn)

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.db._local.conn = None
        try:
            self._tx.__exit__(exc_type, exc, tb)
        finally:
            self._cm.__exit__(exc_type, exc, tb)


# Migrations -----------------------------------------------------------------------------------------------------------
def schema_version_pg(db: PostgresDatabase) -> int:
    with db.connect(autocommit=True) as conn:
        if conn.execute("SELECT to_regclass('schema_version')").fetchone()[0] is None:
            return 0
        row = conn.execute("SELECT version FROM schema_version").fetchone()
        return int(row[0]) if row else 0


def check_postgres(db: PostgresDatabase) -> tuple[bool, str]:
    """For ``doctor``: whether the server answers, and its schema version against this release's."""
    try:
        version = schema_version_pg(db)
    except Exception as e:
        return False, f"{db.where}: unreachable ({type(e).__name__}: {e})"
    if version > CURRENT:
        return False, f"{db.where}: schema {version} is newer than this release's {CURRENT}"
    later = "" if version == CURRENT else f" (migrates to {CURRENT} on the next start)"
    return True, f"{db.where}: reachable, schema {version}{later}"


def migrate_postgres(db: PostgresDatabase) -> list[int]:
    """Bring the database to :data:`CURRENT` under an advisory lock. Returns the versions applied."""
    t0 = time.monotonic()
    with db.connect(autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATE_LOCK,))
        try:
            conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)")
            row = conn.execute("SELECT version FROM schema_version").fetchone()
            version = int(row[0]) if row else 0
            if row is None:
                conn.execute("INSERT INTO schema_version(version) VALUES (0)")
            if version > CURRENT:
                raise SchemaTooNew(
                    f"{db.where} has schema version {version}; this release knows up to {CURRENT}. "
                    "Upgrade metaclaw-plugin on every host first."
                )
            applied = []
            for m in MIGRATIONS:
                if m.version <= version:
                    continue
                with conn.transaction():
                    for stmt in m.statements:
                        conn.execute(translate_ddl(stmt))
                    conn.execute("UPDATE schema_version SET version = %s", (m.version,))
                applied.append(m.version)
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATE_LOCK,))
    if applied:
        log.info(
            "database %s migrated to schema %d (applied %s) in %.2fs", db.where, CURRENT, applied, time.monotonic() - t0
        )
    return applied
