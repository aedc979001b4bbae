"""A pytest plugin that runs any test of the suite on the PostgreSQL backend: ``pytest -p on_postgres tests/X.py``.

It starts one server (as :mod:`postgres_support` does) and gives every test a fresh, empty database through
``METACLAW_STORAGE__BACKEND``/``METACLAW_STORAGE__URL``, so whatever builds its ``Settings`` from the
environment stores its sessions, samples, jobs and skills there. Tests that read ``metaclaw.db`` directly fail
by design. Used to check the learning side's SQL on PostgreSQL (the fast loop's suite passes this way)."""

from __future__ import annotations

import itertools
import os

import pytest
from postgres_support import PASSWORD, missing_reason, start_server

_names = itertools.count()


@pytest.fixture(scope="session")
def _pg_for_all():
    reason = missing_reason()
    if reason:
        pytest.skip(f"NO POSTGRESQL: {reason}")
    srv = start_server()
    os.environ["PGPASSWORD"] = PASSWORD
    try:
        yield srv
    finally:
        srv.destroy()


@pytest.fixture(autouse=True)
def _on_postgres(_pg_for_all, monkeypatch: pytest.MonkeyPatch) -> None:
    import psycopg

    name = f"each_{os.getpid()}_{next(_names)}"
    with psycopg.connect(_pg_for_all.url, autocommit=True) as c:
        c.execute(f'CREATE DATABASE "{name}"')
    monkeypatch.setenv("METACLAW_STORAGE__BACKEND", "postgres")
    monkeypatch.setenv("METACLAW_STORAGE__URL", f"postgresql://metaclaw@127.0.0.1:{_pg_for_all.port}/{name}")
