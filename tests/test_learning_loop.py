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
                subs = p.events._subs[kind]
                assert len(subs) == 1 and subs[0].__self__ is p.learning.intake
        finally:
            p.stop()
