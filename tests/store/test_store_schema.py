"""The storage owner: one schema registry, ``user_version`` migrations under a lock, and a home
written by the release before schema versions that opens, migrates and keeps everything."""

from __future__ import annotations

import multiprocessing
import sqlite3
import tarfile
from pathlib import Path

import pytest

from metaclaw_plugin import MetaClawPlugin, Settings, TurnContext
from metaclaw_plugin.store import SCHEMA_VERSION, SchemaTooNew, connect, migrate, schema_version
from metaclaw_plugin.store import schema as schema_mod
from metaclaw_plugin.store import sqlite as sqlite_mod

V0_HOME = Path(__file__).parents[1] / "data" / "homes" / "v0-home.tar.gz"


def tables(db: Path) -> dict[str, int]:
    conn = sqlite3.connect(db)
    try:
        names = [
            r[0]
            for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        ]
        return {n: conn.execute(f"SELECT COUNT(*) FROM {n}").fetchone()[0] for n in names}
    finally:
        conn.close()


def indexes(db: Path) -> set[str]:
    conn = sqlite3.connect(db)
    try:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    finally:
        conn.close()


def registered_tables() -> set[str]:
    out = set()
    for m in schema_mod.MIGRATIONS:
        for stmt in m.statements:
            words = stmt.split()
            if words[:2] == ["CREATE", "TABLE"]:
                out.add(words[5] if words[2:5] == ["IF", "NOT", "EXISTS"] else words[2])
    return out


def test_a_new_database_gets_every_registered_table_at_the_current_version(tmp_path: Path):
    db = tmp_path / "new.db"
    connect(db).close()
    assert schema_version(db) == SCHEMA_VERSION
    assert set(tables(db)) == registered_tables()
    assert oct(db.stat().st_mode & 0o777) == "0o600"
    assert migrate(db) == []  # up to date: nothing applied


def unpack_v0(tmp_path: Path) -> Path:
    with tarfile.open(V0_HOME) as tar:
        tar.extractall(tmp_path, filter="data")
    return tmp_path / "home"


def test_a_home_from_the_release_before_versions_opens_migrates_and_keeps_its_data(tmp_path: Path):
    home = unpack_v0(tmp_path)
    db = home / "metaclaw.db"
    before = tables(db)
    assert schema_version(db) == 0 and before["turns"] == 9 and before["buffer_samples"] == 3
    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        assert schema_version(db) == SCHEMA_VERSION
        after = tables(db)
        assert {k: after[k] for k in before} == before  # nothing lost
        assert {"fl_shadow_by_skill", "rewards_by_time"} <= indexes(db)  # migration 2 ran
        sessions = p.store.list_sessions(tenant="team-a")
        assert {s["session_id"] for s in sessions} >= {"fail-0", "fail-1", "ok-0"}
        fail0 = p.store.get_session("fail-0", tenant="team-a")
        assert (
            fail0 is not None
            and len(fail0.turns) == 2
            and fail0.outcome == {"success": False, "feedback": "wrong delimiter"}
        )
        assert {r["source"] for r in p.store.rewards(fail0.turns[0].turn_id)} >= {"correction"}
        # the library of that release loads, and new turns go on being recorded on top
        assert p.skills.skills["detect-csv-delimiter"].status == "active"
        assert p.skills.skills["iso-timestamps-in-reports"].tenant == "team-b"
        ctx = TurnContext("after-upgrade", tenant="team-a")
        p.on_request(ctx, [{"role": "user", "content": "split the csv export by its delimiter"}])
        assert "detect-csv-delimiter" in ctx.injected_skills
        p.on_response(ctx, {"role": "assistant", "content": "ok"})
        p.flush()
        assert tables(db)["turns"] == 10
    finally:
        p.stop()


def test_status_reads_an_upgraded_home_and_labels_its_trial(tmp_path: Path):
    import json

    from click.testing import CliRunner

    from metaclaw_plugin.cli import main as cli_main

    home = unpack_v0(tmp_path)
    res = CliRunner().invoke(cli_main, ["status", "--json"], env={"METACLAW_HOME": str(home)})
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["store"]["sessions"] == 6 and data["store"]["turns"] == 9
    assert data["skills"]["trial"] == 1 and data["skills"]["quarantined"] == 0  # the shadow skill of that release
    assert schema_version(home / "metaclaw.db") == SCHEMA_VERSION


def _migrate_in_child(db: str) -> list[int]:
    return migrate(db)


def test_two_processes_migrating_at_once_apply_each_migration_once(tmp_path: Path):
    home = unpack_v0(tmp_path)
    db = str(home / "metaclaw.db")
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        results = pool.map(_migrate_in_child, [db, db])
    applied = sorted(v for r in results for v in r)
    assert applied == [m.version for m in schema_mod.MIGRATIONS]  # every migration exactly once, in one of them
    assert schema_version(db) == SCHEMA_VERSION


def test_a_database_from_a_newer_release_is_refused_with_a_clear_error(tmp_path: Path):
    db = tmp_path / "future.db"
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    conn.close()
    with pytest.raises(SchemaTooNew, match=r"schema version \d+; this release knows up to"):
        connect(db)


def test_a_failing_migration_rolls_back_and_leaves_the_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    db = tmp_path / "m.db"
    connect(db).close()
    broken = schema_mod.Migration(
        SCHEMA_VERSION + 1, "broken", ("CREATE TABLE half_done (x INTEGER)", "THIS IS NOT SQL")
    )
    monkeypatch.setattr(sqlite_mod, "MIGRATIONS", (*schema_mod.MIGRATIONS, broken))
    monkeypatch.setattr(sqlite_mod, "CURRENT", SCHEMA_VERSION + 1)
    with pytest.raises(sqlite3.OperationalError):
        migrate(db)
    assert schema_version(db) == SCHEMA_VERSION and "half_done" not in tables(db)
