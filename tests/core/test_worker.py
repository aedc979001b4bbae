"""The background worker's posted jobs: per-turn event deliveries that wait for the worker's next pass instead of
waking it (a wake-up on every turn cost the host's process more CPU than the jobs), in order, and never lost."""

from __future__ import annotations

import threading

from metaclaw_plugin.infra.worker import BackgroundWorker


def test_posted_jobs_wait_for_the_next_pass_in_order_and_flush_runs_them_now():
    w = BackgroundWorker(tick=60.0)  # no tick during the test: only a submitted job or wait_idle makes a pass
    w.start()
    try:
        ran: list[int] = []
        for i in range(5):
            assert w.post(f"p{i}", ran.append, i)
        assert ran == []  # posted: the thread was not woken
        assert w.wait_idle(5.0)
        assert ran == [0, 1, 2, 3, 4]
        passed = threading.Event()
        w.post("p5", ran.append, 5)
        w.submit("s", passed.set)  # a submitted job wakes the worker, which runs what was posted first
        assert passed.wait(5.0)
        assert ran == [0, 1, 2, 3, 4, 5]
    finally:
        w.stop()


def test_a_failing_posted_job_is_counted_and_its_neighbours_run():
    w = BackgroundWorker(tick=60.0)
    w.start()
    try:
        ran: list[str] = []
        w.post("a", ran.append, "a")
        w.post("boom", lambda: 1 / 0)
        w.post("b", ran.append, "b")
        assert w.wait_idle(5.0)
        assert ran == ["a", "b"] and w.failures["boom"] == 1
    finally:
        w.stop()


def test_stop_runs_what_was_posted_and_a_full_queue_drops_and_counts():
    w = BackgroundWorker(tick=60.0, queue_max=3)
    w.start()
    ran: list[int] = []
    assert all(w.post("p", ran.append, i) for i in range(3))
    assert not w.post("p", ran.append, 3) and w.dropped == 1
    w.stop()
    assert ran == [0, 1, 2]


def test_a_coalesced_job_that_fails_is_counted_and_the_next_call_runs_it_again():
    worker = BackgroundWorker()
    worker.start()
    try:
        runs: list[int] = []

        def flaky() -> None:
            runs.append(1)
            if len(runs) == 1:
                raise RuntimeError("boom")

        worker.coalesce("refresh", flaky)
        assert worker.wait_idle(10)
        assert runs == [1] and worker.failures["refresh"] == 1
        worker.coalesce("refresh", flaky)  # not left "running" by the failure: queued again
        assert worker.wait_idle(10)
        assert runs == [1, 1] and worker.failures["refresh"] == 1
    finally:
        worker.stop()
