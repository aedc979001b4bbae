"""OMLS: train only while the user is away, as a state machine driven by APScheduler.

``IDLE_WAIT -> WINDOW_OPEN -> UPDATING -> PAUSING -> IDLE_WAIT``

* An interval job (``scheduler.interval_seconds``, ``max_instances=1``, ``coalesce=True``) polls the mode in
  effect and asks the :class:`~.signals.Gate` whether a window is open (``auto``); in ``rl`` the window is always
  open; in ``skills_only`` it is always shut.
* In an open window with a fresh batch, and holding the home's trainer lock, it starts ``Trainer.run`` in a
  worker thread, so neither the scheduler nor the host ever waits for training.
* ``should_continue`` (checked by the trainer before each step and between micro-batches) turns false at once
  when the host sends a request (``auto``), when the mode changes, when the window closes or on ``stop``:
  the pause lands between steps and the trainer puts the batch back for the next window.
* With PostgreSQL shared by hosts, only the elected learner (:class:`~..store.election.LearnerElection`) trains:
  on any other host the window reads as shut ("not the elected learner"), and a host that loses the election
  pauses between steps like on a closed window.
* Every transition is stored in ``sched_transitions`` (the home's database: SQLite or PostgreSQL); the latest snapshot under ``runtime_state['scheduler']``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from enum import StrEnum
from functools import partial
from typing import Any, Protocol, runtime_checkable

from ..infra.service import Service
from ..store import AnyDatabase, runtime_state, transitions
from ..store.postgres import PostgresDatabase
from .lock import TrainerLock
from .signals import Decision, Gate, safe_read

log = logging.getLogger("metaclaw_plugin.scheduling")
SNAPSHOT_KEY = "scheduler"
WATCH_S = 5.0  # while training, how often the system idle detectors are re-read


class State(StrEnum):
    IDLE_WAIT = "IDLE_WAIT"
    WINDOW_OPEN = "WINDOW_OPEN"
    UPDATING = "UPDATING"
    PAUSING = "PAUSING"


@runtime_checkable
class Trainer(Protocol):
    """What the scheduler needs from the slow loop's trainer (``metaclaw_plugin.training.trainer.Trainer``)."""

    def ready(self) -> bool:
        """A fresh batch waits in the buffer."""
        ...

    def run(self, should_continue: Callable[[], bool], max_steps: int | None = None) -> Any:
        """Train until no fresh batch is left, ``max_steps`` or ``should_continue()`` is false; a batch
        interrupted before its optimiser step goes back to the buffer."""
        ...


class Election(Protocol):
    """Who trains among hosts on one database (:class:`~..store.election.LearnerElection`)."""

    def is_leader(self) -> bool: ...
    def start(self) -> Any: ...
    def stop(self) -> None: ...
    def services(self) -> list[Service]: ...


NOT_LEADER = "not the elected learner: another host on this database trains"


class Omls:
    def __init__(
        self,
        db: AnyDatabase,
        gate: Gate,
        trainer: Callable[[], Trainer],
        *,
        mode: Callable[[], str],
        lock: TrainerLock,
        last_activity: Callable[[], float] = lambda: 0.0,
        interval_s: float = 60.0,
        clock: Callable[[], float] = time.time,
        max_steps: int | None = None,
        election: Election | None = None,
        owns_election: bool = False,
    ):
        self.db, self.gate, self.lock = db, gate, lock
        self.election, self._owns_election = election, owns_election
        self._trainer_factory = trainer
        self._trainer: Trainer | None = None
        self._mode_fn, self._last_activity, self.clock = mode, last_activity, clock
        self.interval_s, self.max_steps = float(interval_s), max_steps
        self.state = State.IDLE_WAIT
        self.since = clock()
        self.mode = "skills_only"
        self.decision: Decision | None = None
        self.note: str | None = None  # why an open window is not training
        self.runs = 0
        self.errors: dict[str, int] = {}
        self.last_report: Any = None
        self.last_pause: dict[str, Any] | None = None
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._run_mode = "rl"
        self._run_started = 0.0
        self.training: Service | None = None  # the latest training run's thread
        self._sched: Any = None
        self._sentinel: Any = None  # keeps the loop sentinel task referenced
        self._stopping = False

    # The tick (the APScheduler job) --------------------------------------------------------------------------
    def tick(self) -> None:
        """One look at the mode and the signals; starts or pauses training. Never raises.

        The signals are read outside the state lock (a calendar fetch may take seconds), so a pause requested
        by the trainer's thread meanwhile is never held up."""
        try:
            now = self.clock()
            mode = self._poll_mode()
            if mode == "skills_only":
                decision = Decision(False, "mode skills_only: no training")
            elif not self.is_leader():
                decision = Decision(False, NOT_LEADER)
            elif mode == "rl":
                decision = Decision(True, "mode rl: the window is always open")
            else:
                decision = self.gate.decide(now)
            with self._lock:
                self.decision = decision
                self._apply(mode, decision)
        except Exception:
            self._error("tick")

    def _apply(self, mode: str, decision: Decision) -> None:
        if self.state in (State.UPDATING, State.PAUSING):
            if not self.lock.heartbeat():
                self.request_pause("the trainer lock was taken over by another process")
            elif self.state == State.UPDATING:
                self._run_mode = mode if mode != "skills_only" else self._run_mode
                if mode == "skills_only":
                    self.request_pause("mode changed to skills_only")
                elif not self.should_continue():  # a host request came (auto): say so, whoever sees it first
                    return
                elif not decision.open:
                    self.request_pause(f"window closed: {decision.reason}")
            return
        if self.state == State.IDLE_WAIT and decision.open:
            self._move(State.WINDOW_OPEN, decision.reason)
        elif self.state == State.WINDOW_OPEN and not decision.open:
            self._move(State.IDLE_WAIT, decision.reason)
        if self.state == State.WINDOW_OPEN:
            self._maybe_update(mode)

    def _poll_mode(self) -> str:
        try:
            mode = self._mode_fn()
        except Exception:
            self._error("mode")
            mode = self.mode  # keep the last known mode
        if mode != self.mode:
            log.info("scheduler: mode %s -> %s", self.mode, mode)
            self.mode = mode
        return mode

    def _maybe_update(self, mode: str) -> None:
        try:
            if self._trainer is None:
                self._trainer = self._trainer_factory()
            ready = self._trainer.ready()
        except Exception as e:
            self._error("trainer")
            self.note = f"the trainer failed: {type(e).__name__}: {e}"
            return
        if not ready:
            self.note = "waiting for a fresh batch"
            return
        if not self.lock.acquire():
            h = self.lock.holder() or {}
            self.note = f"another process trains on this home (pid {h.get('pid')} on {h.get('host')})"
            return
        self.note = None
        self._stop.clear()
        self._run_mode = mode
        self._run_started = self.clock()
        self._move(State.UPDATING, "a fresh batch is ready" + (" (mode rl)" if mode == "rl" else ""))
        self.runs += 1
        self.training = Service("metaclaw-trainer", partial(self._run, self._trainer), retry=None)
        self.training.start()

    # The training thread -------------------------------------------------------------------------------------------
    def _run(self, trainer: Trainer, _stop: threading.Event) -> None:
        ended = "the trainer has no fresh batch left"
        try:
            self.last_report = trainer.run(self.should_continue, self.max_steps)
        except Exception as e:
            self._error("trainer.run")
            ended = f"the trainer failed: {type(e).__name__}: {str(e)[:200]}"
        finally:
            try:
                self.lock.release()
            except Exception:
                self._error("lock.release")
            with self._lock:
                if self.state == State.PAUSING:
                    if self.last_pause is not None:
                        self.last_pause["stopped_at"] = self.clock()
                        self.last_pause["stop_latency_s"] = round(
                            self.last_pause["stopped_at"] - self.last_pause["requested_at"], 4
                        )
                    self._move(State.IDLE_WAIT, "paused between steps; the unapplied batch waits for the next window")
                elif self.state == State.UPDATING:
                    self._move(State.WINDOW_OPEN, ended)

    def is_leader(self) -> bool:
        return self.election is None or self.election.is_leader()

    def should_continue(self) -> bool:
        """The trainer's check before each step and between micro-batches: cheap, and false at once on a host
        request (``auto``), a lost election, a pause request or ``stop``."""
        if not self._stop.is_set() and not self.is_leader():
            self.request_pause(NOT_LEADER)
        if not self._stop.is_set() and self._run_mode == "auto":
            seen = self._last_activity()
            if seen > self._run_started:
                self.request_pause("user activity: a host request", at=seen)
        return not self._stop.is_set()

    def request_pause(self, reason: str, at: float | None = None) -> None:
        """Make ``should_continue`` false now; the transition is recorded once the state lock is free."""
        first = not self._stop.is_set()
        self._stop.set()
        with self._lock:
            if self.state != State.UPDATING or not first:
                return
            self.last_pause = {"reason": reason, "requested_at": at if at is not None else self.clock()}
            self._move(State.PAUSING, reason)

    def _watch(self) -> None:
        """While training in ``auto``: re-read the system idle detectors between ticks."""
        if self.state != State.UPDATING or self._run_mode != "auto":
            return
        try:
            now = self.clock()
            for s in self.gate.signals:
                if s.activity:
                    r = safe_read(s, now)
                    if r.present:
                        self.request_pause(f"user activity: {s.name}: {r.detail}")
                        return
        except Exception:
            self._error("watch")

    # Transitions -------------------------------------------------------------------------------------------------
    def _move(self, to: State, reason: str) -> None:
        frm, now = self.state, self.clock()
        self.state, self.since = to, now
        log.info("scheduler: %s -> %s (%s)", frm.value, to.value, reason)
        try:
            transitions.add(self.db, now, frm.value, to.value, reason[:1000])
            snap = {"state": to.value, "since": now, "reason": reason, "pid": os.getpid(), "mode": self.mode}
            runtime_state.put(self.db, SNAPSHOT_KEY, snap, now)
        except Exception:
            self._error("store")

    def _error(self, where: str) -> None:
        self.errors[where] = self.errors.get(where, 0) + 1
        log.exception("scheduler %s failed; training waits, the host is not affected", where)

    # Lifecycle ----------------------------------------------------------------------------------------------------
    def start(self) -> Omls:
        """Schedule the tick: AsyncIOScheduler when called with a running event loop, else BackgroundScheduler.

        A host's loop may end while the plugin lives on (each ``asyncio.run`` of an SDK script is a new loop):
        a sentinel task in that loop moves the jobs to a BackgroundScheduler when it is cancelled at loop end."""
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        self._stopping = False
        if self._owns_election and self.election is not None:
            self.election.start()
        if loop is None:
            return self._start_on(self._background())
        from apscheduler.schedulers.asyncio import AsyncIOScheduler

        self._start_on(AsyncIOScheduler(event_loop=loop, timezone=UTC))
        self._sentinel = loop.create_task(self._loop_sentinel())
        return self

    @staticmethod
    def _background() -> Any:
        from apscheduler.schedulers.background import BackgroundScheduler

        return BackgroundScheduler(daemon=True, timezone=UTC)

    def _start_on(self, sched: Any) -> Omls:
        self._sched = sched
        sched.add_job(
            self.tick, "interval", seconds=self.interval_s, id="omls.tick", max_instances=1, coalesce=True,
            next_run_time=datetime.now(UTC),
        )  # fmt: skip
        sched.add_job(
            self._watch, "interval", seconds=min(WATCH_S, self.interval_s), id="omls.watch", max_instances=1,
            coalesce=True,
        )  # fmt: skip
        sched.start()
        return self

    async def _loop_sentinel(self) -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            if self._sched is not None and not self._stopping:
                log.info("scheduler: the host's event loop is ending; ticking on a thread from now on")
                try:
                    self._sched.shutdown(wait=False)
                except Exception:
                    self._error("shutdown")
                self._start_on(self._background())
            raise

    def wake(self) -> None:
        """Run the tick now (the API changed the mode in this process)."""
        if self._sched is not None:
            try:
                self._sched.modify_job("omls.tick", next_run_time=datetime.now(UTC))
                return
            except Exception:
                self._error("wake")
        Service("metaclaw-sched-wake", lambda _stop: self.tick(), retry=None).start()  # a one-off tick

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Wait for a running training thread to end (tests, shutdown)."""
        return self.training is None or self.training.join(timeout)

    def stop(self, timeout: float = 30.0) -> None:
        self._stopping = True
        if self._sched is not None:
            try:
                self._sched.shutdown(wait=False)
            except Exception:
                self._error("shutdown")
            self._sched = None
        self.request_pause("the plugin is stopping")
        self.wait_idle(timeout)
        with self._lock:
            if self.state == State.WINDOW_OPEN:
                self._move(State.IDLE_WAIT, "the plugin is stopping")
        if self._owns_election and self.election is not None:
            self.election.stop()
        if isinstance(self.db, PostgresDatabase):
            self.db.close()  # its pool's connections (reopened on use)

    @property
    def running(self) -> bool:
        return self._sched is not None

    def services(self) -> list[Service]:
        """The threads that are ours (APScheduler's own thread is the library's): the latest training run, and the
        election when this scheduler keeps its own."""
        own = self.election.services() if self._owns_election and self.election is not None else []
        return [*([self.training] if self.training is not None else []), *own]

    def status(self) -> dict[str, Any]:
        d = self.decision
        return {
            "state": self.state.value,
            "since": self.since,
            "mode": self.mode,
            "window": None if d is None else {"open": d.open, "reason": d.reason, "until": d.until},
            "signals": {} if d is None else {k: r.as_dict() for k, r in d.readings.items()},
            "note": self.note,
            "interval_s": self.interval_s,
            "scheduler": type(self._sched).__name__ if self._sched is not None else None,
            "runs": self.runs,
            "last_pause": self.last_pause,
            "lock": self.lock.holder(),
            "leader": self.is_leader(),
            "errors": dict(self.errors),
        }
