"""MetaClawPlugin: the only object adapters touch.

What every adapter calls (LiteLLM, LangChain's middleware, callback handler and ``with_skills``, the sidecar
that OpenClaw talks to):

* ``prepare_turn(ctx, messages, tools=...) -> PreparedTurn``: the block to inject (``.block``, skills today;
  the adapter renders it into its host's own message type) and the record of the request (``.messages``, as
  sent). The adapter keeps it on the host's per-call object, or in an ``InFlight`` table when the host has none.
* ``complete_turn(prepared, response, ...)``: record the turn (on disk, in the journal, when it returns).
* ``on_session_end(ctx, outcome)`` and ``on_feedback(ctx, score, text)``.

``on_request``/``on_response`` (the public hooks, with async twins) are the same two calls for callers that keep
no state: the prepared turn waits in :attr:`MetaClawPlugin.inflight`, keyed by ``ctx.request_id``.

All of them are synchronous and cheap (in-memory retrieval and one journal append; no network, no LLM, no lock
on a database). The hooks fail open: if the plugin breaks, the host's call goes on unchanged and the error is
logged and counted. ``prepare_turn``/``complete_turn`` raise instead; adapters call them under ``FailOpen``.

This module is the plugin's lifecycle: what it is made of, start and stop, the background loops it attaches, its
status. The hooks are the turn path's (:mod:`.turnpath`) and the sessions' (:mod:`.livesessions`); what the host
passes is checked at the boundary (:mod:`.boundary`).
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .config import Settings
from .hostmodel import HOST_MODEL_KEY, HostModel, HostModels
from .hosttraffic import GiveWay
from .infra.homedir import make_private
from .infra.logfile import attach_log_file, held_back
from .infra.service import Service
from .infra.worker import BackgroundWorker
from .memory.store import MemoryStore
from .memory.view import MemoryView
from .privacy import disk_redactor, redactor_for
from .protocols import BackgroundPart, SchedulerPart
from .requestpath.boundary import Boundary
from .requestpath.bounds import Identifiers
from .requestpath.events import Events, SessionState
from .requestpath.livesessions import LiveSessions
from .requestpath.turnpath import TurnPath
from .requestpath.turns import InFlight, PreparedTurn
from .skillbank.bank import Injection, SkillBank, bundled_skills_dir
from .store import runtime_state
from .store.backend import postgres_of
from .store.election import LearnerElection, host_id
from .store.passages import PassageStore
from .store.pg_library import SharedSkillLibrary
from .store.postgres import PostgresDatabase
from .store.trajectories import TrajectoryStore
from .tasktext import TurnTask
from .types import Message, Session, Turn, TurnContext

if TYPE_CHECKING:  # attached lazily in start(); the request path never imports it
    from .learning import LearningLoop
    from .learning.memory.learner import MemoryLearner

log = logging.getLogger("metaclaw_plugin")

STORED_SWEEP_EVERY = 60.0  # seconds between looks for sessions an earlier process left open


class MetaClawPlugin:
    def __init__(self, settings: Settings | None = None, *, config_file: str | None = None):
        self.settings = settings if settings is not None else Settings.load(config_file)
        s = self.settings
        logging.getLogger("metaclaw_plugin").setLevel(s.log_level)
        self.redactor = disk_redactor(s.privacy)
        self.boundary = Boundary(s, self.redactor)  # what the host passes, and what breaks: coerced and counted
        # a skill's tenant is keyed like a request's, so a rule scoped to a tenant by name reaches that tenant
        self.skills = SkillBank(s, tenant_key=lambda t: self.ids.joinable(t, "skill tenant"))
        pg = postgres_of(s)  # postgres: sessions, turns and rewards go there (through the local journal)
        self.store = TrajectoryStore(
            s.db_file,
            redactor=None if s.privacy.store_raw else self.redactor,
            queue_max=s.storage.queue_max,
            max_message_bytes=s.storage.max_message_bytes,
            journal_fsync=s.storage.journal_fsync,
            database=pg,
        )
        # postgres: the library lives in the database, this host's skills folder is its local copy
        self.library = (
            SharedSkillLibrary(pg, self.skills.store, host_id(), self.redactor or redactor_for(s.privacy))
            if pg is not None
            else None
        )
        self.worker = BackgroundWorker()
        self._start_lock = threading.Lock()
        self._started = False
        # The background loops, each on threads of its own (service.py), in the order start() attached them:
        # stop() stops them in reverse. The worker (stopped before them) and the trajectory writer (after) are apart.
        self.loops: list[tuple[str, BackgroundPart]] = []
        # The learning side subscribes here (TurnRecorded, SessionEnd, Feedback); delivery runs in the worker.
        self.events = Events(self._deliver)
        self.learning: LearningLoop | None = None  # attached in start() when configured
        self.scheduler: SchedulerPart | None = None  # scheduling.Omls, attached in start() when training can run
        self.scheduler_note: str | None = None
        # Memory of each user: the request path reads the view; the worker refreshes it; the learner extracts.
        self.memory = MemoryView(s)
        self.memory_store: MemoryStore | None = None
        self.passages: PassageStore | None = None  # what each user said (store.passages), beside the memories
        self.memory_learner: MemoryLearner | None = None  # attached in start()
        # On PostgreSQL shared by hosts: the one election of this host (memory extraction, the learning loop, the
        # trainer all run on the elected learner only); None on SQLite and while memory is off (the loop keeps its own).
        self.election: LearnerElection | None = None
        # The host's own model, offered by its adapter on the first request (learning.model: host): the evolver,
        # the judge, memory extraction and skill review call it where their own model is unset. Those calls give way
        # to the host's traffic, which the turn path counts (hosttraffic.py).
        give_way = GiveWay(s.learning.give_way_policy())
        self.host_models = HostModels(
            on_offer=lambda m: self.worker.submit("host_model", self._note_host_model, m), give_way=give_way
        )
        # The hooks' work: the sessions live here (livesessions.py), preparing and recording turns (turnpath.py).
        self.sessions = LiveSessions(s, self.boundary, self.store, self.events, self.worker, self._ensure_started)
        self.turns = TurnPath(
            s,
            self.boundary,
            self.skills,
            self.memory,
            self.store,
            self.sessions,
            self.events,
            self.worker,
            self._ensure_started,
            give_way.traffic,
        )

    @property
    def ids(self) -> Identifiers:
        return self.boundary.ids

    @property
    def errors(self) -> Counter[str]:
        return self.boundary.errors

    @property
    def input_problems(self) -> Counter[str]:
        return self.boundary.problems

    @property
    def inflight(self) -> InFlight[str, PreparedTurn]:
        return self.turns.inflight

    @property
    def last_request_at(self) -> float:
        return self.turns.last_request_at

    # Lifecycle ------------------------------------------------------------------------------------
    def start(self) -> MetaClawPlugin:
        """Open the stores and start the background worker. Idempotent."""
        with self._start_lock:
            if self._started:
                return self
            self.host_models.give_way.open()
            home = self.settings.home_dir
            make_private(home, self.settings.skills_path)  # created 0700, or tightened where it was made looser
            attach_log_file(home, self.redactor, self.settings.log_level)
            skills_dir = self.settings.skills_path
            if self.library is not None:
                self.library.sync()  # the shared library first (fails open: the local copy serves meanwhile)
            if not skills_dir.is_dir() or not any(skills_dir.glob("*/SKILL.md")):
                self.skills.store.seed_from(bundled_skills_dir(), actor="first-start")
            self.skills.refresh(force=True)
            self.store.open()
            self.worker.every(0.5, "skills.refresh", self.skills.refresh)
            if self.library is not None:  # on NOTIFY and every second, in a thread of its own
                self.attach_loop("library", self.library.listener(self.sync_library))
            self.worker.every(1.0, "sessions.sweep", self.sweep_sessions)
            # sessions earlier processes left open, and the conversation ids they used: at start and every minute
            self.worker.submit("sessions.taken", self.sessions.load_taken)
            self.worker.submit("sessions.sweep_stored", self.sweep_stored_sessions)
            self.worker.every(STORED_SWEEP_EVERY, "sessions.sweep_stored", self.sweep_stored_sessions)
            if self.settings.storage.retention_days > 0:
                self.worker.every(
                    6 * 3600, "store.prune", lambda: self.store.prune(self.settings.storage.retention_days)
                )
            self.worker.start()
            if self.skills.reranker is not None:  # the second ranking stage (retrieval.rerank)
                self.attach_loop("rerank", self.skills.reranker)
            self._attach_memory()
            self._attach_learning()
            self._attach_scheduler()
            self._started = True
            atexit.register(self.stop)
        return self

    def stop(self) -> None:
        """Drain background work and close the stores. Idempotent; pending sessions stay open on disk."""
        with self._start_lock:
            if not self._started:
                return
            self._started = False
            self.host_models.give_way.close()  # a call waiting for a quiet host goes now: no stop waits for the host
            self.worker.stop()  # first: the events it still delivers reach the loops before they stop
            while self.loops:  # the election (attached before all that ask it) after them
                name, loop = self.loops.pop()
                try:
                    loop.stop()
                except Exception:
                    self.boundary.fail(f"{name}.stop")
            self._detach_memory()
            self.election = None
            self.store.close()
            try:
                atexit.unregister(self.stop)
            except Exception:
                pass

    def sync_library(self) -> str | None:
        """Postgres: pull the shared library into this host's copy, publish this host's changes, refresh the snapshot
        (the listener, on NOTIFY and every second; the dashboard, around what a person sees and changes). Fails
        open: returns the error that left the two apart, None when they agree (always None with SQLite)."""
        if self.library is None:
            return None
        if self.library.sync():
            self.skills.refresh(force=True)
        return self.library.last_error

    def attach_loop(self, name: str, loop: BackgroundPart) -> None:
        """Start a background loop with the plugin: the one place they start; stop() stops it."""
        self.loops.append((name, loop))
        loop.start()

    def services(self) -> list[Service]:
        """Every thread of the plugin's background work, for status."""
        return [*self.worker.services(), *self.store.services(), *(s for _, p in self.loops for s in p.services())]

    @property
    def started(self) -> bool:
        return self._started

    def _ensure_started(self) -> None:
        if not self._started:
            self.start()

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait for background work and the store writer (tests, CLI, shutdown)."""
        ok = self.worker.wait_idle(timeout)
        if self.memory_learner is not None:  # extraction, then the view's refresh it asked for
            ok = self.memory_learner.wait_idle(timeout) and self.worker.wait_idle(timeout) and ok
        return self.store.flush(timeout) and ok

    # The turn path (turnpath.py) --------------------------------------------------------------------------
    def prepare_turn(
        self,
        ctx: TurnContext,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        inject: bool = True,
        injected_skills: Sequence[str] | None = None,
        record: bool = True,
    ) -> PreparedTurn:
        """See :meth:`.TurnPath.prepare_turn`."""
        return self.turns.prepare_turn(
            ctx, messages, tools=tools, inject=inject, injected_skills=injected_skills, record=record
        )

    def complete_turn(
        self,
        prepared: PreparedTurn,
        response: Message | None,
        *,
        ctx: TurnContext | None = None,
        usage: dict[str, Any] | None = None,
        error: str | None = None,
        messages: Sequence[Message] | None = None,
        latency_ms: float | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
    ) -> Turn:
        """See :meth:`.TurnPath.complete_turn`."""
        return self.turns.complete_turn(
            prepared, response, ctx=ctx, usage=usage, error=error, messages=messages, latency_ms=latency_ms, tools=tools
        )

    def skill_block(self, ctx: TurnContext, messages: Sequence[Message]) -> Injection:
        return self.turns.skill_block(ctx, messages)

    def memory_section(self, ctx: TurnContext, messages: Sequence[Message], task: TurnTask | None = None) -> str:
        return self.turns.memory_section(ctx, messages, task)

    def on_request(
        self, ctx: TurnContext, messages: Sequence[Message], *, tools: Sequence[dict[str, Any]] | None = None
    ) -> list[Message]:
        """See :meth:`.TurnPath.on_request`."""
        return self.turns.on_request(ctx, messages, tools=tools)

    def on_response(
        self,
        ctx: TurnContext,
        response: Message | None,
        *,
        usage: dict[str, Any] | None = None,
        error: str | None = None,
        messages: Sequence[Message] | None = None,
        latency_ms: float | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
    ) -> Turn | None:
        """See :meth:`.TurnPath.on_response`."""
        return self.turns.on_response(
            ctx, response, usage=usage, error=error, messages=messages, latency_ms=latency_ms, tools=tools
        )

    def on_feedback(self, ctx: TurnContext, score: Any = None, text: str | None = None) -> None:
        """See :meth:`.TurnPath.on_feedback`."""
        self.turns.on_feedback(ctx, score, text)

    def on_session_end(
        self, ctx: TurnContext, outcome: dict[str, Any] | None = None, *, reason: str = "host", every_user: bool = True
    ) -> None:
        """See :meth:`.LiveSessions.on_session_end`."""
        self.sessions.on_session_end(ctx, outcome, reason=reason, every_user=every_user)

    # Async twins: the hooks never block on I/O, so they simply run inline.
    async def aon_request(
        self, ctx: TurnContext, messages: Sequence[Message], *, tools: Sequence[dict[str, Any]] | None = None
    ) -> list[Message]:
        return self.on_request(ctx, messages, tools=tools)

    async def aon_response(self, ctx: TurnContext, response: Message | None, **kw: Any) -> Turn | None:
        return self.on_response(ctx, response, **kw)

    async def aon_session_end(self, ctx: TurnContext, outcome: dict[str, Any] | None = None, **kw: Any) -> None:
        self.on_session_end(ctx, outcome, **kw)

    async def aon_feedback(self, ctx: TurnContext, score: Any = None, text: str | None = None) -> None:
        self.on_feedback(ctx, score, text)

    # Sessions (livesessions.py) ---------------------------------------------------------------------------
    def sweep_sessions(self, now: float | None = None) -> int:
        """End sessions idle longer than ``sessions.session_idle_timeout``; forget requests never answered."""
        self.inflight.sweep()
        return self.sessions.sweep_idle(now)

    def sweep_stored_sessions(self, now: float | None = None) -> int:
        """End the stored sessions no process ended (see :meth:`.LiveSessions.sweep_stored`). Run by the worker at
        start and every minute, never on the request path."""
        if self.election is not None and not self.election.is_leader():
            return 0  # hosts sharing PostgreSQL: the elected learner sweeps, once for all of them
        return self.sessions.sweep_stored(now)

    def conversation_session(self, messages: Any, tenant: Any = None, user: Any = None) -> str | None:
        """See :meth:`.LiveSessions.conversation_session`."""
        return self.sessions.conversation_session(messages, tenant, user)

    def active_sessions(self) -> list[SessionState]:
        return self.sessions.active()

    def read_session(self, session_id: str, tenant: str | None = None, user: str | None = None) -> Session | None:
        """See :meth:`.LiveSessions.read_session`."""
        return self.sessions.read_session(session_id, tenant, user)

    def knows_session(self, session_id: str, tenant: str | None = None, user: str | None = None) -> bool:
        """See :meth:`.LiveSessions.knows_session`."""
        return self.sessions.knows_session(session_id, tenant, user)

    def latest_main_turn(self, session_id: str, tenant: str | None = None, user: str | None = None) -> str | None:
        """See :meth:`.LiveSessions.latest_main_turn`."""
        return self.sessions.latest_main_turn(session_id, tenant, user)

    def end_named_session(
        self, session_id: str, tenant: str | None = None, outcome: dict[str, Any] | None = None, reason: str = "host"
    ) -> list[str]:
        """See :meth:`.LiveSessions.end_named_session`."""
        return self.sessions.end_named_session(session_id, tenant, outcome, reason)

    # Memory ---------------------------------------------------------------------------------------------------------
    def refresh_memory(self) -> bool:
        """Follow the memory tables into the view (the worker, every second; after a write in this process)."""
        if self.memory_store is None:
            return False
        return self.memory.refresh(self.memory_store, self.passages)

    def _memory_written(self) -> None:
        """The learner wrote (its thread): the view follows at once, a burst of writes in one refresh more
        (:meth:`.BackgroundWorker.coalesce`). Never a gap: a refresh at most every half second made a fact miss the
        user's next conversation."""
        self.worker.coalesce("memory.refresh", self.refresh_memory)

    def _attach_memory(self) -> None:
        """The view's refresh (every second, so memories written by another process or host show within one) and
        the extraction worker (imported lazily: the request path never imports it). Fails open."""
        if not self.settings.memory.enabled:
            return
        try:
            from .store.backend import open_database

            self.memory_store = MemoryStore(open_database(self.settings))
            self.passages = PassageStore(self.memory_store.db)
            if isinstance(self.memory_store.db, PostgresDatabase):
                self.election = LearnerElection(self.memory_store.db)
                self.attach_loop("election", self.election)
            self.worker.every(1.0, "memory.refresh", self.refresh_memory)
            self.worker.submit("memory.refresh", self.refresh_memory)
            from .learning.memory.learner import MemoryLearner

            self.memory_learner = MemoryLearner(
                self.settings,
                self.events,
                self.redactor,
                self._memory_written,
                db=self.memory_store.db,
                election=self.election,
                host_models=self.host_models,
            )
            self.attach_loop("memory", self.memory_learner)
        except Exception:
            self.boundary.fail("memory.attach")

    def _detach_memory(self) -> None:
        """After the memory learner stopped (stop()): its database."""
        try:
            self.memory_learner = None
            if self.memory_store is not None:
                self.memory_store.db.close()
                self.memory_store = self.passages = None
        except Exception:
            self.boundary.fail("memory.stop")

    def _note_host_model(self, model: HostModel) -> None:
        """Write which model the host offered where ``status`` in another process reads it (worker; fails open)."""
        try:
            from .store.backend import open_database

            db = open_database(self.settings)
            try:
                runtime_state.put(db, HOST_MODEL_KEY, {"name": model.name, "via": model.via})
            finally:
                db.close()
        except Exception:
            self.boundary.fail("host_model.note")

    def memory_status(self) -> dict[str, Any]:
        if not self.settings.memory.enabled:
            return {"enabled": False}
        out: dict[str, Any] = {
            "enabled": True,
            "view": self.memory.counts(),
            "refresh_error": self.memory.refresh_error,
        }
        try:
            if self.memory_store is not None:
                out["counts"] = self.memory_store.counts()
            if self.passages is not None:
                out["passages"] = self.passages.counts()
        except Exception as e:
            out["counts_error"] = f"{type(e).__name__}: {e}"
        if self.memory_learner is not None:
            out.update(self.memory_learner.status())
        return out

    def _attach_learning(self) -> None:
        """Reward, evolution and the sample buffer, as background subscribers. Imported lazily so the
        request path never imports them; any failure leaves the plugin serving without them.

        With no judge, evolver or verifier configured (the defaults) the loop has nothing to score or
        evolve with, so it is not attached and costs the host nothing per turn (measured: ~1.9 ms of
        background CPU per turn otherwise, which a busy proxy pays in throughput)."""
        s = self.settings
        if not (s.evolution.enabled or s.reward.enabled):
            return
        if not (s.evolution.model or s.reward.model or s.reward.verifiers or s.learning.model != "none"):
            log.info("learning idle: learning.model is none and no evolution.model, reward.model or verifier is set")
            return
        try:
            if self.learning is None:
                from .learning import LearningLoop, Parts

                self.learning = LearningLoop(
                    Parts(
                        settings=s,
                        trajectories=self.store,
                        skills=self.skills,
                        events=self.events,
                        redactor=self.redactor,
                        live_sessions=self.active_sessions,
                        election=self.election,
                        host_models=self.host_models,
                    )
                )
            self.attach_loop("learning", self.learning)
        except Exception:
            self.boundary.fail("learning.attach")

    def _attach_scheduler(self) -> None:
        """The slow loop's scheduler (OMLS), when training can run here; imported lazily, like the learning
        loop, and failing open: the plugin serves without it."""
        try:
            from .scheduling.attach import attach_scheduler

            attach_scheduler(self)
        except Exception:
            self.boundary.fail("scheduler.attach")

    # Events ----------------------------------------------------------------------------------------------
    def _deliver(self, name: str, fn: Callable[[Any], Any], event: Any) -> None:
        self.worker.post(name, self._call_listener, fn, event)  # at the worker's next pass: no wake-up per turn

    def _call_listener(self, fn: Callable[[Any], Any], event: Any) -> None:
        try:
            fn(event)
        except Exception:
            self.boundary.fail(f"listener:{getattr(fn, '__qualname__', fn)}")

    # Status ----------------------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        skills = self.skills.skills
        by_status = Counter(s.status for s in skills.values())
        return {
            "mode": self.settings.mode,
            "mode_note": self.settings.mode_note,
            "home": str(self.settings.home_dir),
            "config_file": str(self.settings.config_file) if self.settings.config_file else None,
            "pid": os.getpid(),
            "started": self._started,
            "skill_generation": self.skills.generation,
            "skills": {"total": len(skills), **{k: by_status.get(k, 0) for k in ("active", "quarantined", "retired")}},
            "conventions": self.skills.conventions_status(),
            "skill_problems": [f"{p}: {r}" for p, r in self.skills.problems],
            "retrieval": self.settings.retrieval.mode,
            "retrieval_mode_reason": self.settings.retrieval.mode_reason,
            "retrieval_error": self.skills.index_error,
            "rerank": self.skills.rerank_status(),
            "active_sessions": len(self.sessions),
            "store": {
                "queued": self.store.queued,
                "written": self.store.written,
                "dropped": self.store.dropped,
                "replayed": self.store.replayed,
                "write_errors": self.store.write_errors,
                "backend": self.store.backend,
                "retrying": self.store.retrying,
                "set_aside": self.store.set_aside,
                "journal_errors": self.store.journal_errors,
                "db_recreated": self.store.db_recreated,
            },
            **({"skill_library": self.library.status()} if self.library is not None else {}),
            "errors": dict(self.errors),
            "logging": held_back(),
            "input_problems": dict(self.input_problems),
            "background_failures": dict(self.worker.failures),
            "services": {s.name: s.status() for s in self.services()},
            **({"learning": self.learning.status()} if self.learning is not None else {}),
            "scheduler": self.scheduler.status() if self.scheduler is not None else None,
            "scheduler_note": self.scheduler_note,
            "memory": self.memory_status(),
            "host_model": self._host_model_status(),
        }

    def _host_model_status(self) -> dict[str, Any] | None:
        """The host's own model the plugin's calls use (learning.model: host), once its adapter offered it."""
        hm = self.host_models.get()
        if hm is None:
            return None
        return {"name": hm.name, "via": hm.via, "local": hm.local, "give_way": self.host_models.give_way.status()}
