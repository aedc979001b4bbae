"""A pytest plugin that runs any test of the suite on the PostgreSQL backend: ``pytest -p on_postgres tests/PART/X.py``
with ``tests/support`` on ``PYTHONPATH``.

It starts one server (as :mod:`postgres_support` does) and gives every test a fresh, empty database through
``METACLAW_STORAGE__BACKEND``/``METACLAW_STORAGE__URL``, so whatever builds its ``Settings`` from the
environment stores its sessions, samples, jobs and skills there. Tests that read ``metaclaw.db`` directly fail
by design. Used to check the learning side's SQL on PostgreSQL (the fast loop's suite passes this way)."""

from __future__ import annotations

import itertools
import os

import pytest

pytest_plugins = ["postgres_support"]  # its session fixture pg_server starts the one server

_names = itertools.count()


@pytest.fixture(autouse=True)
def _on_postgres(pg_server, monkeypatch: pytest.MonkeyPatch) -> None:
    import psycopg

    name = f"each_{os.getpid()}_{next(_names)}"
    with psycopg.connect(pg_server.url, autocommit=True) as c:
        c.execute(f'CREATE DATABASE "{name}"')
    monkeypatch.setenv("METACLAW_STORAGE__BACKEND", "postgres")
    monkeypatch.setenv("METACLAW_STORAGE__URL", f"postgresql://metaclaw@127.0.0.1:{pg_server.port}/{name}")
