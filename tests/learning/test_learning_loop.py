"""The learning loop is built from explicit parts and fails open: a fault in any job is logged and
counted, retried on the next tick, and never reaches the host."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from metaclaw_plugin import MetaClawPlugin, SessionEnd, Settings, TurnContext, TurnRecorded
from metaclaw_plugin.devtools.upstream import Upstream
from metaclaw_plugin.learning import LearningLoop

pytest.importorskip("litellm")


@pytest.mark.parametrize("job", ["judge", "reviews", "evolve", "shadow", "sweep", "evidence"])
def test_a_failing_job_is_counted_logged_and_never_reaches_the_host(
    home: Path, job: str, caplog: pytest.LogCaptureFixture
):
    with Upstream(replies=["Score: 1"] * 20) as up:
        s = Settings(home=home, evolution={"model": "openai/evolver", "api_base": up.url, "api_key": "x"})
        p = MetaClawPlugin(s).start()
        try:
            loop = p.learning
            assert isinstance(loop, LearningLoop)
            jobs = dict(loop.jobs)

            def boom(force: bool = False) -> None:
                raise RuntimeError(f"{job} exploded")

            loop.jobs = tuple((name, boom if name == job else fn) for name, fn in jobs.items())
            with caplog.at_level(logging.ERROR, logger="metaclaw_plugin.learning"):
                loop.tick(force=True)
                loop.tick(force=True)
            assert loop.errors[job] == 2 and sum(loop.errors.values()) == 2
            assert f"learning job {job} failed" in caplog.text
            assert p.status()["learning"]["errors"] == {job: 2}
            # the host's calls go on as if nothing happened
            ctx = TurnContext("host-1")
            out = p.on_request(ctx, [{"role": "user", "content": "write the csv export with quoted fields"}])
            assert out[-1]["content"] == "write the csv export with quoted fields"
            assert p.on_response(ctx, {"role": "assistant", "content": "ok"}) is not None
            p.on_session_end(ctx, {"success": True})
            p.flush()
            assert not p.errors
        finally:
            p.stop()


def test_the_loop_subscribes_to_the_plugins_events_once_across_restarts(home: Path):
    with Upstream(replies=["Score: 1"] * 20) as up:
        s = Settings(home=home, evolution={"model": "openai/evolver", "api_base": up.url, "api_key": "x"})
        p = MetaClawPlugin(s).start()
        p.stop()
        p.start()
        try:
            for kind in (TurnRecorded, SessionEnd):
                owners = [f.__self__ for f in p.events._subs[kind]]  # the learning loop's, and memory's (issue 25)
                assert owners.count(p.learning.intake) == 1 and owners.count(p.memory_learner) == 1
                assert len(owners) == 2
        finally:
            p.stop()


def test_a_turn_already_judged_is_not_judged_again_and_its_count_matches(home: Path):
    """A host that dies after writing the judge's reward but before marking the job done leaves the job due again:
    the next host finds the reward and settles the job without a second judge call or a second count."""
    with Upstream(replies=["The answer is fine.\nScore: 1"] * 6) as up:
        judge = {"model": "openai/judge", "api_base": up.url, "api_key": "x", "review_wait": 0.0, "votes": 1}
        p = MetaClawPlugin(Settings(home=home, reward=judge)).start()
        try:
            loop = p.learning
            assert isinstance(loop, LearningLoop)
            ctx = TurnContext("judged-once")
            p.on_request(ctx, [{"role": "user", "content": "export the report as csv"}])
            p.on_response(ctx, {"role": "assistant", "content": "done: report.csv"})
            p.on_session_end(ctx)  # no outcome: the judge scores the last turn
            p.flush()
            loop.tick(force=True)
            calls = len(up.requests)
            assert calls >= 1, "the judge was never asked"

            def counted() -> tuple[int, int]:
                n = loop.db.query("SELECT value FROM fl_counters WHERE key = 'judge_turns'")
                r = loop.db.query("SELECT COUNT(*) FROM fl_rewards WHERE source = 'judge'")[0][0]
                return (n[0][0] if n else 0), r

            assert counted() == (1, 1)
            loop.db.execute("UPDATE fl_judge_queue SET state = 'pending', next_at = 0 WHERE turn_id = ?",
                            [ctx.request_id])  # fmt: skip
            loop.tick(force=True)
            assert len(up.requests) == calls, "the turn was judged a second time"
            assert counted() == (1, 1)
            state = loop.db.query("SELECT state FROM fl_judge_queue WHERE turn_id = ?", [ctx.request_id])
            assert state[0][0] == "done"
        finally:
            p.stop()


def test_a_review_waiting_for_judge_votes_is_not_read_again_on_every_tick(home: Path, monkeypatch) -> None:
    """With the host's daily budget spent, every session's judge votes wait for tomorrow and each session's review
    waits for them (``reward.review_wait``). Before, each of the loop's ticks (one per recorded turn) read every such
    session again: CPU on the learning thread that grew with the traffic. Now a waiting review looks again after
    a while (or when a new turn of it comes)."""
    from metaclaw_plugin.hostmodel import HostModel, HostReply
    from metaclaw_plugin.learning import review
    from metaclaw_plugin.store import ledger

    read: list[str] = []
    unreviewed = ledger.unreviewed_main
    monkeypatch.setattr(review.ledger, "unreviewed_main", lambda db, t, s: read.append(s) or unreviewed(db, t, s))
    p = MetaClawPlugin(Settings(home=home, learning={"model": "host", "daily_calls": 1})).start()
    try:
        assert p.host_models.offer(HostModel("m", "test", lambda *a: HostReply('{"score": 1}'), local=True))
        for i in range(6):
            ctx = TurnContext(f"s{i}", tenant="acme", user="ana")
            p.on_request(ctx, [{"role": "user", "content": f"Rename the column in report {i} to total_cost."}])
            p.on_response(ctx, {"role": "assistant", "content": "Renamed."})
            p.on_session_end(TurnContext(f"s{i}", tenant="acme"))
        assert p.flush(30)
        loop = p.learning
        assert loop is not None
        with loop.held():
            for _ in range(6):
                loop.tick(only=["judge", "reviews"])
            sessions = set(read)
            ids = [r["turn_id"] for sid in sessions for r in unreviewed(loop.db, "acme", sid)]
            assert len(sessions) == 6 and len(ids) == 6  # every session's review looked at its turn, and waits
            assert loop.judging.pending_among(ids) == set(ids)  # for votes the spent budget deferred
        assert len(read) <= 2 * len(sessions)  # rather than reading them again on each of the six ticks
    finally:
        p.stop()


def test_a_judge_outage_loses_no_turn_and_the_queue_waits_for_the_service(home: Path) -> None:
    """The judge's service answering 503 for longer than ``reward.max_attempts`` tries and ``reward.review_wait``:
    before, each turn was given up after its attempts and its session's review settled without its score, so the
    turns of an outage never became samples. Now an outage counts no attempt, the queue stops calling until a
    backoff has passed, and the review leaves the waiting turns for a later look."""
    from metaclaw_plugin.store import ledger

    down = {"status": 503, "error": "the judge is overloaded"}
    with Upstream(replies=[down] * 6 + ["The answer is fine.\nScore: 1"] * 6) as up:
        judge = {"model": "openai/judge", "api_base": up.url, "api_key": "x", "votes": 1, "retries": 0,
                 "max_attempts": 2, "review_wait": 0.0}  # fmt: skip
        p = MetaClawPlugin(Settings(home=home, reward=judge)).start()
        try:
            loop = p.learning
            assert isinstance(loop, LearningLoop)
            ids = []
            for i in range(3):
                ctx = TurnContext(f"outage-{i}")
                p.on_request(ctx, [{"role": "user", "content": f"export report {i} as csv"}])
                p.on_response(ctx, {"role": "assistant", "content": f"done: report-{i}.csv"})
                p.on_session_end(ctx)  # no outcome: the judge scores the turn
                ids.append(ctx.request_id)
            assert p.flush(30)
            with loop.held():
                for _ in range(2):  # as many tries as max_attempts, all during the outage
                    loop.tick(force=True, only=["judge", "reviews"])
                assert len(up.requests) == 6
                jobs = loop.db.query("SELECT state, attempts FROM fl_judge_queue")
                assert [(r["state"], r["attempts"]) for r in jobs] == [("pending", 0)] * 3
                assert len(ledger.unreviewed_main(loop.db, "default", "outage-0")) == 1  # left for a later look
                assert loop.buffer.rewarded(10) == []
                loop.db.execute("UPDATE fl_judge_queue SET next_at = 0")
                loop.judging.run()  # due, but the service was out a moment ago: no call before the backoff
                assert len(up.requests) == 6
                loop.tick(force=True, only=["judge", "reviews"])  # the service is back
            assert sorted(s.turn_id for s in loop.buffer.rewarded(10)) == sorted(ids)
            assert {r["state"] for r in loop.db.query("SELECT state FROM fl_judge_queue")} == {"done"}
        finally:
            p.stop()
