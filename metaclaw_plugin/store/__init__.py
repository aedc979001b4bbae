"""Persistent state: one owner for ``metaclaw.db`` (schema registry, migrations, connections) and
the trajectory store with its journal. The request path writes through here; nothing here
imports the learning side."""

from .schema import CURRENT as SCHEMA_VERSION
from .sqlite import Database, SchemaTooNew, connect, migrate, schema_version

__all__ = ["SCHEMA_VERSION", "Database", "SchemaTooNew", "connect", "migrate", "schema_version"]
