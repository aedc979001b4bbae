"""``MetaClawCallbackHandler``: capture-only, for chains and agents that cannot take middleware.

::

    handler = MetaClawCallbackHandler()
    chain.invoke(inputs, config={"callbacks": [handler], "metadata": {"session_id": "s-1"}})

It **cannot inject skills**: LangChain callbacks see a run's inputs but cannot change them, and their
return values are ignored. To inject in LCEL, wrap the chat model with
:func:`metaclaw_langchain.with_skills`; for ``create_agent``, use :class:`MetaClawMiddleware`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from metaclaw_plugin.integration import MetaClawPlugin, PreparedTurn, TurnContext, session_id_from

from . import own_calls
from ._common import (
    CAPTURED_TAG,
    HOST,
    USER_KEYS,
    fail,
    is_interrupt,
    message_to_openai,
    openai_tools,
    plugin_handle,
    short_error,
    text_of,
    to_openai,
    usage_of,
)

MAX_TRACKED_RUNS = 50_000
MAX_OPEN_ROOTS = 10_000
MAX_TOOL_ERRORS = 20


@dataclass
class _Root:
    """The top run we saw (a chain, an agent graph, or a bare model call): one session episode."""

    run_id: UUID
    session_id: str
    tenant: str | None
    user: str | None
    started_at: float = field(default_factory=time.time)
    members: set[UUID] = field(default_factory=set)
    model_calls: int = 0
    tool_calls: int = 0
    tool_errors: list[dict[str, Any]] = field(default_factory=list)
    tools_open: dict[UUID, str] = field(default_factory=dict)


@dataclass
class _ModelRun:
    turns: list[PreparedTurn]


class MetaClawCallbackHandler(BaseCallbackHandler):
    """Record model calls, tool calls and the run's outcome through LangChain callbacks (capture only).

    It cannot inject: callbacks cannot change a run's inputs. Use :func:`with_skills` (LCEL) or
    :class:`MetaClawMiddleware` (``create_agent``) to inject skills.

    Linking: every run is attached to its top-most ancestor that this handler saw (``run_id`` /
    ``parent_run_id``). That root run is one session episode; its session id is, in order, the
    ``session_id`` given here, ``metadata.session_id``, ``metadata.thread_id`` (LangGraph copies
    ``configurable.thread_id`` there), else the root's ``run_id``. When the root run ends (chain end or
    error, or a bare model call's end), the session ends with the outcome (``success``,
    ``final_answer`` or ``error``, counts, tool errors); pass ``end_sessions=False`` to leave that to the
    plugin's idle timeout. LangGraph interrupts do not end the session.

    Model calls made through :func:`with_skills` are already recorded by it and are skipped here.

    One class serves sync and async runs: it runs inline (``run_inline = True``) and every hook is a
    cheap in-memory call, so no async twin is needed. Every hook fails open.
    """

    run_inline = True
    raise_error = False

    def __init__(
        self,
        plugin: MetaClawPlugin | None = None,
        *,
        session_id: str | None = None,
        tenant: str | None = None,
        user: str | None = None,
        end_sessions: bool = True,
    ) -> None:
        super().__init__()
        self._ref = plugin_handle(plugin)
        self._session_id = session_id
        self._tenant = tenant
        self._user = user
        self._end_sessions = end_sessions
        self._lock = threading.Lock()
        self._root_of: dict[UUID, UUID] = {}
        self._roots: dict[UUID, _Root] = {}
        self._models: dict[UUID, _ModelRun] = {}

    @property
    def plugin(self) -> MetaClawPlugin | None:
        return self._ref.get()

    # ------------------------------------------------------------------------------------------------
    # Linking
    # ------------------------------------------------------------------------------------------------
    def _link(self, run_id: UUID, parent_run_id: UUID | None, metadata: dict[str, Any] | None) -> _Root:
        with self._lock:
            root_id = self._root_of.get(parent_run_id) if parent_run_id is not None else None
            root = self._roots.get(root_id) if root_id is not None else None
            if root is None:
                meta = metadata or {}
                sid = (
                    session_id_from(header=self._session_id, metadata=(meta.get("session_id"), meta.get("thread_id")))[
                        0
                    ]
                    or f"lc-{run_id}"
                )
                root = _Root(
                    run_id=run_id,
                    session_id=sid,
                    tenant=self._tenant or _str(meta.get("metaclaw_tenant")) or _str(meta.get("tenant")),
                    user=self._user or next((u for u in map(_str, (meta.get(k) for k in USER_KEYS)) if u), None),
                )
                self._roots[run_id] = root
                if len(self._root_of) > MAX_TRACKED_RUNS or len(self._roots) > MAX_OPEN_ROOTS:
                    self._forget_oldest()
            self._root_of[run_id] = root.run_id
            root.members.add(run_id)
            return root

    def _forget_oldest(self) -> None:
        """Roots that never ended (interrupted and never resumed, killed): drop the oldest tenth. Lock held."""
        for rid in list(self._roots)[: max(1, len(self._roots) // 10)]:
            root = self._roots.pop(rid)
            for m in root.members:
                self._root_of.pop(m, None)
                self._models.pop(m, None)
        for k in list(self._root_of)[: max(0, len(self._root_of) - MAX_TRACKED_RUNS)]:
            self._root_of.pop(k, None)

    def _root(self, run_id: UUID) -> _Root | None:
        with self._lock:
            rid = self._root_of.get(run_id)
            return self._roots.get(rid) if rid is not None else None

    def _ctx(self, root: _Root, model: str | None, request_id: str) -> TurnContext:
        kw: dict[str, Any] = {"tenant": root.tenant} if root.tenant else {}
        return TurnContext(
            session_id=root.session_id,
            user=root.user,
            host=HOST,
            model=model,
            request_id=request_id,
            metadata={"langchain_root_run": str(root.run_id)},
            **kw,
        )

    # ------------------------------------------------------------------------------------------------
    # Chains (agents are chains too)
    # ------------------------------------------------------------------------------------------------
    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            self._link(run_id, parent_run_id, metadata)
        except Exception:
            fail("on_chain_start", self._ref.get())

    def on_chain_end(self, outputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        try:
            self._maybe_end(run_id, outputs=outputs)
        except Exception:
            fail("on_chain_end", self._ref.get())

    def on_chain_error(
        self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        try:
            self._maybe_end(run_id, error=error)
        except Exception:
            fail("on_chain_error", self._ref.get())

    # ------------------------------------------------------------------------------------------------
    # Model calls
    # ------------------------------------------------------------------------------------------------
    def on_chat_model_start(
        self,
        serialized: dict[str, Any] | None,
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self._model_start(run_id, parent_run_id, tags, metadata, messages, kwargs)

    def on_llm_start(
        self,
        serialized: dict[str, Any] | None,
        prompts: list[str],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self._model_start(run_id, parent_run_id, tags, metadata, [[HumanMessage(p)] for p in prompts], kwargs)

    def _model_start(
        self,
        run_id: UUID,
        parent_run_id: UUID | None,
        tags: list[str] | None,
        metadata: dict[str, Any] | None,
        batches: list[list[BaseMessage]],
        kwargs: dict[str, Any],
    ) -> None:
        plugin = self._ref.get()
        if plugin is None or own_calls.is_plugin_call(tags, metadata):
            return
        try:
            root = self._link(run_id, parent_run_id, metadata)
            if tags and CAPTURED_TAG in tags:
                return  # with_skills records this call itself
            model = _model_of(metadata, kwargs)
            params = kwargs.get("invocation_params")
            tools = openai_tools(params.get("tools")) if isinstance(params, dict) else None
            turns = []
            for i, msgs in enumerate(batches):
                ctx = self._ctx(root, model, str(run_id) if len(batches) == 1 else f"{run_id}:{i}")
                turns.append(plugin.prepare_turn(ctx, to_openai(msgs), tools=tools, inject=False))  # capture only
            with self._lock:
                self._models[run_id] = _ModelRun(turns)
        except Exception:
            fail("on_chat_model_start", plugin)

    def on_llm_end(self, response: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        plugin = self._ref.get()
        if plugin is None:
            return
        try:
            mr = self._pop_model_run(run_id)
            if mr is not None:
                gens = getattr(response, "generations", None) or []
                for i, turn in enumerate(mr.turns):
                    gen = gens[i][0] if i < len(gens) and gens[i] else None
                    msg = getattr(gen, "message", None)
                    if msg is None and gen is not None:
                        msg = AIMessage(content=getattr(gen, "text", "") or "")
                    if isinstance(msg, BaseMessage):
                        plugin.complete_turn(turn, message_to_openai(msg), usage=usage_of(msg))
                    else:
                        plugin.complete_turn(turn, None, error="no generation in the model result")
                self._count_model_calls(run_id, mr)
            self._maybe_end(run_id, outputs=_first_message(response))
        except Exception:
            fail("on_llm_end", plugin)

    def on_llm_error(
        self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        plugin = self._ref.get()
        if plugin is None:
            return
        try:
            mr = self._pop_model_run(run_id)
            if mr is not None:
                for turn in mr.turns:
                    plugin.complete_turn(turn, None, error=short_error(error))
                self._count_model_calls(run_id, mr)
            self._maybe_end(run_id, error=error)
        except Exception:
            fail("on_llm_error", plugin)

    def _pop_model_run(self, run_id: UUID) -> _ModelRun | None:
        with self._lock:
            return self._models.pop(run_id, None)

    def _count_model_calls(self, run_id: UUID, mr: _ModelRun) -> None:
        root = self._root(run_id)
        if root is not None:
            with self._lock:
                root.model_calls += len(mr.turns)

    # ------------------------------------------------------------------------------------------------
    # Tools
    # ------------------------------------------------------------------------------------------------
    def on_tool_start(
        self,
        serialized: dict[str, Any] | None,
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            root = self._link(run_id, parent_run_id, metadata)
            name = (serialized or {}).get("name") or kwargs.get("name") or "tool"
            with self._lock:
                root.tool_calls += 1
                root.tools_open[run_id] = str(name)
        except Exception:
            fail("on_tool_start", self._ref.get())

    def on_tool_end(self, output: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        try:
            root = self._root(run_id)
            if root is not None:
                with self._lock:
                    name = root.tools_open.pop(run_id, None)
                    if isinstance(output, ToolMessage) and getattr(output, "status", None) == "error":
                        self._note_tool_error(root, name, output.tool_call_id, text_of(output.content)[:500])
            self._maybe_end(run_id, outputs=output)
        except Exception:
            fail("on_tool_end", self._ref.get())

    def on_tool_error(
        self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        try:
            root = self._root(run_id)
            if root is not None and not is_interrupt(error):
                with self._lock:
                    name = root.tools_open.pop(run_id, None)
                    self._note_tool_error(root, name, None, short_error(error))
            self._maybe_end(run_id, error=error)
        except Exception:
            fail("on_tool_error", self._ref.get())

    @staticmethod
    def _note_tool_error(root: _Root, name: str | None, call_id: str | None, error: str) -> None:
        if len(root.tool_errors) < MAX_TOOL_ERRORS:
            root.tool_errors.append({"tool": name, "tool_call_id": call_id, "error": error})

    # ------------------------------------------------------------------------------------------------
    # Ending
    # ------------------------------------------------------------------------------------------------
    def _maybe_end(self, run_id: UUID, *, outputs: Any = None, error: BaseException | None = None) -> None:
        """If ``run_id`` is a root, forget its runs and end its session with the outcome."""
        with self._lock:
            root = self._roots.get(run_id)
            if root is None:
                return
            if error is not None and is_interrupt(error):
                return  # resumed later under a new root; the session stays open
            del self._roots[run_id]
            for m in root.members:
                self._root_of.pop(m, None)
                self._models.pop(m, None)
        if not self._end_sessions:
            return
        plugin = self._ref.get()
        if plugin is None:
            return
        outcome: dict[str, Any] = {
            "success": error is None,
            "status": "completed" if error is None else "error",
            "model_calls": root.model_calls,
            "tool_calls": root.tool_calls,
            "duration_s": round(time.time() - root.started_at, 3),
        }
        if error is None:
            outcome["final_answer"] = text_of(outputs) if outputs is not None else ""
        else:
            outcome["error"] = short_error(error)
        if root.tool_errors:
            outcome["tool_errors"] = list(root.tool_errors)
        kw: dict[str, Any] = {"tenant": root.tenant} if root.tenant else {}
        ctx = TurnContext(session_id=root.session_id, user=root.user, host=HOST, **kw)
        plugin.on_session_end(ctx, outcome, reason="chain_end" if error is None else "error")


def _str(v: Any) -> str | None:
    return str(v) if isinstance(v, (str, int)) and v != "" else None


def _model_of(metadata: dict[str, Any] | None, kwargs: dict[str, Any]) -> str | None:
    meta = metadata or {}
    inv = kwargs.get("invocation_params") or {}
    for v in (meta.get("ls_model_name"), inv.get("model"), inv.get("model_name"), inv.get("_type")):
        if isinstance(v, str) and v:
            return v
    return None


def _first_message(response: Any) -> Any:
    try:
        gen = response.generations[0][0]
        return getattr(gen, "message", None) or gen.text
    except Exception:
        return None
