"""Which database a home uses (``storage.backend``): the one place that opens it, for every component."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

from .postgres import PostgresDatabase
from .sqlite import Database

if TYPE_CHECKING:
    from ..config import Settings

AnyDatabase: TypeAlias = Database | PostgresDatabase


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


def describe(settings: Settings) -> dict[str, str]:
    """For status and doctor: the backend and where it is (a URL is shown without its password)."""
    st = settings.storage
    if st.backend == "postgres" and st.url:
        from .postgres import redact_url

        return {"backend": "postgres", "where": redact_url(st.url)}
    return {"backend": "sqlite", "where": str(settings.db_file)}
