"""Which database a home uses (``storage.backend``): the one place that opens it, for every component."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from .postgres import PostgresDatabase
from .sqlite import Database, connect

if TYPE_CHECKING:
    from ..config import Settings

AnyDatabase: TypeAlias = Database | PostgresDatabase


class Query(Protocol):
    def __call__(self, sql: str, args: Sequence[Any] = (), /) -> list[Any]: ...


def open_database(settings: Settings) -> AnyDatabase:
    """The home's database: SQLite at ``db_file``, or the PostgreSQL server at ``storage.url``."""
    st = settings.storage
    if st.backend == "postgres":
        assert st.url is not None  # the settings refuse postgres without a URL
        return PostgresDatabase(st.url, password_env=st.password_env)
    return Database(settings.db_file)


def postgres_of(settings: Settings) -> PostgresDatabase | None:
    """The PostgreSQL database of the home, or None for SQLite."""
    db = open_database(settings)
    return db if isinstance(db, PostgresDatabase) else None


@contextmanager
def reading(db: Path | PostgresDatabase) -> Iterator[Query]:
    """Read-only SQL (SQLite's dialect, rows read by name or position) for what people look at: the dashboard,
    ``skills list``. SQLite: one read-only connection to the file, where a file or a table not created yet reads as
    no rows. PostgreSQL: one connection of ``db``'s pool, the SQL translated; the caller owns ``db``."""
    if isinstance(db, PostgresDatabase):
        with db.reads() as pooled:
            yield pooled
        return
    if not db.exists():
        yield lambda sql, args=(): []
        return
    conn = connect(db, rows=True, readonly=True)

    def query(sql: str, args: Sequence[Any] = ()) -> list[Any]:
        try:
            return conn.execute(sql, tuple(args)).fetchall()
        except sqlite3.OperationalError:
            return []  # a table not created yet (an older schema, or nothing recorded)

    try:
        yield query
    finally:
        conn.close()


@contextmanager
def reading_home(settings: Settings) -> Iterator[Query]:
    """:func:`reading` on the home's database, opened and closed here (a command's one look)."""
    pg = postgres_of(settings)
    try:
        with reading(pg if pg is not None else settings.db_file) as query:
            yield query
    finally:
        if pg is not None:
            pg.close()


def describe(settings: Settings) -> dict[str, str]:
    """For status and doctor: the backend and where it is (a URL is shown without its password)."""
    st = settings.storage
    if st.backend == "postgres" and st.url:
        from .postgres import redact_url

        return {"backend": "postgres", "where": redact_url(st.url)}
    return {"backend": "sqlite", "where": str(settings.db_file)}
