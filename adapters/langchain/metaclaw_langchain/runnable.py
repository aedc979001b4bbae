"""``with_skills(chat_model)``: skill injection for LCEL chains.

::

    chain = prompt | with_skills(ChatOpenAI(model="gpt-5.5")) | StrOutputParser()
    chain.invoke({"question": "..."}, config={"metadata": {"session_id": "s-1"}})

The wrapper takes the model's input (a string, a list of messages or a prompt value), appends the skill
block to the leading system message (or adds one), calls the model, and records the call. It supports
``invoke``, ``ainvoke``, ``stream``, ``astream`` and ``batch``; ``bind_tools(...)`` and ``bind(...)`` return
a wrapped binding, so ``with_skills(model).bind_tools(tools)`` keeps injecting.

Session id, in order: ``session_id=`` given here, ``config["metadata"]["session_id"]``,
``config["configurable"]["session_id"]``/``["thread_id"]``. With none, the call is a one-turn session
that ends right after it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage, convert_to_messages
from langchain_core.prompt_values import PromptValue
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config

from metaclaw_plugin.integration import MetaClawPlugin, PluginHandle, PreparedTurn, TurnContext, new_id

from . import own_calls
from ._common import (
    CAPTURED_TAG,
    HOST,
    fail,
    inject_messages,
    message_to_openai,
    model_name,
    openai_tools,
    plugin_handle,
    session_from_config,
    short_error,
    to_openai,
    usage_of,
    who_from_config,
)


def _as_messages(value: Any) -> list[BaseMessage]:
    if isinstance(value, PromptValue):
        return value.to_messages()
    if isinstance(value, str):
        return [HumanMessage(content=value)]
    if isinstance(value, BaseMessage):
        return [value]
    return list(convert_to_messages(value))


class _Call:
    """One wrapped model call: the prepared turn (context, messages as sent, timing)."""

    __slots__ = ("one_shot", "plugin", "turn")

    def __init__(self, turn: PreparedTurn, plugin: MetaClawPlugin, one_shot: bool):
        self.turn = turn
        self.plugin = plugin
        self.one_shot = one_shot


class SkillInjectingRunnable(Runnable[Any, BaseMessage]):
    """A chat model (or any message-in, message-out Runnable) with skills injected. See :func:`with_skills`."""

    def __init__(
        self,
        bound: Runnable[Any, Any],
        plugin: MetaClawPlugin | None = None,
        *,
        session_id: str | None = None,
        tenant: str | None = None,
        capture: bool = True,
        _ref: PluginHandle | None = None,
    ) -> None:
        self.bound = bound
        self._ref = _ref or plugin_handle(plugin)
        self._session_id = session_id
        self._tenant = tenant
        self._capture = capture

    # Runnable plumbing ---------------------------------------------------------------------------
    @property
    def InputType(self) -> Any:
        return self.bound.InputType

    @property
    def OutputType(self) -> Any:
        return self.bound.OutputType

    def get_name(self, suffix: str | None = None, *, name: str | None = None) -> str:
        return name or f"WithSkills[{self.bound.get_name()}]" + (suffix or "")

    def _rewrap(self, bound: Runnable[Any, Any]) -> SkillInjectingRunnable:
        return SkillInjectingRunnable(
            bound, session_id=self._session_id, tenant=self._tenant, capture=self._capture, _ref=self._ref
        )

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> SkillInjectingRunnable:
        return self._rewrap(self.bound.bind_tools(tools, **kwargs))  # type: ignore[attr-defined]

    def bind(self, **kwargs: Any) -> SkillInjectingRunnable:
        return self._rewrap(self.bound.bind(**kwargs))

    def with_structured_output(self, *args: Any, **kwargs: Any) -> Runnable[Any, Any]:
        return self._rewrap(self.bound.with_structured_output(*args, **kwargs))  # type: ignore[attr-defined]

    # Injection and capture ----------------------------------------------------------------------
    def _prepare(self, value: Any, config: RunnableConfig | None) -> tuple[Any, RunnableConfig, _Call | None]:
        cfg = ensure_config(config)
        plugin = self._ref.get()
        if plugin is None or own_calls.is_plugin_call(cfg.get("tags"), cfg.get("metadata")):
            return value, cfg, None
        try:
            own_calls.offer(plugin, self.bound)
            messages = _as_messages(value)
            sid = session_from_config(cfg, self._session_id)
            tenant, user = who_from_config(cfg)
            kw: dict[str, Any] = {}
            if tenant or self._tenant:
                kw["tenant"] = tenant or self._tenant
            ctx = TurnContext(
                session_id=sid or f"lc-{new_id()}", user=user, host=HOST, model=model_name(self.bound), **kw
            )
            tools = openai_tools((getattr(self.bound, "kwargs", None) or {}).get("tools"))  # bind_tools
            turn = plugin.prepare_turn(ctx, to_openai(messages), tools=tools, record=self._capture)
            out: Any = inject_messages(messages, turn.block.text) if turn.block.text else value
        except Exception:
            fail("with_skills", plugin)
            return value, cfg, None
        if not self._capture:
            return out, cfg, None
        cfg = {**cfg, "tags": [*(cfg.get("tags") or []), CAPTURED_TAG]}
        return out, cfg, _Call(turn, plugin, one_shot=sid is None)

    def _done(self, call: _Call | None, result: Any, error: BaseException | None = None) -> None:
        if call is None:
            return
        try:
            if error is not None:
                call.plugin.complete_turn(call.turn, None, error=short_error(error))
            elif isinstance(result, BaseMessage):
                call.plugin.complete_turn(call.turn, message_to_openai(_plain(result)), usage=usage_of(result))
            else:
                call.plugin.complete_turn(call.turn, {"role": "assistant", "content": str(result)})
            if call.one_shot:
                outcome = {"success": error is None, "status": "completed" if error is None else "error"}
                if error is not None:
                    outcome["error"] = short_error(error)
                call.plugin.on_session_end(call.turn.ctx, outcome, reason="single_call")
        except Exception:
            fail("with_skills.response", call.plugin)

    # Runnable API ------------------------------------------------------------------------------
    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> BaseMessage:
        value, cfg, call = self._prepare(input, config)
        try:
            result = self.bound.invoke(value, cfg, **kwargs)
        except BaseException as exc:
            self._done(call, None, exc)
            raise
        self._done(call, result)
        return result

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> BaseMessage:
        value, cfg, call = self._prepare(input, config)
        try:
            result = await self.bound.ainvoke(value, cfg, **kwargs)
        except BaseException as exc:
            self._done(call, None, exc)
            raise
        self._done(call, result)
        return result

    def stream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[BaseMessage]:
        value, cfg, call = self._prepare(input, config)
        acc: Any = None
        try:
            for chunk in self.bound.stream(value, cfg, **kwargs):
                acc = _add(acc, chunk)
                yield chunk
        except BaseException as exc:
            self._done(call, None, exc)
            raise
        self._done(call, acc)

    async def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[BaseMessage]:
        value, cfg, call = self._prepare(input, config)
        acc: Any = None
        try:
            async for chunk in self.bound.astream(value, cfg, **kwargs):
                acc = _add(acc, chunk)
                yield chunk
        except BaseException as exc:
            self._done(call, None, exc)
            raise
        self._done(call, acc)


def _add(acc: Any, chunk: Any) -> Any:
    if acc is None:
        return chunk
    try:
        return acc + chunk
    except Exception:
        return chunk


def _plain(msg: BaseMessage) -> BaseMessage:
    """An assembled stream is an AIMessageChunk; store it as the AIMessage it stands for."""
    if isinstance(msg, AIMessageChunk):
        return AIMessage(
            content=msg.content,
            tool_calls=msg.tool_calls,
            additional_kwargs=msg.additional_kwargs,
            response_metadata=msg.response_metadata,
            usage_metadata=msg.usage_metadata,
            id=msg.id,
        )
    return msg


def with_skills(
    chat_model: Runnable[Any, Any],
    plugin: MetaClawPlugin | None = None,
    *,
    session_id: str | None = None,
    tenant: str | None = None,
    capture: bool = True,
) -> SkillInjectingRunnable:
    """Wrap a chat model so that every call gets the relevant skills in its system message.

    The LCEL counterpart of :class:`MetaClawMiddleware` (callbacks cannot inject). It records each call
    too (``capture=False`` to only inject); a :class:`MetaClawCallbackHandler` on the same run skips the
    calls it recorded. Fails open: any plugin error leaves the input unchanged.
    """
    return SkillInjectingRunnable(chat_model, plugin, session_id=session_id, tenant=tenant, capture=capture)
