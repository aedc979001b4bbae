"""No stored row, however malformed, turns memory off for anyone (issue 41, item 4): readers skip and report a row
with wrong types, bad JSON, NULLs or non-finite numbers (inserted here with SQL), and ``list``, ``show``, ``forget``,
``export`` and the dashboard keep working; a person can forget one.
"""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from test_memory import end, memory_part, run_cli, say

from metaclaw_plugin import MetaClawPlugin, Settings
from metaclaw_plugin.learning.memory.ops import MemoryError_, MemoryOps
from metaclaw_plugin.sidecar import create_app, load_or_create_token


@pytest.fixture
def plugin(home: Path):
    p = MetaClawPlugin(Settings(home=home)).start()
    yield p
    p.stop()


_COLS = (
    "id, tenant, user_id, kind, subject, text, status, standing, shared, valid_from, valid_to, expires_at, source, "
    "superseded_by, screen, created_at, updated_at, rev"
)


def _insert(db_path: Path, *rows: tuple[Any, ...]) -> None:
    con = sqlite3.connect(db_path)
    try:
        with con:
            for row in rows:
                con.execute(f"INSERT INTO memories({_COLS}) VALUES ({', '.join('?' * 18)})", row)
            con.execute("UPDATE memory_rev SET rev = rev + 1 WHERE id = 1")
    finally:
        con.close()


def _good(mid: str, user: str, text: str) -> tuple[Any, ...]:
    return (mid, "acme", user, "fact", mid, text, "active", 0, 0, 1.7e9, None, None, None, None, None, 1.7e9, 1.7e9, 1)


def _bad_rows(user: str) -> list[tuple[Any, ...]]:
    ok = list(_good("x", user, "The staging cluster is kube-7."))

    def bad(mid: str, **cols: Any) -> tuple[Any, ...]:
        row = [*ok]
        row[0] = mid
        for k, v in cols.items():
            row[[c.strip() for c in _COLS.split(",")].index(k)] = v
        return tuple(row)

    return [
        bad("bad-json-source", source="{not json"),
        bad("bad-json-screen", screen="[1, 2]", status="quarantined"),
        bad("bad-time", valid_from="yesterday"),
        bad("bad-inf", created_at=math.inf),
        bad("bad-huge", valid_from=1e300),
        bad("bad-blob", text=b"\x00\xff"),
        bad("bad-flag", standing="maybe"),
        bad("bad-kind", kind="gossip"),
        bad("bad-status", status="weird"),
        bad("bad-rev", rev="x"),
        bad("bad-expiry", expires_at="soon"),
    ]


def test_no_malformed_row_turns_memory_off_for_anyone(plugin: MetaClawPlugin, home: Path) -> None:
    say(plugin, "s0", "Remember that the analytics warehouse is snowflake-eu-3.", user="ben")
    end(plugin, "s0")
    _insert(home / "metaclaw.db", *_bad_rows("ana"), _good("good-ana", "ana", "Our release branch is trunk-stable."))
    assert plugin.refresh_memory() is not False
    # every user's memory keeps working: the malformed rows' owner included
    assert "snowflake-eu-3" in memory_part(say(plugin, "s1", "Which warehouse do analytics exports use?", user="ben"))
    assert "trunk-stable" in memory_part(say(plugin, "s1", "Which release branch do I merge into?"))
    store = plugin.memory_store
    assert store is not None
    assert {m.id for m in store.find("acme", "ana", statuses=None)} == {"good-ana"}
    assert len(store.malformed("acme")) == 11
    ops = MemoryOps(store.db, plugin.settings)
    assert [r["id"] for r in ops.list_("acme", "ana")] == ["good-ana"]
    doc = ops.export("acme")
    assert {m["id"] for m in doc["memories"]} >= {"good-ana"} and len(doc["skipped"]) == 11
    with pytest.raises(MemoryError_, match="malformed"):
        ops.show("bad-json-source", "acme")
    assert ops.forget("acme", "bad-json-source") == ["bad-json-source"]  # a person can remove one
    # a writer filing next to them, and forgetting by words, are unaffected
    assert (
        MemoryOps(store.db, plugin.settings).add("The VPN gateway is vpn-fra-2.", "acme", "ana")["status"] == "active"
    )
    assert ops.forget("acme", None, "ana", "VPN gateway vpn-fra-2")


def test_the_cli_and_the_dashboard_read_past_malformed_rows(plugin: MetaClawPlugin, home: Path) -> None:
    _insert(home / "metaclaw.db", *_bad_rows("ana"), _good("good-ana", "ana", "Our release branch is trunk-stable."))
    r = run_cli(home, "list", "--tenant", "acme")
    assert r.returncode == 0 and "trunk-stable" in r.stdout and "11 malformed" in r.stdout, r.stderr
    r = run_cli(home, "list", "--tenant", "acme", "--status", "malformed", "--json")
    assert r.returncode == 0 and len(json.loads(r.stdout)) == 11
    r = run_cli(home, "forget", "bad-blob", "--tenant", "acme", "--json")
    assert r.returncode == 0 and json.loads(r.stdout) == {"forgotten": ["bad-blob"]}, r.stderr
    r = run_cli(home, "export", "--tenant", "acme")
    assert r.returncode == 0 and "good-ana" in r.stdout
    token = load_or_create_token(home)
    with TestClient(create_app(plugin, token)) as tc:
        auth = {"Authorization": f"Bearer {token}"}
        for url in ("/memory?tenant=acme&user=ana", "/memory?tenant=acme&status=all", "/v1/memory?tenant=acme"):
            assert tc.get(url, headers=auth).status_code == 200, url
        assert tc.get("/memory/bad-json-source?tenant=acme", headers=auth).status_code == 404


def test_rows_with_nulls_are_skipped(home: Path) -> None:
    """A database whose table was made without the NOT NULL constraints (by hand, or another tool)."""
    p = MetaClawPlugin(Settings(home=home)).start()
    p.stop()
    con = sqlite3.connect(home / "metaclaw.db")
    with con:
        con.execute("DROP TABLE memories")
        con.execute(f"CREATE TABLE memories ({_COLS})")
    con.close()
    nulls = [
        (
            "null-text",
            "acme",
            "ana",
            "fact",
            "s",
            None,
            "active",
            0,
            0,
            1.7e9,
            None,
            None,
            None,
            None,
            None,
            1.7e9,
            1.7e9,
            1,
        ),
        (
            "null-time",
            "acme",
            "ana",
            "fact",
            "s",
            "t",
            "active",
            0,
            0,
            None,
            None,
            None,
            None,
            None,
            None,
            1.7e9,
            1.7e9,
            1,
        ),
        (
            "null-user",
            "acme",
            None,
            "fact",
            "s",
            "t",
            "active",
            0,
            0,
            1.7e9,
            None,
            None,
            None,
            None,
            None,
            1.7e9,
            1.7e9,
            1,
        ),
        (None, "acme", "ana", "fact", "s", "t", "active", 0, 0, 1.7e9, None, None, None, None, None, 1.7e9, 1.7e9, 1),
        (
            "null-all",
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
        ),
    ]
    _insert(home / "metaclaw.db", *nulls, _good("good-ana", "ana", "Our release branch is trunk-stable."))
    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        p.refresh_memory()
        assert p.memory is not None and p.memory.refresh_error is None, p.memory and p.memory.refresh_error
        assert "trunk-stable" in memory_part(say(p, "s1", "Which release branch do I merge into?"))
        store = p.memory_store
        assert store is not None
        assert [m.id for m in store.find(statuses=None)] == ["good-ana"]
        ops = MemoryOps(store.db, p.settings)
        assert ops.forget("acme", "null-text") == ["null-text"]
        assert len(ops.export("acme")["skipped"]) >= 3
    finally:
        p.stop()
