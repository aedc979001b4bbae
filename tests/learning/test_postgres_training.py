"""Training on PostgreSQL: two hosts (plugins with homes of their own) share one database in mode ``rl``, and
only the elected learner trains (real scheduler, real trainer with the local backend on the tiny model). The
samples it trains are acknowledged in PostgreSQL; when it stops, the other host is elected, resumes from the last
checkpoint (``training.out_dir`` on storage both hosts read) and trains the next batch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from postgres_support import pg_server, pg_url  # noqa: F401  (fixtures)
from training_support import FAST_SCHEDULER, a_and_b
from waiting import wait_for

from metaclaw_plugin import MetaClawPlugin, Settings
from metaclaw_plugin.scheduling.omls import NOT_LEADER, Omls
from metaclaw_plugin.store.postgres import PostgresDatabase
from metaclaw_plugin.store.trajectories import TrajectoryStore
from metaclaw_plugin.training import SampleBuffer
from metaclaw_plugin.types import Sample, Turn, new_id

pytest.importorskip("peft")


def capture(url: str, spool: Path, batches: int) -> list[str]:
    """Captured turns in PostgreSQL (through the real store) and a fresh query sample for each."""
    db = PostgresDatabase(url)
    store = TrajectoryStore(spool / "spool.db", database=db)
    store.open()
    ids = []
    for messages, answer, _ in a_and_b(batches):
        turn = Turn(
            turn_id=new_id(),
            session_id="s-" + new_id()[:8],
            tenant="default",
            kind="main",
            messages=messages,
            response={"role": "assistant", "content": answer},
        )
        store.append_turn(turn)
        ids.append(turn.turn_id)
    store.flush()
    store.close()  # closes db too
    buffer = SampleBuffer(PostgresDatabase(url))
    for turn_id, (_, _, reward) in zip(ids, a_and_b(batches)):
        assert buffer.add(Sample(turn_id, "s", "default", 0, reward))
    buffer.close()
    return ids


def host(tmp_path: Path, name: str, url: str, base: Path) -> MetaClawPlugin:
    settings = Settings(
        home=tmp_path / name,
        mode="rl",
        storage={"backend": "postgres", "url": url},
        training={
            "base_model": str(base),
            "device": "cpu",
            "batch_size": 4,
            "micro_batch_size": 2,
            "checkpoint_every": 1,
            "off_policy": "reinforce",  # captured answers the served policy did not write
            "out_dir": str(tmp_path / "shared-training"),  # where every host finds the last full state
        },
        scheduler=FAST_SCHEDULER,
    )
    assert settings.training.off_reason() is None
    return MetaClawPlugin(settings).start()


@pytest.mark.slow
def test_only_the_elected_host_trains_and_the_other_takes_over(
    tmp_path: Path,
    pg_url: str,  # noqa: F811  (the fixture)
    policy_base: Path,
) -> None:
    db = PostgresDatabase(pg_url)
    first = capture(pg_url, tmp_path, 1)
    a = host(tmp_path, "a", pg_url, policy_base)  # started first: its election takes the lock
    b = host(tmp_path, "b", pg_url, policy_base)
    try:
        oa, ob = a.scheduler, b.scheduler
        assert isinstance(oa, Omls) and isinstance(ob, Omls)
        assert oa.is_leader() and not ob.is_leader()

        def trained(ids: list[str], steps: int) -> bool:
            q = "SELECT COUNT(*) AS n FROM buffer_samples WHERE state = 'trained' AND turn_id = ANY(?)"
            done = db.query(q, [ids])[0]["n"] == len(ids)
            return done and db.query("SELECT COUNT(*) AS n FROM train_steps")[0]["n"] == steps

        wait_for(lambda: trained(first, 1), 40, "the leader to train the first batch")
        steps = db.query("SELECT step, weights FROM train_steps ORDER BY step")
        assert [r["step"] for r in steps] == [1], steps
        assert oa.runs >= 1 and ob.runs == 0, (oa.status(), ob.status())
        wait_for(lambda: ob.decision is not None, 15, "the other host's first tick")  # A may train before B ticks
        assert ob.decision is not None and ob.decision.reason == NOT_LEADER, ob.status()
        assert ob.status()["leader"] is False
        # the scheduler's transitions are in the shared database too
        assert db.query("SELECT COUNT(*) AS n FROM sched_transitions")[0]["n"] >= 2

        a.stop()  # the leader's session ends: the lock is released
        wait_for(ob.is_leader, 15, "the other host to be elected")
        second = capture(pg_url, tmp_path, 1)
        wait_for(lambda: trained(second, 2), 40, "the new leader to train the next batch")
        assert ob.runs >= 1
        steps = db.query("SELECT step, weights FROM train_steps ORDER BY step")
        assert [r["step"] for r in steps] == [1, 2], (
            steps,
            ob.status(),
        )  # it resumed from the first leader's checkpoint
    finally:
        a.stop()
        b.stop()
        db.close()


@pytest.mark.slow
def test_a_failed_batch_feeds_the_evolver_of_the_elected_learner_only(
    tmp_path: Path,
    pg_url: str,  # noqa: F811  (the fixture)
    policy_base: Path,
) -> None:
    """Failed sessions captured on the follower become query samples (too few failures to evolve on their own);
    the elected learner trains them, and its learning loop, alone, hands the batch's failed turns to the
    evolver, once."""
    pytest.importorskip("litellm")
    from fastloop_support import Roles, failing_session
    from fastloop_support import wait_for as flushed_wait_for
    from test_failed_batch_evolution import rl_settings

    from metaclaw_plugin.devtools.upstream import Upstream

    roles = Roles()
    with Upstream(script=roles) as up:
        pg = {"backend": "postgres", "url": pg_url}
        a = MetaClawPlugin(rl_settings(tmp_path / "a", up, policy_base, storage=pg)).start()  # started first: elected
        b = MetaClawPlugin(rl_settings(tmp_path / "b", up, policy_base, storage=pg)).start()
        try:
            assert isinstance(a.scheduler, Omls) and a.scheduler.is_leader() and not b.scheduler.is_leader()
            ids = failing_session(b, "pg-1") + failing_session(b, "pg-2")
            flushed_wait_for(b, lambda: "detect-csv-delimiter" in a.skills.skills)
            db = a.learning.db
            jobs = [(r["reason"], set(json.loads(r["turn_ids"]))) for r in db.query("SELECT * FROM fl_evolve_queue")]
            assert jobs == [("train_batch", set(ids))]
            assert a.scheduler.runs >= 1 and b.scheduler.runs == 0
            assert len(a.learning.reports) == 1 and b.learning.reports == [] and roles.evolver_calls == 1
        finally:
            b.stop()
            a.stop()
