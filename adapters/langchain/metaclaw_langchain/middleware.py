"""``MetaClawMiddleware``: skills in, trajectories out, for ``langchain.agents.create_agent``.

::

    from langchain.agents import create_agent
    from metaclaw_langchain import MetaClawMiddleware

    agent = create_agent(model, tools, middleware=[MetaClawMiddleware()])
    agent.invoke({"messages": [...]}, config={"configurable": {"thread_id": "t-42"}})

What it does, per agent run (one ``invoke``/``ainvoke``/``stream``/``astream``):

- ``before_agent`` opens the run: it picks the session id (``config["metadata"]["session_id"]``, else
  ``config["configurable"]["thread_id"]``, else a fresh id for this run) and keeps it in a private state
  key, so that later hooks of the same run find it even when several runs share this object.
- ``wrap_model_call``/``awrap_model_call`` retrieve the skills for the conversation, append the block to
  the system message with ``request.override(system_message=...)``, and record the model call as the core
  saw it (OpenAI-format messages as sent, the assistant response with its ``tool_calls``, usage, latency).
- ``wrap_tool_call``/``awrap_tool_call`` count the tool calls and note the failed ones. A tool's result
  reaches the store as the ``{"role": "tool"}`` message of the next model call.
- ``after_agent`` ends the session with the outcome: ``success``, ``final_answer``, counts and any tool
  errors. An exception that escapes the model or a tool ends it at once with ``success: False`` and the
  error, because ``after_agent`` never runs for a failed run.

Sessions and threads: with a checkpointer, one ``thread_id`` spans many ``invoke`` calls. Each call is one
*episode*: ``after_agent`` ends the session with that call's outcome, the session-end listeners (reward,
evolution) get that call's turns, and the next call on the thread appends more turns to the same stored
session (its outcome is then the latest call's). Pass ``end_sessions=False`` to leave the ending to the
plugin's idle timeout instead. An agent nested inside another one's node or tool (same thread) never ends
the parent's session.

Put it first in ``middleware=[...]``: the first middleware is the outermost wrapper, so retries and error
handlers listed after it run inside it, and it records what finally happened.

Every hook fails open: a plugin error is logged and counted in ``plugin.status()["errors"]`` and the agent
run goes on exactly as without the middleware. The model's and the tools' own exceptions are re-raised
unchanged.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.agents.middleware.types import ModelRequest, OmitFromSchema
from langchain_core.messages import AIMessage, ToolMessage

from metaclaw_plugin.integration import InFlight, MetaClawPlugin, PreparedTurn, TurnContext, new_id

from . import own_calls
from ._common import (
    HOST,
    fail,
    is_interrupt,
    message_to_openai,
    model_name,
    openai_tools,
    plugin_handle,
    session_from_config,
    short_error,
    text_of,
    to_openai,
    usage_of,
    who_from_config,
    with_block,
)

STATE_KEY = "metaclaw"
MAX_TOOL_ERRORS = 20


class MetaClawState(AgentState):
    """Adds one private key (never in the agent's input or output) that links the hooks of one run."""

    metaclaw: NotRequired[Annotated[dict[str, Any] | None, OmitFromSchema(input=True, output=True)]]


@dataclass
class _Run:
    run_id: str
    session_id: str
    tenant: str | None
    user: str | None
    nested: bool
    started_at: float = field(default_factory=time.time)
    model_calls: int = 0
    tool_calls: int = 0
    tool_errors: list[dict[str, Any]] = field(default_factory=list)
    failed: dict[str, Any] | None = None


@dataclass
class _Prepared:
    request: ModelRequest
    turn: PreparedTurn
    plugin: MetaClawPlugin
    run: _Run | None


def _config() -> dict[str, Any] | None:
    try:
        from langgraph.config import get_config

        return get_config()  # type: ignore[return-value]
    except Exception:
        return None


def _ai_of(response: Any) -> AIMessage | None:
    if isinstance(response, AIMessage):
        return response
    inner = getattr(response, "model_response", None)  # ExtendedModelResponse
    if inner is not None:
        response = inner
    for m in getattr(response, "result", None) or []:
        if isinstance(m, AIMessage):
            return m
    return None


class MetaClawMiddleware(AgentMiddleware):
    """Inject learned skills into every model call of a ``create_agent`` agent and record its trajectory.

    Args:
        plugin: an existing :class:`metaclaw_plugin.MetaClawPlugin`. Default: one shared per process,
            configured from ``$METACLAW_CONFIG`` / ``$METACLAW_HOME/config.yaml`` / ``METACLAW_*``.
        tenant: tenant for runs whose config names none (``metadata.tenant`` or ``metaclaw_tenant``).
        end_sessions: end the session in ``after_agent`` (default). With ``False`` a session ends on the
            plugin's idle timeout or an explicit ``plugin.on_session_end``.
        outcome: ``fn(state) -> dict`` whose keys are merged over the default outcome (e.g. a task checker
            that sets ``success`` and ``feedback``). Its failures are ignored.
    """

    state_schema = MetaClawState

    def __init__(
        self,
        plugin: MetaClawPlugin | None = None,
        *,
        tenant: str | None = None,
        end_sessions: bool = True,
        outcome: Callable[[Mapping[str, Any]], Mapping[str, Any] | None] | None = None,
    ) -> None:
        super().__init__()
        self.tools = []
        self._ref = plugin_handle(plugin)
        self._tenant = tenant
        self._end_sessions = end_sessions
        self._outcome_fn = outcome
        # Runs between before_agent and after_agent (LangGraph's state carries only the run id, and no hook can
        # write state back from a model or tool call); runs that never end (interrupted, killed) expire.
        self._runs: InFlight[str, _Run] = InFlight()
        self._lock = threading.Lock()

    @property
    def plugin(self) -> MetaClawPlugin | None:
        """The plugin in use (built on first access when none was passed), or None if it cannot be built."""
        return self._ref.get()

    # ------------------------------------------------------------------------------------------------
    # Agent start / end
    # ------------------------------------------------------------------------------------------------
    def before_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        plugin = self._ref.get()
        if plugin is None:
            return None
        try:
            if not plugin.started:
                plugin.start()
            cfg = _config()
            tenant, user = who_from_config(cfg)
            info = getattr(runtime, "execution_info", None)
            nested = "|" in (getattr(info, "checkpoint_ns", "") or "")
            run = _Run(
                run_id=new_id(),
                session_id=session_from_config(cfg) or f"lc-{new_id()}",
                tenant=tenant or self._tenant,
                user=user,
                nested=nested,
            )
            self._runs.put(run.run_id, run)
            return {
                STATE_KEY: {
                    "run": run.run_id,
                    "session_id": run.session_id,
                    "tenant": run.tenant,
                    "user": run.user,
                    "nested": nested,
                }
            }
        except Exception:
            fail("before_agent", plugin)
            return None

    async def abefore_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self.before_agent(state, runtime)

    def after_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        plugin = self._ref.get()
        if plugin is None:
            return None
        try:
            meta = (state or {}).get(STATE_KEY) or {}
            run = self._runs.pop(str(meta["run"])) if meta.get("run") else None
            if run is None:
                run = self._fallback_run(meta)
            if run.nested or not self._end_sessions:
                return None
            messages = list((state or {}).get("messages") or [])
            last = messages[-1] if messages else None
            outcome: dict[str, Any] = {
                "success": True,
                "status": "completed",
                "final_answer": text_of(last) if last is not None else "",
                "model_calls": run.model_calls,
                "tool_calls": run.tool_calls,
                "duration_s": round(time.time() - run.started_at, 3),
            }
            if run.tool_errors:
                outcome["tool_errors"] = list(run.tool_errors)
            if run.failed:
                outcome["recovered_from"] = run.failed
            if self._outcome_fn is not None:
                try:
                    extra = self._outcome_fn(state)
                    if extra:
                        outcome.update(dict(extra))
                except Exception:
                    fail("outcome_fn", plugin)
            plugin.on_session_end(self._ctx(run), outcome, reason="after_agent")
        except Exception:
            fail("after_agent", plugin)
        return None

    async def aafter_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self.after_agent(state, runtime)

    # ------------------------------------------------------------------------------------------------
    # Model calls
    # ------------------------------------------------------------------------------------------------
    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        prep = self._prepare(request)
        try:
            response = handler(prep.request if prep else request)
        except BaseException as exc:
            if prep is not None:
                self._model_failed(prep, exc)
            raise
        if prep is not None:
            self._model_done(prep, response)
        return response

    async def awrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[Any]]) -> Any:
        prep = self._prepare(request)
        try:
            response = await handler(prep.request if prep else request)
        except BaseException as exc:
            if prep is not None:
                self._model_failed(prep, exc)
            raise
        if prep is not None:
            self._model_done(prep, response)
        return response

    def _prepare(self, request: ModelRequest) -> _Prepared | None:
        plugin = self._ref.get()
        if plugin is None or own_calls.is_plugin_call():
            return None
        try:
            own_calls.offer(plugin, request.model)
            run = self._run_of(request.state)
            assert run is not None  # create=True: a run is rebuilt when none is live
            ctx = self._ctx(run, model=model_name(request.model))
            system = request.system_message
            sent = to_openai(([system] if system is not None else []) + list(request.messages))
            turn = plugin.prepare_turn(ctx, sent, tools=openai_tools(request.tools))
            new_request = request
            if turn.block.text:
                new_request = request.override(system_message=with_block(system, turn.block.text))
        except Exception:
            fail("prepare_turn", plugin)
            return None
        return _Prepared(new_request, turn, plugin, run)

    def _model_done(self, prep: _Prepared, response: Any) -> None:
        try:
            ai = _ai_of(response)
            resp = message_to_openai(ai) if ai is not None else None
            prep.plugin.complete_turn(
                prep.turn,
                resp,
                usage=usage_of(ai),
                error=None if ai is not None else "no assistant message in the model response",
            )
            if prep.run is not None:
                with self._lock:
                    prep.run.model_calls += 1
        except Exception:
            fail("model_response", prep.plugin)

    def _model_failed(self, prep: _Prepared, exc: BaseException) -> None:
        try:
            prep.plugin.complete_turn(prep.turn, None, error=short_error(exc))
            if prep.run is not None:
                with self._lock:
                    prep.run.model_calls += 1
            self._run_failed(prep.plugin, prep.run, exc, stage="model")
        except Exception:
            fail("model_error", prep.plugin)

    # ------------------------------------------------------------------------------------------------
    # Tool calls
    # ------------------------------------------------------------------------------------------------
    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        t0 = time.monotonic()
        try:
            result = handler(request)
        except BaseException as exc:
            self._tool_failed(request, exc, t0)
            raise
        self._tool_done(request, result, t0)
        return result

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        t0 = time.monotonic()
        try:
            result = await handler(request)
        except BaseException as exc:
            self._tool_failed(request, exc, t0)
            raise
        self._tool_done(request, result, t0)
        return result

    def _tool_done(self, request: Any, result: Any, t0: float) -> None:
        plugin = self._ref.get()
        if plugin is None:
            return
        try:
            run = self._run_of(getattr(request, "state", None), create=False)
            if run is None:
                return
            error = None
            if isinstance(result, ToolMessage) and getattr(result, "status", None) == "error":
                error = text_of(result.content)[:500]
            with self._lock:
                run.tool_calls += 1
                if error is not None:
                    self._note_tool_error(run, request, error, t0)
        except Exception:
            fail("wrap_tool_call", plugin)

    def _tool_failed(self, request: Any, exc: BaseException, t0: float) -> None:
        plugin = self._ref.get()
        if plugin is None:
            return
        try:
            run = self._run_of(getattr(request, "state", None), create=False)
            if run is None or is_interrupt(exc):
                return
            with self._lock:
                run.tool_calls += 1
                self._note_tool_error(run, request, short_error(exc), t0)
            call = getattr(request, "tool_call", None) or {}
            self._run_failed(plugin, run, exc, stage="tool", tool=call.get("name"))
        except Exception:
            fail("tool_error", plugin)

    @staticmethod
    def _note_tool_error(run: _Run, request: Any, error: str, t0: float) -> None:
        if len(run.tool_errors) >= MAX_TOOL_ERRORS:
            return
        call = getattr(request, "tool_call", None) or {}
        run.tool_errors.append(
            {
                "tool": call.get("name"),
                "tool_call_id": call.get("id"),
                "error": error,
                "latency_ms": round((time.monotonic() - t0) * 1000.0, 3),
            }
        )

    # ------------------------------------------------------------------------------------------------
    # Internals
    # ------------------------------------------------------------------------------------------------
    def _run_failed(
        self, plugin: MetaClawPlugin, run: _Run | None, exc: BaseException, *, stage: str, tool: str | None = None
    ) -> None:
        """An exception escaped the model or a tool: the run is over, and after_agent will not run."""
        if run is None or is_interrupt(exc) or not isinstance(exc, Exception):
            return  # interrupts resume later; cancellation and exit are not the agent's outcome
        with self._lock:
            first = run.failed is None
            if first:
                run.failed = {"stage": stage, "error": short_error(exc), **({"tool": tool} if tool else {})}
        if not first or run.nested or not self._end_sessions:
            return
        outcome: dict[str, Any] = {
            "success": False,
            "status": "error",
            "error": short_error(exc),
            "stage": stage,
            "model_calls": run.model_calls,
            "tool_calls": run.tool_calls,
            "duration_s": round(time.time() - run.started_at, 3),
        }
        if tool:
            outcome["tool"] = tool
        if run.tool_errors:
            outcome["tool_errors"] = list(run.tool_errors)
        plugin.on_session_end(self._ctx(run), outcome, reason="error")

    def _run_of(self, state: Any, create: bool = True) -> _Run | None:
        meta = (state or {}).get(STATE_KEY) if isinstance(state, Mapping) else None
        rid = (meta or {}).get("run")
        if rid:
            run = self._runs.get(rid)
            if run is not None:
                return run
        return self._fallback_run(meta or {}) if create else None

    def _fallback_run(self, meta: Mapping[str, Any]) -> _Run:
        """No live run (before_agent failed, or the run expired): rebuild from state/config."""
        cfg = _config()
        tenant, user = who_from_config(cfg)
        return _Run(
            run_id=meta.get("run") or new_id(),
            session_id=meta.get("session_id") or session_from_config(cfg) or f"lc-{new_id()}",
            tenant=meta.get("tenant") or tenant or self._tenant,
            user=meta.get("user") or user,
            nested=bool(meta.get("nested")),
        )

    @staticmethod
    def _ctx(run: _Run, model: str | None = None) -> TurnContext:
        kw: dict[str, Any] = {}
        if run.tenant:
            kw["tenant"] = run.tenant
        return TurnContext(
            session_id=run.session_id,
            user=run.user,
            host=HOST,
            model=model,
            metadata={"langchain_run": run.run_id},
            **kw,
        )
