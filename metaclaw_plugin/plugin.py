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
"""

from __future__ import annotations

import atexit
import dataclasses
import logging
import os
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .bounds import (
    DEPTH_MAX,
    GENERATION_MAX,
    LABEL_MAX,
    LATENCY_MAX_MS,
    REASON_MAX,
    TEXT_MAX,
    Refused,
    bounded_float,
    bounded_int,
    clean_text,
    home_identifiers,
    json_value,
    within_depth,
)
from .config import Settings
from .events import Events, Feedback, SessionEnd, SessionState, TurnRecorded
from .feedback import normalise_feedback
from .homedir import make_private
from .hostmodel import HOST_MODEL_KEY, HostModel, HostModels
from .logfile import attach_log_file, held_back
from .memory.model import SHARED_USER
from .memory.store import MemoryStore
from .memory.view import MemoryView
from .privacy import disk_redactor, redactor_for
from .protocols import BackgroundPart, SchedulerPart
from .service import Service
from .sessions import Conversations, given_of, namespaced, stored_session
from .sideturns import SideCalls
from .skillbank.bank import Injection, SkillBank, bundled_skills_dir
from .skillbank.render import inject as inject_block
from .store import runtime_state
from .store.backend import postgres_of
from .store.election import LearnerElection, host_id
from .store.passages import PassageStore
from .store.pg_library import SharedSkillLibrary
from .store.postgres import PostgresDatabase
from .store.trajectories import TrajectoryStore
from .tasktext import TurnTask
from .turns import FailOpen, InFlight, PreparedTurn
from .types import DEFAULT_TENANT, Message, Session, Turn, TurnContext, new_id
from .worker import BackgroundWorker

if TYPE_CHECKING:  # attached lazily in start(); the request path never imports it
    from .learning import LearningLoop
    from .memory.learner import MemoryLearner

log = logging.getLogger("metaclaw_plugin")
_fail = FailOpen(log, "metaclaw", what="the host call")

SEEN_MAX = 100_000  # sessions remembered as opened in this process (a return to one ends nothing)
STORED_SWEEP_EVERY = 60.0  # seconds between looks for sessions an earlier process left open
STORED_SWEEP_GRACE = 60.0  # beyond the idle timeout: a live owner in another process has ended it by then
STORED_SWEEP_BATCH = 500


class MetaClawPlugin:
    def __init__(self, settings: Settings | None = None, *, config_file: str | None = None):
        self.settings = settings if settings is not None else Settings.load(config_file)
        s = self.settings
        logging.getLogger("metaclaw_plugin").setLevel(s.log_level)
        self.redactor = disk_redactor(s.privacy)
        # Ids and labels as stored: bounded, and a keyed hash for one that holds a secret (see bounds.Identifiers).
        self.input_problems: Counter[str] = Counter()  # "field: problem" -> inputs coerced or refused
        self.ids = home_identifiers(s, self.redactor, self._note)
        # a skill's tenant is keyed like a request's, so a rule scoped to a tenant by name reaches that tenant
        self.skills = SkillBank(s, tenant_key=lambda t: self.ids.joinable(t, "skill tenant"))
        self.side_calls = SideCalls()  # side calls told by their shape (sessions.detect_side_calls)
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
        self.errors: Counter[str] = Counter()
        self._sessions: dict[tuple[str, str], SessionState] = {}
        # the live sessions by the id the host gave (an end or feedback that names no user reaches each user's part)
        # and by user and host (a user's new conversation ends that user's earlier ones): see sessions.py
        self._by_given: dict[tuple[str, str], set[str]] = {}
        self._by_user: dict[tuple[str, str, str], set[str]] = {}
        self._seen: OrderedDict[tuple[str, str], None] = OrderedDict()  # sessions opened here (bounded)
        self.conversations = Conversations()  # the sessions of clients that name none
        self.inflight: InFlight[str, PreparedTurn] = InFlight()  # on_request's turns, until on_response
        self._lock = threading.Lock()
        self._start_lock = threading.Lock()
        self._started = False
        # The background loops, each on threads of its own (service.py), in the order start() attached them:
        # stop() stops them in reverse. The worker (stopped before them) and the trajectory writer (after) are apart.
        self.loops: list[tuple[str, BackgroundPart]] = []
        # The learning side subscribes here (TurnRecorded, SessionEnd, Feedback); delivery runs in the worker.
        self.events = Events(self._deliver)
        self.learning: LearningLoop | None = None  # attached in start() when configured
        # Host traffic for the scheduler (OMLS): the last request here, and a file whose mtime tells other
        # processes on the home (touched at most once a second). The scheduler only reads these.
        self.last_request_at = 0.0
        self._activity_file = s.activity_path
        self._activity_marked = 0.0
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
        # the judge, memory extraction and skill review call it where their own model is unset.
        self.host_models = HostModels(on_offer=lambda m: self.worker.submit("host_model", self._note_host_model, m))

    # Lifecycle ------------------------------------------------------------------------------------
    def start(self) -> MetaClawPlugin:
        """Open the stores and start the background worker. Idempotent."""
        with self._start_lock:
            if self._started:
                return self
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
            self.worker.submit("sessions.taken", self._load_taken)
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
            self.worker.stop()  # first: the events it still delivers reach the loops before they stop
            while self.loops:  # the election (attached before all that ask it) after them
                name, loop = self.loops.pop()
                try:
                    loop.stop()
                except Exception:
                    self._fail(f"{name}.stop")
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

    # Hooks ------------------------------------------------------------------------------------------
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
        """Prepare a turn: the block to inject and the record of the request (see :class:`PreparedTurn`).

        ``inject=False``: the messages already carry their block (a retry, or a host that injected itself and
        names the skills in ``injected_skills``); nothing is added. ``record=False``: the block alone, for a host
        that asks for it ahead of its request (OpenClaw's prependSystemContext); the session is not touched.
        Raises on a bug or on messages that are not a list: adapters call it under ``FailOpen``."""
        if not isinstance(messages, (list, tuple)):
            raise TypeError(f"messages must be a list of dicts, got {type(messages).__name__}")
        self._ensure_started()
        host_ctx, ctx = ctx, self._checked(ctx)  # the adapter's context, and the same within bounds
        if ctx.kind == "main" and self.settings.sessions.detect_side_calls:
            why = self.side_calls.judge(ctx, messages, bool(tools), note=record)
            if why is not None:  # a title, summary or sub-agent call: no skills, not the session's work
                ctx.kind = host_ctx.kind = "side"
                ctx.metadata["side_reason"] = host_ctx.metadata["side_reason"] = why
        now = time.time()
        self._host_activity(now)
        block = None
        if inject:
            task = TurnTask(messages, self.skills.repeats)  # the user's words: read once, for skills and memory
            try:
                block = self.skills.injection(ctx, messages, task)
            except Exception:
                self._fail("inject")  # the turn is still recorded, with nothing injected
            memory = self.memory_section(ctx, messages, task)  # its own section beside the skills; fails open by itself
            if memory:
                base = block if block is not None else Injection("", [], self.skills.generation)
                block = replace(base, text="\n\n".join(t for t in (base.text, memory) if t))
        if block is not None:
            ctx.injected_skills = host_ctx.injected_skills = block.names
            ctx.skill_generation = host_ctx.skill_generation = block.generation
            sent = inject_block(messages, block.text)
        else:
            names = self._names(injected_skills if injected_skills is not None else ctx.injected_skills)
            gen = ctx.skill_generation if ctx.skill_generation is not None else self.skills.generation
            block = Injection("", names, gen)
            sent = list(messages)
        prepared = PreparedTurn(ctx, block, sent, _tool_list(tools), rendered=bool(block.text))
        if record:
            with self._lock:
                self._touch(ctx, now)
        return prepared

    def skill_block(self, ctx: TurnContext, messages: Sequence[Message]) -> Injection:
        """The block alone (``prepare_turn(..., record=False).block``), for tools that measure retrieval."""
        return self.prepare_turn(ctx, messages, record=False).block

    def on_request(
        self, ctx: TurnContext, messages: Sequence[Message], *, tools: Sequence[dict[str, Any]] | None = None
    ) -> list[Message]:
        """Inject the relevant skills and remember the request (with its ``tools``, the OpenAI-format tool
        definitions it carries: the policy's prompt renders them) until :meth:`on_response`. Returns a new list."""
        try:
            if not isinstance(messages, (list, tuple)):
                raise TypeError(f"messages must be a list of dicts, got {type(messages).__name__}")
            prepared = self.prepare_turn(ctx, messages, tools=tools)
            self.inflight.put(ctx.request_id, prepared)
            return prepared.messages
        except Exception as e:
            self._fail("on_request", e)
            return list(messages) if isinstance(messages, (list, tuple)) else messages  # type: ignore[return-value]

    def _host_activity(self, now: float) -> None:
        """The user is here: the scheduler pauses training at its next check (an attribute write). Other processes
        on the home see the activity file's mtime, touched by the worker at most once a second, off the request path."""
        self.last_request_at = now
        if now - self._activity_marked >= 1.0:
            self._activity_marked = now
            self.worker.submit("activity.mark", self._mark_activity_file)

    def _mark_activity_file(self) -> None:
        try:
            try:
                os.utime(self._activity_file)
            except FileNotFoundError:
                os.close(os.open(self._activity_file, os.O_WRONLY | os.O_CREAT, 0o600))
        except OSError:
            self._activity_marked = float("inf")  # once: a home we cannot write is reported, not retried
            self._fail("activity.mark")

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
        """Record the turn that :meth:`on_request` started (``ctx.request_id``). It is on disk (journal) when this
        returns. ``messages``/``tools``: the request as sent, for a response whose request was not seen (or to
        replace what was)."""
        try:
            self._ensure_started()
            prepared = self.inflight.pop(ctx.request_id)
            if prepared is None:
                prepared = self.prepare_turn(ctx, self._messages(messages), inject=False, record=False)
            return self.complete_turn(
                prepared,
                response,
                ctx=ctx,
                usage=usage,
                error=error,
                messages=messages,
                latency_ms=latency_ms,
                tools=tools,
            )
        except Exception as e:
            self._fail("on_response", e)
            return None

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
        """Record a prepared turn with its response (None with ``error`` for a failed call). It is on disk
        (journal) when this returns. ``ctx``: the response's context when the host built a new one (its model
        and user fill in from the request's); ``messages``/``tools`` replace the request's as recorded. Raises
        on a bug: adapters call it under ``FailOpen``."""
        self._ensure_started()
        pend = prepared
        ctx = self._checked(ctx) if ctx is not None else pend.ctx  # pend.ctx: checked by prepare_turn
        sent = self._messages(messages) if messages is not None else pend.messages
        kept_tools = _tool_list(tools) if tools is not None else pend.tools
        if latency_ms is not None:
            latency_ms = self._latency(latency_ms)
        if latency_ms is None:
            latency_ms = (time.monotonic() - pend.t0) * 1000.0
        if response is not None and not isinstance(response, dict):
            self._note("response", "not a dict; recorded as none")
            response = None
        sent = self._within_depth(sent, "messages")
        if response is not None:
            response = self._within_depth([response], "response")[0]
        if pend.ctx.kind == "side" and ctx.kind != "side":  # judged side at the request; the response's ctx is new
            ctx = dataclasses.replace(ctx, kind="side")
        turn = Turn(
            turn_id=ctx.request_id,
            session_id=ctx.session_id,
            tenant=ctx.tenant,
            kind=ctx.kind,
            messages=sent,
            response=response,
            tool_calls=self._tool_calls(response),
            model=ctx.model or pend.ctx.model,
            usage=self._usage(usage),
            latency_ms=round(latency_ms, 3),
            injected_skills=list(pend.block.names),
            skill_generation=pend.block.generation,
            error=self._error(error),
            host=ctx.host,
            user=ctx.user or pend.ctx.user,
            tools=kept_tools,
            created_at=self._turn_time(pend.ctx.started_at),  # when it happened (a replay or an import says when)
        )
        self.store.append_turn(turn, skill_block=pend.block.text if pend.rendered else None)
        with self._lock:
            state = self._touch(ctx, time.time())
            state.turn_ids.append(turn.turn_id)
            if ctx.kind == "main":
                state.main_turns += 1
                state.last_main = turn.turn_id
        if self.events.wanted(TurnRecorded):
            self.events.publish(TurnRecorded(turn, state, pend.ctx))
        return turn

    def on_session_end(
        self, ctx: TurnContext, outcome: dict[str, Any] | None = None, *, reason: str = "host", every_user: bool = True
    ) -> None:
        """End a session: persist the outcome and hand it to the background loops.

        A session belongs to one user (see :mod:`.sessions`). With ``ctx.user`` set, that user's session ends. With
        none, the session the host knows by ``ctx.session_id`` ends, each user's part of it that is live here
        (``every_user=False``: only the part of turns that named no user, as a proxy request without a user
        ends only its own)."""
        try:
            self._ensure_started()
            c = self._checked(ctx, session=False)
            why = self.ids.label(reason, REASON_MAX, "reason")
            if why is None:
                self._note("reason", "not text; recorded as host")
                why = "host"
            with self._lock:
                if c.user is None and every_user and not namespaced(c.session_id):
                    sids = sorted(self._by_given.get((c.tenant, c.session_id), ()))
                    ended = [(sid, self._pop_state((c.tenant, sid))) for sid in sids]
                else:
                    ended = []
                if not ended:
                    ended = [(c.session_id, self._pop_state((c.tenant, c.session_id)))]
            for sid, state in ended:
                self._end(c.tenant, sid, state.host if state else c.host, state, outcome, why)
        except Exception as e:
            self._fail("on_session_end", e)

    def _end(
        self, tenant: str, session_id: str, host: str, state: SessionState | None, outcome: Any, reason: str
    ) -> None:
        clean = json_value(outcome, self.ids.text)
        if clean != outcome:
            self._note("outcome", "values out of bounds or holding a secret; coerced")
        clean = clean if isinstance(clean, dict) else ({"value": clean} if clean is not None else None)
        self.store.end_session(tenant, session_id, clean, reason)
        self.events.publish(SessionEnd(tenant, session_id, host, clean, reason, list(state.turn_ids) if state else []))

    # Async twins: the hooks never block on I/O, so they simply run inline.
    async def aon_request(
        self, ctx: TurnContext, messages: Sequence[Message], *, tools: Sequence[dict[str, Any]] | None = None
    ) -> list[Message]:
        return self.on_request(ctx, messages, tools=tools)

    async def aon_response(self, ctx: TurnContext, response: Message | None, **kw: Any) -> Turn | None:
        return self.on_response(ctx, response, **kw)

    async def aon_session_end(self, ctx: TurnContext, outcome: dict[str, Any] | None = None, **kw: Any) -> None:
        self.on_session_end(ctx, outcome, **kw)

    def on_feedback(self, ctx: TurnContext, score: Any = None, text: str | None = None) -> None:
        """Explicit feedback from the host or user: thumbs up/down (bool, "up"/"down"), a number in
        [-1, 1], and/or a correction text (a text alone that corrects the answer scores -1). It applies
        to the turn ``ctx.request_id`` when that is a recorded turn, else to the session's latest turn.
        Recorded with source ``explicit``; one journal append, like the other hooks."""
        try:
            self._ensure_started()
            c = self._checked(ctx, session=False)
            if text is not None and not isinstance(text, str):
                self._note("feedback text", "not text; dropped")
                text = None
            text = clean_text(text[:TEXT_MAX]) if text else None
            value = normalise_feedback(score if isinstance(score, (bool, int, float)) else _short(score), text)
            with self._lock:
                if c.user is None and not namespaced(c.session_id):  # the host's id: any user's part of it
                    live = [self._sessions[(c.tenant, s)] for s in self._by_given.get((c.tenant, c.session_id), ())]
                else:
                    one = self._sessions.get((c.tenant, c.session_id))
                    live = [one] if one is not None else []
                state = next((st for st in live if c.request_id in st.turn_ids), None)
                if state is None and live:
                    state = max(live, key=lambda st: st.last_at)
                named = state is not None and c.request_id in state.turn_ids
                main = state.last_main if state is not None else None
            sid = state.session_id if state is not None else c.session_id
            # the turn it names, else the session's latest main turn; never a side turn by accident
            turn_id = c.request_id if named else main
            event = Feedback(c.tenant, sid, turn_id or c.request_id, value, text, turn_id is not None)
            if value is not None and turn_id is not None:
                self.store.record_reward(turn_id, "explicit", value, {"text": text} if text else None)
            elif value is not None:
                # Not in memory (ended, another process, no main turn yet): resolve the turn in the background.
                self.worker.submit("feedback.resolve", self._resolve_feedback, event)
            self.events.publish(event)
        except Exception as e:
            self._fail("on_feedback", e)

    async def aon_feedback(self, ctx: TurnContext, score: Any = None, text: str | None = None) -> None:
        self.on_feedback(ctx, score, text)

    def _resolve_feedback(self, event: Feedback) -> None:
        """The turn a feedback scores, from the store: the turn it names when that is a turn of the session (any
        user's part of it, for an id that names no user), else the session's latest main turn; else it is dropped
        (a side turn is never scored for want of a main one)."""
        self.store.flush(5.0)
        sessions = [
            self.store.get_session(sid, tenant=event.tenant) for sid in self._stored_ids(event.session_id, event.tenant)
        ]
        turns = [t for s in sessions if s is not None for t in s.turns]
        named = next((t for t in turns if t.turn_id == event.turn_id), None)
        if named is None:
            mains = sorted((t for t in turns if t.kind == "main"), key=lambda t: (t.created_at, t.seq))
            named = mains[-1] if mains else None
        if named is None:
            log.warning("feedback for session %s dropped: no main turn of it is stored", event.session_id)
            return
        event.session_id = named.session_id
        event.turn_id = named.turn_id
        event.resolved = True
        if event.score is not None:
            self.store.record_reward(
                event.turn_id, "explicit", event.score, {"text": event.text} if event.text else None
            )

    # Memory ---------------------------------------------------------------------------------------------------------
    def memory_section(self, ctx: TurnContext, messages: Sequence[Message], task: TurnTask | None = None) -> str:
        """The memory section for this turn (in-memory view only; "" for side turns, when off, and on any fault)."""
        try:
            text, ids = self.memory.section(ctx, messages, task)
            if ids:
                ctx.metadata["metaclaw_memories"] = ids
            return text
        except Exception:
            self._fail("memory.section")
            return ""

    def refresh_memory(self) -> bool:
        """Follow the memory tables into the view (the worker, every second; after a write in this process)."""
        if self.memory_store is None:
            return False
        return self.memory.refresh(self.memory_store, self.passages)

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
            from .memory.learner import MemoryLearner

            self.memory_learner = MemoryLearner(
                self.settings,
                self.events,
                self.redactor,
                lambda: self.worker.submit("memory.refresh", self.refresh_memory),
                db=self.memory_store.db,
                election=self.election,
                host_models=self.host_models,
            )
            self.attach_loop("memory", self.memory_learner)
        except Exception:
            self._fail("memory.attach")

    def _detach_memory(self) -> None:
        """After the memory learner stopped (stop()): its database."""
        try:
            self.memory_learner = None
            if self.memory_store is not None:
                self.memory_store.db.close()
                self.memory_store = self.passages = None
        except Exception:
            self._fail("memory.stop")

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
            self._fail("host_model.note")

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
            self._fail("learning.attach")

    def _attach_scheduler(self) -> None:
        """The slow loop's scheduler (OMLS), when training can run here; imported lazily, like the learning
        loop, and failing open: the plugin serves without it."""
        try:
            from .scheduling.attach import attach_scheduler

            attach_scheduler(self)
        except Exception:
            self._fail("scheduler.attach")

    # Internals ---------------------------------------------------------------------------------------
    def _touch(self, ctx: TurnContext, now: float) -> SessionState:
        """The live session of a turn (made on its first turn); under ``self._lock``. A session seen here for the
        first time ends, at its first main turn, the same user's earlier sessions on this host: a user who starts a
        new conversation has left the old one, whatever the client said (the ends run in the worker)."""
        key = (ctx.tenant, ctx.session_id)
        state = self._sessions.get(key)
        if state is None:
            fresh = key not in self._seen
            if fresh:
                self._seen[key] = None
                if len(self._seen) > SEEN_MAX:
                    self._seen.popitem(last=False)
            state = self._sessions[key] = SessionState(
                ctx.tenant, ctx.session_id, ctx.host, now, now, user=ctx.user, given=given_of(ctx.session_id)
            )
            state.fresh = fresh
            self._by_given.setdefault((ctx.tenant, state.given), set()).add(ctx.session_id)
            if ctx.user is not None:
                self._by_user.setdefault((ctx.tenant, ctx.user, ctx.host), set()).add(ctx.session_id)
        if state.fresh and ctx.kind == "main":
            state.fresh = False
            if state.user is not None and self.settings.sessions.new_conversation_ends_earlier:
                self._supersede(state)
        state.last_at = now
        return state

    def _supersede(self, state: SessionState) -> None:
        """End the other live sessions of ``state``'s user on its host (under ``self._lock``; ended by the worker)."""
        others = self._by_user.get((state.tenant, state.user or "", state.host), set()) - {state.session_id}
        for sid in sorted(others):
            old = self._pop_state((state.tenant, sid))
            if old is not None:
                self.worker.submit(
                    "sessions.supersede", self._end, old.tenant, old.session_id, old.host, old, None, "superseded"
                )

    def _pop_state(self, key: tuple[str, str]) -> SessionState | None:
        """Forget a live session (under ``self._lock``)."""
        state = self._sessions.pop(key, None)
        if state is not None:
            given = self._by_given.get((state.tenant, state.given))
            if given is not None:
                given.discard(state.session_id)
                if not given:
                    del self._by_given[(state.tenant, state.given)]
            ukey = (state.tenant, state.user or "", state.host)
            mine = self._by_user.get(ukey)
            if mine is not None:
                mine.discard(state.session_id)
                if not mine:
                    del self._by_user[ukey]
        return state

    def _deliver(self, name: str, fn: Callable[[Any], Any], event: Any) -> None:
        self.worker.post(name, self._call_listener, fn, event)  # at the worker's next pass: no wake-up per turn

    def _call_listener(self, fn: Callable[[Any], Any], event: Any) -> None:
        try:
            fn(event)
        except Exception:
            self._fail(f"listener:{getattr(fn, '__qualname__', fn)}")

    def _fail(self, where: str, e: BaseException | None = None) -> None:
        if isinstance(e, Refused):
            self._note(e.field, f"{e.problem}; {where} refused")
            return
        _fail(where, self)

    # Input at the boundary: what the host passes is coerced to the bounds (bounds.py) or refused, and counted.
    def _note(self, field: str, problem: str) -> None:
        key = f"{field}: {problem}"
        self.input_problems[key] += 1
        n = self.input_problems[key]
        if n == 1 or n % 1000 == 0:
            log.warning("metaclaw input %s (%d so far); the host call continues unchanged", key, n)

    def _checked(self, ctx: TurnContext, *, session: bool = True) -> TurnContext:
        """A copy of ``ctx`` with every field within bounds and every id as stored (a secret-bearing one hashed).
        A missing request id is set on ``ctx`` too, so its response still finds its request; a missing session id
        becomes the request's own (``session=False``: refused, for ends and feedback that name no session)."""
        if not isinstance(ctx, TurnContext):
            raise Refused("ctx", f"must be a TurnContext, got {type(ctx).__name__}")
        ids = self.ids
        rid = ids.session(ctx.request_id, "request_id")
        if rid is None:
            self._note("request_id", "missing or not text; a new one was made")
            rid = ctx.request_id = new_id()
        raw_tenant: Any = ctx.tenant
        blank = raw_tenant is None or (isinstance(raw_tenant, str) and not raw_tenant.strip())
        tenant = DEFAULT_TENANT if blank else ids.joinable(raw_tenant, "tenant")
        if tenant is None:
            raise Refused("tenant", f"must be text, got {type(raw_tenant).__name__}")
        sid = ids.session(ctx.session_id, "session_id")
        if sid is None:
            if not session:
                raise Refused("session_id", "missing or not text")
            self._note("session_id", "missing or not text; the turn is a session of its own")
            sid = ids.session("request-" + rid) or rid
        user = ids.joinable(ctx.user, "user")
        if user == SHARED_USER:  # a host's user named like the tenant-wide memory bucket is a user, not the bucket
            user = ids.hashed(user)
        if user is None and ctx.user is not None:
            self._note("user", f"not text ({type(ctx.user).__name__}); dropped")
        made = isinstance(ctx.metadata, dict) and ctx.metadata.get("session_source") == "fingerprint"
        sid = stored_session(ids, sid, user, turn=session, fingerprint=made)  # a session belongs to one (tenant, user)
        model = ids.label(ctx.model, field="model")
        if model is None and ctx.model is not None:
            self._note("model", f"not text ({type(ctx.model).__name__}); dropped")
        kind = ctx.kind
        if kind not in ("main", "side"):
            self._note("kind", "not main or side; taken as main")
            kind = "main"
        gen = ctx.skill_generation
        if gen is not None:
            gen = bounded_int(gen, 0, GENERATION_MAX)
            if gen is None:
                self._note("skill_generation", f"not an integer in [0, {GENERATION_MAX}]; the current one is used")
        host = ids.label(ctx.host, field="host") or "unknown"
        if (
            sid == ctx.session_id
            and rid == ctx.request_id
            and tenant == ctx.tenant
            and user == ctx.user
            and model == ctx.model
            and host == ctx.host
            and kind == ctx.kind
            and type(gen) is type(ctx.skill_generation)
            and gen == ctx.skill_generation
        ):
            return ctx  # all within bounds already (nearly every turn): no copy
        return dataclasses.replace(
            ctx,
            request_id=rid,
            session_id=sid,
            tenant=tenant,
            user=user,
            model=model,
            kind=kind,
            host=host,
            skill_generation=gen,
        )

    def _messages(self, messages: Any) -> list[Message]:
        if messages is None:
            return []
        if not isinstance(messages, (list, tuple)):
            self._note("messages", f"not a list ({type(messages).__name__}); recorded as none")
            return []
        return list(messages)

    def _within_depth(self, messages: list[Message], field: str) -> list[Message]:
        """The messages with structure past ``DEPTH_MAX`` levels flattened to its text (bounds.within_depth), so the
        recorder's walks are bounded and the turn is recorded whatever its shape; counted as an input problem."""
        out = messages
        for i, m in enumerate(messages):
            if type(m) is dict and all(type(v) is str for v in m.values()):
                continue  # nearly every message: role and text
            kept, cut = within_depth(m)
            if cut:
                if out is messages:
                    out = list(messages)
                out[i] = kept
                self._note(field, f"nested deeper than {DEPTH_MAX} levels; flattened to its text")
        return out

    def _names(self, names: Any) -> list[str]:
        """Skill names a host says it injected: text, bounded, at most 1000."""
        if not isinstance(names, (list, tuple)):
            return []
        out = [self.ids.label(n, LABEL_MAX, "injected_skills") for n in names[:1000] if isinstance(n, str)]
        return [n for n in out if n]

    def _tool_calls(self, response: Message | None) -> list[dict[str, Any]]:
        calls = response.get("tool_calls") if response else None
        if not calls:
            return []
        kept = [c for c in calls if isinstance(c, dict)] if isinstance(calls, (list, tuple)) else []
        if len(kept) != (len(calls) if isinstance(calls, (list, tuple)) else -1):
            self._note("tool_calls", "not a list of dicts; what is not a dict was dropped")
        return kept

    def _turn_time(self, value: Any) -> float:
        """A turn's time (``TurnContext.started_at``): a finite time no later than a day from now, else now."""
        now = time.time()
        at = bounded_float(value, 0.0, now + 86_400.0)
        if at is None or at != value or at <= 0.0:
            self._note("started_at", "not a time up to a day from now; now is used")
            return now
        return at

    def _latency(self, value: Any) -> float | None:
        ms = bounded_float(value, 0.0, LATENCY_MAX_MS)
        if ms is None:
            self._note("latency_ms", "not a finite number; measured instead")
        elif ms != value:
            self._note("latency_ms", f"outside [0, {LATENCY_MAX_MS:.0f}]; clamped")
        return ms

    def _usage(self, usage: Any) -> dict[str, Any] | None:
        if usage is None:
            return None
        if not isinstance(usage, dict):
            self._note("usage", f"not a dict ({type(usage).__name__}); dropped")
            return None
        clean = json_value(usage, self.ids.text)
        if clean != usage:
            self._note("usage", "values out of bounds or holding a secret; coerced")
        return clean or None

    def _error(self, error: Any) -> str | None:
        if error is None or isinstance(error, str):
            return clean_text(error[:TEXT_MAX]) if error else None
        try:
            text = f"{type(error).__name__}: {error}" if isinstance(error, BaseException) else str(error)
        except Exception:
            text = type(error).__name__
        return clean_text(text[:TEXT_MAX])

    def sweep_sessions(self, now: float | None = None) -> int:
        """End sessions idle longer than ``sessions.session_idle_timeout``; forget requests never answered."""
        now = time.time() if now is None else now
        timeout = self.settings.sessions.session_idle_timeout
        with self._lock:
            idle = [k for k, s in self._sessions.items() if now - s.last_at >= timeout]
            states = [st for st in (self._pop_state(k) for k in idle) if st is not None]
        self.inflight.sweep()
        for st in states:
            self._end(st.tenant, st.session_id, st.host, st, None, "idle")
        return len(states)

    def sweep_stored_sessions(self, now: float | None = None) -> int:
        """End the stored sessions that no process ended (one that stopped or crashed with them open): no end, no
        turn for longer than the idle timeout (and a minute's grace, so that a live owner elsewhere ends its own),
        not live here. Run by the worker at start and every minute, never on the request path. The memory learner
        reads what their turns said that was not extracted yet (``SessionEnd.stored_turns``)."""
        if self.election is not None and not self.election.is_leader():
            return 0  # hosts sharing PostgreSQL: the elected learner sweeps, once for all of them
        now = time.time() if now is None else now
        cutoff = now - self.settings.sessions.session_idle_timeout - STORED_SWEEP_GRACE
        self.store.flush(5.0)
        rows = self.store.open_sessions(cutoff, STORED_SWEEP_BATCH)
        with self._lock:
            rows = [r for r in rows if (r["tenant"], r["session_id"]) not in self._sessions]
        for r in rows:
            tenant, sid = r["tenant"], r["session_id"]
            stored = self.store.get_session(sid, tenant=tenant) if self.events.wanted(SessionEnd) else None
            turns = stored.turns if stored is not None else None
            self.store.end_session(tenant, sid, None, "idle")
            ids = [t.turn_id for t in turns or ()]
            self.events.publish(SessionEnd(tenant, sid, r["host"] or "unknown", None, "idle", ids, turns))
        return len(rows)

    def _load_taken(self) -> None:
        """The conversation ids earlier processes stored: a new conversation here never takes one (the worker)."""
        self.store.flush(5.0)
        self.conversations.taken(self.store.fingerprinted_sessions())

    def conversation_session(self, messages: Any, tenant: Any = None, user: Any = None) -> str | None:
        """The session of a conversation whose client names none (see :class:`.sessions.Conversations`): an id
        from the tenant, the user and the conversation's opening; a continuation of a conversation seen here keeps
        its id. None when no user message has words. In memory, cheap; fails open. The turn's context says
        ``metadata["session_source"] = "fingerprint"``: a client that names an id of this form gets another."""
        try:
            ids = self.ids
            t = (
                DEFAULT_TENANT
                if tenant is None or (isinstance(tenant, str) and not tenant.strip())
                else ids.joinable(tenant)
            )
            if t is None:
                return None
            u = ids.joinable(user) if user is not None else None
            return self.conversations.session_of(messages, t, u)
        except Exception:
            self._fail("conversation_session")
            return None

    def _stored_ids(self, session_id: str, tenant: str | None) -> list[str]:
        """The stored sessions a session id names: itself when it is a user's (namespaced), else itself and every
        user's part of it, most recent first. Reads the store: not for the request path."""
        if namespaced(session_id):
            return [session_id]
        rows = self.store.sessions_named(session_id, tenant)
        found = [r["session_id"] for r in rows]
        return found or [session_id]

    def active_sessions(self) -> list[SessionState]:
        with self._lock:
            return list(self._sessions.values())

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait for background work and the store writer (tests, CLI, shutdown)."""
        ok = self.worker.wait_idle(timeout)
        if self.memory_learner is not None:  # extraction, then the view's refresh it asked for
            ok = self.memory_learner.wait_idle(timeout) and self.worker.wait_idle(timeout) and ok
        return self.store.flush(timeout) and ok

    def _session_key(self, session_id: Any, user: Any) -> str | None:
        sid = self.ids.session(session_id)
        if sid is None or user is None:
            return sid
        u = self.ids.joinable(user)
        return stored_session(self.ids, sid, u, turn=False) if u is not None else sid

    def read_session(self, session_id: str, tenant: str | None = None, user: str | None = None) -> Session | None:
        """A session with its turns, for people and tests (the API, the dashboard): waits up to 2 s for the
        write-behind queue first, so what was just captured shows. Never called on the request path.

        ``session_id`` as the host knows it or as stored; with ``user``, that user's session of that id; without,
        the session of turns that named no user, else the most recent user's session of that id."""
        sid = self._session_key(session_id, user)  # the id as the hooks stored it
        if sid is None:
            return None
        self.store.flush(2.0)
        t = self.ids.joinable(tenant) if tenant else None
        found = self.store.get_session(sid, tenant=t)
        if found is None and user is None and not namespaced(sid):
            rows = self.store.sessions_named(sid, t)
            if rows:
                found = self.store.get_session(rows[0]["session_id"], tenant=rows[0]["tenant"])
        return found

    def knows_session(self, session_id: str, tenant: str | None = None, user: str | None = None) -> bool:
        """Whether a session is live here or stored (the sidecar ends only those); without ``user``, any user's
        session of that id. Reads the store: not for the request path."""
        sid = self._session_key(session_id, user)
        if sid is None:
            return False
        t = self.ids.joinable(tenant) if tenant else None
        any_user = user is None and not namespaced(sid)
        with self._lock:
            if any(k[1] == sid and (t is None or k[0] == t) for k in self._sessions):
                return True
            if any_user and any(k[1] == sid and (t is None or k[0] == t) for k in self._by_given):
                return True
        self.store.flush(2.0)
        if self.store.has_session(sid, t):
            return True
        return any_user and bool(self.store.sessions_named(sid, t))

    def latest_main_turn(self, session_id: str, tenant: str | None = None, user: str | None = None) -> str | None:
        """The latest main turn of a session (live here, else stored), or None: what feedback that names no turn
        scores. Reads the store when the session is not live here: not for the request path."""
        sid = self._session_key(session_id, user)
        if sid is None:
            return None
        t = (self.ids.joinable(tenant) if tenant else None) or DEFAULT_TENANT
        with self._lock:
            state = self._sessions.get((t, sid))
            if state is not None and state.last_main is not None:
                return state.last_main
        self.store.flush(2.0)
        stored = self.store.get_session(sid, tenant=t)
        mains = [x for x in stored.turns if x.kind == "main"] if stored is not None else []
        return mains[-1].turn_id if mains else None

    def end_named_session(
        self, session_id: str, tenant: str | None = None, outcome: dict[str, Any] | None = None, reason: str = "host"
    ) -> list[str]:
        """End a session as the host knows it, each user's part of it, live or stored (the sidecar's
        ``/v1/sessions/<id>/end``: OpenClaw's ``session_end`` names no user). Reads the store: not for the request
        path. Returns the stored ids ended."""
        sid = self.ids.session(session_id)
        if sid is None:
            return []
        t = self.ids.joinable(tenant) if tenant else DEFAULT_TENANT
        with self._lock:
            live = set() if namespaced(sid) else set(self._by_given.get((t or DEFAULT_TENANT, sid), ()))
        self.store.flush(2.0)
        stored = (
            {r["session_id"] for r in self.store.sessions_named(sid, t) if r["ended_at"] is None}
            if not namespaced(sid)
            else set()
        )
        targets = sorted(live | stored) or [sid]
        for target in targets:
            self.on_session_end(
                TurnContext(session_id=target, tenant=tenant or DEFAULT_TENANT),
                outcome,
                reason=reason,
                every_user=False,
            )
        return targets

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
            "active_sessions": len(self._sessions),
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
        return {"name": hm.name, "via": hm.via, "local": hm.local}


def _short(value: Any) -> Any:
    """A feedback score that is not a number: short text is parsed, anything else counts as none."""
    return value[:32] if isinstance(value, str) else None


def _tool_list(tools: Sequence[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """The tool definitions to keep: a list of dicts, or None (none, or not a list)."""
    if not isinstance(tools, (list, tuple)) or not tools:
        return None
    return [t for t in tools if isinstance(t, dict)] or None
