"""The dashboard on the postgres backend, over HTTP with the app's own sign-in, against a real PostgreSQL server:
every page shows what hosts put in the database (sessions recorded through another home's plugin, their rewards,
a skill of the shared library with its uses and trial evidence, training steps, scheduler transitions), the same
figures as the same store on SQLite, and approving a skill on trial changes it in the shared library, where
another host reads it.

The dashboard host's library listener is stopped: the pages and actions must move the library between this host
and PostgreSQL themselves, not wait up to a second for the listener."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from postgres_support import pg_server, pg_url  # noqa: F401  (fixtures)
from starlette.testclient import TestClient
from test_dashboard import seed_slow_loop_rows

from metaclaw_plugin import MetaClawPlugin, Settings, TurnContext
from metaclaw_plugin.dashboard import data
from metaclaw_plugin.sidecar import create_app, load_or_create_token
from metaclaw_plugin.store import open_database
from metaclaw_plugin.store.backend import postgres_of
from metaclaw_plugin.types import Skill

TRIAL = "pg-trial-notes"


def record(p: MetaClawPlugin) -> None:
    """Two sessions through the plugin's hooks, the rewards a judge and a person gave, and a skill on shadow trial
    with the arms its turns were in (the rows the learning side writes, by plain SQL on the plugin's backend)."""
    turns = []
    for sid, injected in (("pg-s1", ["csv-quoting"]), ("pg-s1", ["csv-quoting"]), ("pg-s2", [])):
        ctx = TurnContext(sid, host="writer-host")
        msgs = [{"role": "user", "content": f"turn {len(turns)} of {sid}"}]
        prepared = p.prepare_turn(ctx, msgs, inject=False, injected_skills=injected)
        p.complete_turn(prepared, {"role": "assistant", "content": f"answer {len(turns)}"})
        turns.append(ctx.request_id)
    p.on_session_end(TurnContext("pg-s1", host="writer-host"), {"success": True})
    p.skills.store.add_batch(
        [
            Skill(
                name=TRIAL,
                description="When asked to keep notes, write them under notes/ with the date first",
                body="# Notes\n\nWrite notes under notes/ as YYYY-MM-DD_<topic>.md.",
                origin="evolved",
                status="quarantined",
                extra_metadata={"promotion": "shadow"},
            )
        ],
        actor="test",
        reason="on shadow trial",
    )
    generation = p.skills.store.read(TRIAL).generation
    assert p.flush(30)
    db = open_database(p.settings)
    try:
        with db.transaction() as tx:
            for turn_id, source, score in (
                (turns[0], "judge", 1.0),
                (turns[1], "judge", -1.0),
                (turns[1], "feedback", 0.0),
                (turns[2], "judge", 0.5),
            ):
                tx.execute(
                    "INSERT INTO rewards (turn_id, source, score, detail, created_at) VALUES (?, ?, ?, NULL, 1.0)",
                    (turn_id, source, score),
                )
            for turn_id, arm, score in ((turns[0], "with", 1.0), (turns[1], "with", -1.0), (turns[2], "without", 0.5)):
                tx.execute(
                    "INSERT INTO fl_shadow (turn_id, skill, skill_generation, arm, score, created_at) "
                    "VALUES (?, ?, ?, ?, ?, 1.0)",
                    (turn_id, TRIAL, generation, arm, score),
                )
    finally:
        db.close()
    seed_slow_loop_rows(open_database(p.settings), steps=3, transitions=4)


def on_postgres(home: Path, url: str) -> MetaClawPlugin:
    return MetaClawPlugin(Settings(home=home, storage={"backend": "postgres", "url": url})).start()


@pytest.fixture()
def hosts(pg_url: str, tmp_path: Path) -> Iterator[tuple[MetaClawPlugin, TestClient]]:  # noqa: F811
    """A writer host that records and publishes, and a dashboard host on another home, one database."""
    writer = on_postgres(tmp_path / "writer", pg_url)
    writer.sync_library()  # the bundled skills are in the shared library: the dashboard host pulls, not seeds
    dash = on_postgres(tmp_path / "dash", pg_url)
    assert dash.library is not None
    dash.library.stop()
    token = load_or_create_token(dash.settings.home_dir)
    try:
        with TestClient(create_app(dash, token), base_url="http://127.0.0.1", follow_redirects=False) as c:
            assert c.get(f"/?token={token}").status_code == 303  # signed in by cookie from here on
            yield writer, c
    finally:
        dash.stop()
        writer.stop()


def cells(page: str, skill: str) -> list[str]:
    """The cells of a skill's row on the skills page."""
    assert f'<tr data-skill="{skill}">' in page, f"{skill} is not listed"
    row = page.split(f'<tr data-skill="{skill}">', 1)[1].split("</tr>", 1)[0]
    return re.findall(r"<td[^>]*>(.*?)</td>", row)


def rows_of(page: str, table: str) -> int:
    return page.split(f"<table id={table}>", 1)[1].split("</tbody>", 1)[0].count("<tr>") - 1  # less the header


def test_every_page_shows_what_the_hosts_put_in_postgresql(hosts: tuple[MetaClawPlugin, TestClient]):
    writer, c = hosts
    record(writer)
    writer.sync_library()  # the trial skill is in PostgreSQL; the dashboard host has not pulled it

    skills = c.get("/").text
    _, status, _, _, _, _, uses, with_, without, _, _ = cells(skills, "csv-quoting")
    assert (status, uses, with_, without) == ("active", "2", "+0.25", "+0.50")  # (1 - 0.5)/2 with, 0.5 without
    _, status, origin, _, _, _, uses, _, _, trial, actions = cells(skills, TRIAL)
    assert (status, origin, uses) == ("trial", "evolved", "0") and "/approve" in actions
    assert trial == "with 1/2 ok, without 1/1 ok, P(better) 0.30"  # P(Beta(2,2) > Beta(2,1)) = 0.3

    sessions = c.get("/sessions").text
    assert "2 sessions" in sessions and rows_of(sessions, "sessions") == 2
    s1 = sessions.split(">pg-s1</a>", 1)[1].split("</tr>", 1)[0]
    assert "writer-host" in s1 and "+0.25 (2 scored)" in s1 and "ended, success" in s1 and "csv-quoting" in s1

    one = c.get("/sessions/pg-s1?tenant=default").text
    assert "rewards: judge +1" in one and "rewards: judge -1, feedback +0" in one and "answer 1" in one

    training = c.get("/training").text
    assert "3 steps" in training and rows_of(training, "steps") == 3
    assert rows_of(training, "daily") >= 1 and 'data-chart="chart-daily"' in training  # success per day
    scheduler = c.get("/scheduler").text
    assert "4 transitions" in scheduler and rows_of(scheduler, "transitions") == 4


def test_approving_a_skill_on_trial_changes_it_in_the_shared_library(hosts: tuple[MetaClawPlugin, TestClient]):
    writer, c = hosts
    record(writer)
    writer.sync_library()
    page = c.get("/").text
    csrf = page.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    r = c.post(f"/skills/{TRIAL}/approve", data={"csrf": csrf})
    assert r.status_code == 303
    writer.sync_library()  # another host reads the library from PostgreSQL, before any page is loaded again
    assert writer.skills.store.read(TRIAL).status == "active"
    assert f"{TRIAL}: now active (version 1)" in c.get(r.headers["location"]).text
    r = c.post(f"/skills/{TRIAL}/retire", data={"csrf": csrf})
    writer.sync_library()
    assert writer.skills.store.read(TRIAL).status == "retired"
    assert "now retired" in c.get(r.headers["location"]).text


def test_the_same_store_reads_the_same_on_either_backend(pg_url: str, tmp_path: Path):  # noqa: F811
    """The dashboard's figures from one store recorded through the plugin, on SQLite and on PostgreSQL."""
    times = {"started_at", "last_at", "ended_at", "created_at", "at"}

    def read(source: data.Source, p: MetaClawPlugin) -> dict[str, Any]:
        total, sessions = data.sessions(source)
        turns = [t.turn_id for s in sessions for t in getattr(p.read_session(s["session_id"]), "turns", [])]
        return {
            "skills": data.skills(p.settings.skills_path, source),
            "sessions": (total, [{k: v for k, v in s.items() if k not in times} for s in sessions]),
            "rewards": list(data.session_rewards(source, turns).values()),
            "steps": [{k: v for k, v in r.items() if k not in times} for r in data.train_steps(source)],
            "transitions": [{k: v for k, v in r.items() if k not in times} for r in data.transitions(source)],
            "daily": data.daily_success(source),
        }

    got = {}
    for backend, storage in (("sqlite", {}), ("postgres", {"backend": "postgres", "url": pg_url})):
        p = MetaClawPlugin(Settings(home=tmp_path / backend, storage=storage)).start()
        try:
            record(p)
            pg = postgres_of(p.settings)
            got[backend] = read(pg if pg is not None else p.settings.db_file, p)
            if pg is not None:
                pg.close()
        finally:
            p.stop()
    sqlite, postgres = got["sqlite"], got["postgres"]
    assert sqlite["sessions"][0] == 2 and len(sqlite["steps"]) == 3 and len(sqlite["transitions"]) == 4
    assert [r for r in sqlite["skills"] if r.uses] and [r for r in sqlite["skills"] if r.trial]
    assert sum(d["judged"] for d in sqlite["daily"]) >= 2 and sum(d["steps"] for d in sqlite["daily"]) == 3
    for key in sqlite:
        assert postgres[key] == sqlite[key], key


def test_the_memory_page_reads_and_forgets_in_postgresql(hosts: tuple[MetaClawPlugin, TestClient]):
    from metaclaw_plugin.learning.memory.ops import MemoryOps

    writer, c = hosts
    assert writer.memory_store is not None
    ops = MemoryOps(writer.memory_store.db, writer.settings)
    mid = ops.add("remember that the metrics database moved to pg-metrics-3", "default", "pg-alice")["id"]
    other = ops.add("remember that the metrics database is pg-other-7", "acme", "pg-alice")["id"]
    page = c.get("/memory", params={"tenant": "default", "user": "pg-alice"}).text
    assert f'data-memory="{mid}"' in page and other not in page and 'data-tenant="acme"' in page
    found = c.get("/memory", params={"q": "metrics database", "user": "pg-alice"}).text
    assert f'data-memory="{mid}"' in found and "pg-other-7" not in found
    detail = c.get(f"/memory/{mid}", params={"tenant": "default"}).text
    assert ">added<" in detail
    csrf = detail.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    r = c.post(f"/memory/{mid}/forget", data={"csrf": csrf, "tenant": "default"})
    assert r.status_code == 303
    gone = writer.memory_store.get(mid)  # the other host reads it from PostgreSQL
    assert gone is not None and gone.status == "forgotten" and gone.text == ""
