"""The job queues of store/jobs.py on SQLite and PostgreSQL: enqueue, due order, claim and its lease, defer,
finish, fail with backoff until the job gives up, and the backoff formula itself. Every time is passed in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from postgres_support import pg_server, pg_url  # noqa: F401  (fixtures)

from metaclaw_plugin.store import Database
from metaclaw_plugin.store.jobs import EVOLVE, JUDGE, MAX_BACKOFF, backoff, evolution_done
from metaclaw_plugin.store.postgres import PostgresDatabase

T0 = 1_000_000.0


@pytest.fixture(params=["sqlite", "postgres"])
def db(request: pytest.FixtureRequest, tmp_path: Path):
    d = (
        Database(tmp_path / "m.db")
        if request.param == "sqlite"
        else PostgresDatabase(request.getfixturevalue("pg_url"))
    )
    yield d
    d.close()


def judge_job(db, turn_id: str, at: float = T0, now: float = T0) -> None:
    JUDGE.enqueue(db, {"turn_id": turn_id, "tenant": "t", "session_id": "s"}, at=at, now=now)


def row(db, turn_id: str):
    return db.query("SELECT * FROM fl_judge_queue WHERE turn_id = ?", [turn_id])[0]


def test_backoff_doubles_from_the_first_with_jitter_and_a_cap():
    assert [backoff(5.0, n, rand=lambda: 0.5) for n in (1, 2, 3)] == [5.0, 10.0, 20.0]
    assert backoff(5.0, 1, rand=lambda: 0.0) == 2.5  # jitter: half ...
    assert backoff(5.0, 1, rand=lambda: 0.999) == pytest.approx(7.495)  # ... to one and a half
    assert backoff(5.0, 30, rand=lambda: 0.5) == MAX_BACKOFF
    assert backoff(5.0, 10_000) == MAX_BACKOFF  # no overflow however long it keeps failing
    assert backoff(2.0, 3, cap=5.0, rand=lambda: 0.5) == 5.0


def test_enqueue_keeps_the_first_job_of_a_key_and_due_takes_them_in_order(db):
    judge_job(db, "b", at=T0 + 2)
    judge_job(db, "a", at=T0 + 1, now=T0 + 0.5)  # queued later, due sooner: taken first
    judge_job(db, "a", at=T0 + 99)  # already queued: left as it is
    judge_job(db, "later", at=T0 + 50)
    assert row(db, "a")["next_at"] == T0 + 1 and row(db, "a")["state"] == "pending"
    assert [r["turn_id"] for r in JUDGE.due(db, T0 + 10)] == ["a", "b"]
    assert [r["turn_id"] for r in JUDGE.due(db, T0 + 10, limit=1)] == ["a"]
    assert [r["turn_id"] for r in JUDGE.due(db, float("inf"))] == ["a", "b", "later"]
    assert JUDGE.pending_of(db, ["a", "later", "unknown"]) == {"a", "later"}
    assert JUDGE.pending_of(db, []) == set()


def test_a_claim_is_taken_once_and_its_lease_makes_the_job_due_again(db):
    judge_job(db, "a")
    seen = JUDGE.due(db, T0)
    assert [r["turn_id"] for r in JUDGE.claim(db, seen, lease=300, now=T0)] == ["a"]
    assert JUDGE.claim(db, seen, lease=300, now=T0) == []  # another host read the same row: it lost the race
    assert JUDGE.due(db, T0 + 299) == []  # leased
    again = JUDGE.due(db, T0 + 300)  # the host died: due again once the lease ends
    assert [r["turn_id"] for r in JUDGE.claim(db, again, lease=300, now=T0 + 300)] == ["a"]


def test_defer_and_finish(db):
    judge_job(db, "a")
    JUDGE.defer(db, ["a"], T0 + 86400, "budget")
    assert (row(db, "a")["next_at"], row(db, "a")["last_error"], row(db, "a")["attempts"]) == (T0 + 86400, "budget", 0)
    JUDGE.defer(db, ["a"], T0 + 5)  # no error given: the last one stays
    assert (row(db, "a")["next_at"], row(db, "a")["last_error"]) == (T0 + 5, "budget")
    JUDGE.finish(db, ["a"], "done")
    assert (row(db, "a")["state"], row(db, "a")["last_error"]) == ("done", None)
    assert JUDGE.due(db, float("inf")) == [] and JUDGE.pending_of(db, ["a"]) == set()
    assert JUDGE.counts(db.query) == {"done": 1}


def test_fail_backs_off_then_gives_up_at_max_attempts(db):
    judge_job(db, "a")
    for attempts in (1, 2):
        now = T0 + 100 * attempts
        assert not JUDGE.fail(db, ["a"], attempts, f"boom {attempts}", first=5.0, max_attempts=3, now=now)
        r = row(db, "a")
        assert (r["state"], r["attempts"], r["last_error"]) == ("pending", attempts, f"boom {attempts}")
        wait = 5.0 * 2 ** (attempts - 1)
        assert now + 0.5 * wait <= r["next_at"] < now + 1.5 * wait
    assert JUDGE.fail(db, ["a"], 3, "boom 3", first=5.0, max_attempts=3, now=T0 + 300)
    r = row(db, "a")
    assert (r["state"], r["attempts"], r["last_error"]) == ("failed", 3, "boom 3")
    assert JUDGE.due(db, float("inf")) == []


def test_the_evolution_queue_numbers_its_jobs_and_fails_or_finishes_them_together(db):
    for turns in (["t1"], ["t2", "t3"], ["t4"]):
        EVOLVE.enqueue(db, {"tenant": "x", "reason": "review", "turn_ids": json.dumps(turns)}, at=T0, now=T0)
    jobs = EVOLVE.due(db, T0)
    assert [json.loads(j["turn_ids"]) for j in jobs] == [["t1"], ["t2", "t3"], ["t4"]]
    ids = [j["id"] for j in jobs]
    EVOLVE.fail(db, ids[:2], 1, "down", first=30.0, max_attempts=5, now=T0)
    assert [j["id"] for j in EVOLVE.due(db, T0)] == ids[2:]
    evolution_done(db, ids[2:], '{"written": []}', T0 + 1)
    done = db.query("SELECT * FROM fl_evolve_queue WHERE id = ?", [ids[2]])[0]
    assert (done["state"], done["report"], done["done_at"]) == ("done", '{"written": []}', T0 + 1)
    assert EVOLVE.counts(db.query) == {"pending": 2, "done": 1}
    assert EVOLVE.fail(db, ids[:2], 5, "still down", first=30.0, max_attempts=5, now=T0 + 60)
    assert EVOLVE.counts(db.query) == {"failed": 2, "done": 1}


def test_a_job_queued_in_a_transaction_comes_and_goes_with_it(db):
    with db.transaction() as c:
        JUDGE.enqueue(c, {"turn_id": "kept", "tenant": "t", "session_id": "s"}, at=T0, now=T0)
    with pytest.raises(RuntimeError), db.transaction() as c:
        JUDGE.enqueue(c, {"turn_id": "lost", "tenant": "t", "session_id": "s"}, at=T0, now=T0)
        raise RuntimeError("rolled back")
    assert [r["turn_id"] for r in JUDGE.due(db, T0)] == ["kept"]
