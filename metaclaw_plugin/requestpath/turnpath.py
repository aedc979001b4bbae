"""The turn path: what the plugin does between a host's request and its response, on the host's thread.

Preparing a request (:meth:`TurnPath.prepare_turn`): its context within bounds, a side call told apart, the skills
and the memory section chosen from the user's words (read once, :class:`~metaclaw_plugin.tasktext.TurnTask`), the
block rendered into the messages, the user's activity noted for the scheduler. Finishing it
(:meth:`TurnPath.complete_turn`): the turn recorded (in the journal when it returns), counted in its session
(:mod:`.livesessions`) and published as :class:`~metaclaw_plugin.requestpath.events.TurnRecorded`. ``on_request``/``on_response``
do both for callers that keep no state (the prepared turn waits in ``inflight``; a response whose request was not
seen is recorded as it came); ``on_feedback`` scores a turn.

All of it is synchronous and cheap: in-memory retrieval and one journal append; no network, no LLM, no lock on a
database.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..config import Settings
from ..hosttraffic import HostTraffic
from ..infra.worker import BackgroundWorker
from ..memory.view import MemoryView
from ..skillbank.bank import Injection, SkillBank
from ..skillbank.render import inject as inject_block
from ..store.trajectories import TrajectoryStore
from ..tasktext import TurnTask
from ..types import Message, Turn, TurnContext
from .boundary import Boundary, error_text, tool_list
from .bounds import TEXT_MAX, clean_text
from .events import Events, Feedback, TurnRecorded
from .feedback import normalise_feedback
from .livesessions import LiveSessions
from .sideturns import SideCalls
from .turns import InFlight, PreparedTurn

log = logging.getLogger("metaclaw_plugin")


class TurnPath:
    def __init__(
        self,
        settings: Settings,
        boundary: Boundary,
        skills: SkillBank,
        memory: MemoryView,
        store: TrajectoryStore,
        sessions: LiveSessions,
        events: Events,
        worker: BackgroundWorker,
        ensure_started: Callable[[], None],
        traffic: HostTraffic,
    ):
        self.settings = settings
        self.boundary = boundary
        self.skills = skills
        self.memory = memory
        self.store = store
        self.sessions = sessions
        self.events = events
        self.worker = worker
        self._ensure_started = ensure_started
        self.side_calls = SideCalls()  # side calls told by their shape (sessions.detect_side_calls)
        self.inflight: InFlight[str, PreparedTurn] = InFlight()  # on_request's turns, until on_response
        # Host traffic for the scheduler (OMLS): the last request here, and a file whose mtime tells other
        # processes on the home (touched at most once a second). The scheduler only reads these.
        self.last_request_at = 0.0
        self.activity_file: Path = settings.activity_path
        self._activity_marked = 0.0
        # Requests in flight, for the plugin's own calls to give way to (counted from a recorded request's prepare
        # to its complete; a counter step each, never a wait)
        self.traffic = traffic

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
        host_ctx, ctx = ctx, self.boundary.context(ctx)  # the adapter's context, and the same within bounds
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
                self.boundary.fail("inject")  # the turn is still recorded, with nothing injected
            memory = self.memory_section(ctx, messages, task)  # its own section beside the skills; fails open by itself
            if memory:
                base = block if block is not None else Injection("", [], self.skills.generation)
                block = replace(base, text="\n\n".join(t for t in (base.text, memory) if t))
        if block is not None:
            ctx.injected_skills = host_ctx.injected_skills = block.names
            ctx.skill_generation = host_ctx.skill_generation = block.generation
            sent = inject_block(messages, block.text)
        else:
            names = self.boundary.names(injected_skills if injected_skills is not None else ctx.injected_skills)
            gen = ctx.skill_generation if ctx.skill_generation is not None else self.skills.generation
            block = Injection("", names, gen)
            sent = list(messages)
        prepared = PreparedTurn(ctx, block, sent, tool_list(tools), rendered=bool(block.text), in_flight=record)
        if record:
            self.sessions.touch(ctx, now)
            self.traffic.start()
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
            self.boundary.fail("on_request", e)
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
                os.utime(self.activity_file)
            except FileNotFoundError:
                os.close(os.open(self.activity_file, os.O_WRONLY | os.O_CREAT, 0o600))
        except OSError:
            self._activity_marked = float("inf")  # once: a home we cannot write is reported, not retried
            self.boundary.fail("activity.mark")

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
                prepared = self.prepare_turn(ctx, self.boundary.messages(messages), inject=False, record=False)
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
            self.boundary.fail("on_response", e)
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
        fills in from the request's; whose turn it is, tenant, user and session, is always the request's: a
        response that names no user, or another, moves no turn into another user's session);
        ``messages``/``tools`` replace the request's as recorded. Raises on a bug: adapters call it under
        ``FailOpen``."""
        self._ensure_started()
        b = self.boundary
        pend = prepared
        if pend.in_flight:
            pend.in_flight = False
            self.traffic.end()
        ctx = b.context(ctx) if ctx is not None else pend.ctx  # pend.ctx: checked by prepare_turn
        who = pend.ctx
        if (ctx.session_id, ctx.tenant, ctx.user) != (who.session_id, who.tenant, who.user):
            if ctx.user is not None or ctx.tenant != who.tenant:  # naming none is filled in; naming another is odd
                b.note("response", "named another tenant or user than its request; recorded as the request's")
            ctx = dataclasses.replace(ctx, session_id=who.session_id, tenant=who.tenant, user=who.user)
        sent = b.messages(messages) if messages is not None else pend.messages
        kept_tools = tool_list(tools) if tools is not None else pend.tools
        if latency_ms is not None:
            latency_ms = b.latency(latency_ms)
        if latency_ms is None:
            latency_ms = (time.monotonic() - pend.t0) * 1000.0
        if response is not None and not isinstance(response, dict):
            b.note("response", "not a dict; recorded as none")
            response = None
        sent = b.depth_bounded(sent, "messages")
        if response is not None:
            response = b.depth_bounded([response], "response")[0]
        if pend.ctx.kind == "side" and ctx.kind != "side":  # judged side at the request; the response's ctx is new
            ctx = dataclasses.replace(ctx, kind="side")
        turn = Turn(
            turn_id=ctx.request_id,
            session_id=ctx.session_id,
            tenant=ctx.tenant,
            kind=ctx.kind,
            messages=sent,
            response=response,
            tool_calls=b.tool_calls(response),
            model=ctx.model or pend.ctx.model,
            usage=b.usage(usage),
            latency_ms=round(latency_ms, 3),
            injected_skills=list(pend.block.names),
            skill_generation=pend.block.generation,
            error=error_text(error),
            host=ctx.host,
            user=ctx.user,
            tools=kept_tools,
            created_at=b.turn_time(pend.ctx.started_at),  # when it happened (a replay or an import says when)
        )
        self.store.append_turn(turn, skill_block=pend.block.text if pend.rendered else None)
        state = self.sessions.record(ctx, turn.turn_id, time.time())
        if self.events.wanted(TurnRecorded):
            self.events.publish(TurnRecorded(turn, state, pend.ctx))
        return turn

    def on_feedback(self, ctx: TurnContext, score: Any = None, text: str | None = None) -> None:
        """Explicit feedback from the host or user: thumbs up/down (bool, "up"/"down"), a number in
        [-1, 1], and/or a correction text (a text alone that corrects the answer scores -1). It applies
        to the turn ``ctx.request_id`` when that is a recorded turn, else to the session's latest turn.
        Recorded with source ``explicit``; one journal append, like the other hooks."""
        try:
            self._ensure_started()
            c = self.boundary.context(ctx, session=False)
            if text is not None and not isinstance(text, str):
                self.boundary.note("feedback text", "not text; dropped")
                text = None
            text = clean_text(text[:TEXT_MAX]) if text else None
            value = normalise_feedback(score if isinstance(score, (bool, int, float)) else _short(score), text)
            state, named, main = self.sessions.scored(c)
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
            self.boundary.fail("on_feedback", e)

    def _resolve_feedback(self, event: Feedback) -> None:
        """The turn a feedback scores, from the store: the turn it names when that is a turn of the session (any
        user's part of it, for an id that names no user), else the session's latest main turn; else it is dropped
        (a side turn is never scored for want of a main one)."""
        self.store.flush(5.0)
        sessions = [
            self.store.get_session(sid, tenant=event.tenant)
            for sid in self.sessions.stored_ids(event.session_id, event.tenant)
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

    def memory_section(self, ctx: TurnContext, messages: Sequence[Message], task: TurnTask | None = None) -> str:
        """The memory section for this turn (in-memory view only; "" for side turns, when off, and on any fault)."""
        try:
            text, ids = self.memory.section(ctx, messages, task)
            if ids:
                ctx.metadata["metaclaw_memories"] = ids
            return text
        except Exception:
            self.boundary.fail("memory.section")
            return ""


def _short(value: Any) -> Any:
    """A feedback score that is not a number: short text is parsed, anything else counts as none."""
    return value[:32] if isinstance(value, str) else None
