"""Persistent state: one owner for the database (schema registry, migrations, connections; SQLite or
PostgreSQL), the trajectory store with its journal, and every SQL statement of the product, one module per table
or group behind typed functions (docs/architecture.md lists them). The request path writes through here; nothing
here imports the learning side."""

from .backend import AnyDatabase, open_database
from .schema import CURRENT as SCHEMA_VERSION
from .sqlite import Database, SchemaTooNew, connect, migrate, schema_version

__all__ = [
    "SCHEMA_VERSION",
    "AnyDatabase",
    "Database",
    "SchemaTooNew",
    "connect",
    "migrate",
    "open_database",
    "schema_version",
]
