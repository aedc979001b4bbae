"""The service base (metaclaw_plugin/infra/service.py): start, stop with a join deadline, status, fail open."""

from __future__ import annotations

import threading
from pathlib import Path

from waiting import wait_for

from metaclaw_plugin import MetaClawPlugin, Settings
from metaclaw_plugin.infra.service import Service


def test_start_stop_and_status() -> None:
    entered = threading.Event()

    def body(stop: threading.Event) -> None:
        entered.set()
        stop.wait()

    svc = Service("t-basic", body)
    assert svc.status() == {"running": False, "errors": 0, "restarts": 0, "last_error": None, "late": False}
    assert svc.start()
    assert entered.wait(5)
    assert svc.running and not svc.start()  # one thread at a time
    assert [t.name for t in threading.enumerate()].count("t-basic") == 1
    assert svc.stop(5)
    assert not svc.running and svc.status()["late"] is False
    assert svc.stop(5)  # idempotent


def test_stop_wakes_a_body_that_waits_elsewhere() -> None:
    """``wake`` is how a body blocked on a queue or an event hears the stop."""
    woken = threading.Event()
    svc = Service("t-wake", lambda stop: woken.wait(), wake=woken.set)
    svc.start()
    assert svc.stop(5)
    assert woken.is_set()


def test_stop_deadline_reports_a_thread_that_did_not_end() -> None:
    release = threading.Event()
    svc = Service("t-stuck", lambda stop: release.wait())  # ignores its stop event
    svc.start()
    assert svc.stop(0.05) is False
    assert svc.status()["late"] is True
    stuck = [t for t in threading.enumerate() if t.name == "t-stuck"]
    assert stuck and stuck[0].daemon  # never holds up the process's exit
    release.set()
    stuck[0].join(5)
    assert not stuck[0].is_alive()


def test_a_restart_gets_a_stop_event_of_its_own() -> None:
    """A thread that outlived its deadline keeps its (set) stop event; the next start's is clear."""
    events: list[threading.Event] = []
    release = threading.Event()

    def body(stop: threading.Event) -> None:
        events.append(stop)
        release.wait()

    svc = Service("t-again", body)
    svc.start()
    wait_for(lambda: len(events) == 1)
    assert not svc.stop(0.01)
    svc.start()
    wait_for(lambda: len(events) == 2)
    assert events[0].is_set() and not events[1].is_set()
    release.set()
    assert svc.stop(5)


def test_a_body_that_raises_is_counted_and_run_again() -> None:
    calls: list[int] = []
    done = threading.Event()

    def body(stop: threading.Event) -> None:
        calls.append(1)
        if len(calls) < 3:
            raise RuntimeError(f"boom {len(calls)}")
        done.set()
        stop.wait()

    svc = Service("t-raise", body, retry=0.01)
    svc.start()
    assert done.wait(5)
    st = svc.status()
    assert st["errors"] == 2 and st["restarts"] == 2 and st["last_error"] == "RuntimeError: boom 2"
    assert st["running"]
    assert svc.stop(5)


def test_a_body_that_raises_while_stopping_is_not_run_again() -> None:
    calls: list[int] = []

    def body(stop: threading.Event) -> None:
        calls.append(1)
        stop.wait()
        raise RuntimeError("on the way out")

    svc = Service("t-raise-stop", body, retry=0.01)
    svc.start()
    wait_for(lambda: calls)
    assert svc.stop(5)
    assert calls == [1] and svc.errors == 1 and svc.restarts == 0


def test_a_body_that_returns_ends_the_thread_and_can_run_again() -> None:
    runs: list[int] = []
    svc = Service("t-once", lambda stop: runs.append(1))
    svc.start()
    assert svc.join(5) and not svc.running
    svc.start()
    assert svc.join(5) and runs == [1, 1]


def test_every_calls_until_stopped_and_a_failing_call_does_not_end_it() -> None:
    calls: list[int] = []

    def fn() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise ValueError("first")

    svc = Service.every("t-every", 0.01, fn)
    svc.start()
    wait_for(lambda: len(calls) >= 3)
    assert svc.stop(5)
    n = len(calls)
    assert svc.errors == 1 and svc.last_error == "ValueError: first" and svc.restarts == 0
    assert not svc.running and len(calls) == n


def test_stop_from_the_body_only_asks() -> None:
    """A body (a subscriber of a watcher, say) may stop its own service: no join on itself, no deadline missed."""
    result: list[bool] = []
    svc: Service

    def body(stop: threading.Event) -> None:
        result.append(svc.stop(5))

    svc = Service("t-self", body)
    svc.start()
    wait_for(lambda: result)
    assert result == [True] and not svc.late


def test_a_one_off_body_that_raises_is_counted_and_not_run_again() -> None:
    calls: list[int] = []

    def body(stop: threading.Event) -> None:
        calls.append(1)
        raise RuntimeError("once")

    svc = Service("t-one-off", body, retry=None)
    svc.start()
    assert svc.join(5) and not svc.running
    assert calls == [1] and svc.errors == 1 and svc.restarts == 0 and svc.last_error == "RuntimeError: once"


class _Loop:
    """A background part as the plugin sees one (start, stop, status, services), recording the order."""

    def __init__(self, name: str, log: list[str]):
        self.service = Service(f"t-loop-{name}", lambda stop: stop.wait())
        self.name, self.log = name, log

    def start(self) -> None:
        self.log.append(f"start {self.name}")
        self.service.start()

    def stop(self) -> None:
        self.log.append(f"stop {self.name}")
        self.service.stop(5)

    def status(self) -> dict[str, object]:
        return {}

    def services(self) -> list[Service]:
        return [self.service]


def test_the_plugin_starts_its_loops_in_one_place_and_stops_them_in_reverse(home: Path) -> None:
    plugin = MetaClawPlugin(Settings(home=home)).start()
    log: list[str] = []
    try:
        first, second = _Loop("a", log), _Loop("b", log)
        plugin.attach_loop("a", first)
        plugin.attach_loop("b", second)
        services = plugin.status()["services"]
        for name in ("metaclaw-worker", "metaclaw-store-writer", "t-loop-a", "t-loop-b"):
            assert services[name]["running"] is True, name
    finally:
        plugin.stop()
    assert log == ["start a", "start b", "stop b", "stop a"]
    assert plugin.loops == [] and not any(s.running for s in [*plugin.services(), first.service, second.service])
