"""Shared plumbing for the LangChain adapter: session ids from a run's config, message conversion.

The plugin handle (lazy build with retry, the default instance) and the fail-open reporter come from
``metaclaw_plugin.integration``. Nothing here may raise into the host: every helper that can fail is called
inside a ``try`` by its caller, and the caller counts the failure on the plugin (``plugin.errors``) and goes on.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, SystemMessage, convert_to_openai_messages
from langchain_core.utils.function_calling import convert_to_openai_tool

from metaclaw_plugin.integration import FailOpen, Message, MetaClawPlugin, PluginHandle, append_block, session_id_from

log = logging.getLogger("metaclaw_langchain")

HOST = "langchain"
MAX_ANSWER_CHARS = 4000
MAX_ERROR_CHARS = 2000
# Tag that with_skills puts on its model calls, so that a MetaClawCallbackHandler on the same run
# does not record them a second time.
CAPTURED_TAG = "metaclaw:captured"

fail = FailOpen(log, "metaclaw_langchain", what="the run", prefix="langchain.")
"""``fail(where, plugin)`` in ``except Exception``: log, count ``plugin.errors["langchain.<where>"]``, never raise."""


def plugin_handle(plugin: MetaClawPlugin | None) -> PluginHandle:
    """The plugin given, else the process-wide default built on first use (not started: the hooks start it).

    Building lazily keeps ``MetaClawMiddleware()`` cheap and side-effect free; a config that fails to load is
    logged, the adapter is a pass-through meanwhile, and the build is retried every ``RETRY_PLUGIN_AFTER`` seconds.
    """
    return PluginHandle(plugin, start=False, host="LangChain", logger=log)


def short_error(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS] + "…"


def is_interrupt(exc: BaseException) -> bool:
    """LangGraph interrupts (human in the loop) travel as exceptions but are not failures."""
    return any(c.__name__ in ("GraphBubbleUp", "GraphInterrupt", "ParentCommand") for c in type(exc).__mro__)


def session_from_config(config: Mapping[str, Any] | None, explicit: Any = None) -> str | None:
    """``explicit`` (an adapter's ``session_id=``), then ``metadata.session_id``, ``configurable.session_id``,
    ``configurable.thread_id``, ``metadata.thread_id`` (the core's fallback chain; None when all are empty)."""
    if not config:
        return session_id_from(header=explicit)[0]
    meta = config.get("metadata") or {}
    conf = config.get("configurable") or {}
    return session_id_from(
        header=explicit,
        metadata=(meta.get("session_id"), conf.get("session_id"), conf.get("thread_id"), meta.get("thread_id")),
    )[0]


# LangGraph's server puts the authenticated caller in the first, where no client can set it: it wins over the ids a
# client may put in its config
USER_KEYS = ("langgraph_auth_user_id", "user_id", "user")


def who_from_config(config: Mapping[str, Any] | None) -> tuple[str | None, str | None]:
    """(tenant, user) from ``metadata`` or ``configurable`` (``tenant``/``metaclaw_tenant``;
    ``langgraph_auth_user_id``, else ``user_id``/``user``)."""
    if not config:
        return None, None
    meta = config.get("metadata") or {}
    conf = config.get("configurable") or {}

    def pick(*keys: str) -> str | None:
        for k in keys:
            for src in (meta, conf):
                v = src.get(k)
                if isinstance(v, (str, int)) and v != "":
                    return str(v)
        return None

    return pick("metaclaw_tenant", "tenant"), pick(*USER_KEYS)


def to_openai(messages: Iterable[BaseMessage | Mapping[str, Any]]) -> list[Message]:
    """LangChain messages to the core's neutral OpenAI-format dicts."""
    msgs = list(messages)
    if not msgs:
        return []
    out = convert_to_openai_messages(msgs)
    return out if isinstance(out, list) else [out]


def openai_tools(tools: Any) -> list[dict[str, Any]] | None:
    """Tools (LangChain tools, functions, or OpenAI-format dicts) as the OpenAI-format definitions that
    ``bind_tools`` sends to a model; None when there are none or one does not convert (the turn is still
    captured, without them)."""
    if not tools or not isinstance(tools, (list, tuple)):
        return None
    try:
        return [convert_to_openai_tool(t) for t in tools]
    except Exception:
        return None


def message_to_openai(msg: BaseMessage) -> Message:
    out = convert_to_openai_messages(msg)
    if isinstance(out, list):  # pragma: no cover - a single message converts to a dict
        out = out[0] if out else {"role": "assistant", "content": ""}
    return out


def usage_of(msg: Any) -> dict[str, Any] | None:
    """OpenAI-style usage from an AIMessage's ``usage_metadata``."""
    um = getattr(msg, "usage_metadata", None)
    if not um:
        return None
    try:
        return {
            "prompt_tokens": int(um.get("input_tokens") or 0),
            "completion_tokens": int(um.get("output_tokens") or 0),
            "total_tokens": int(um.get("total_tokens") or 0),
        }
    except Exception:
        return None


def model_name(model: Any) -> str | None:
    for attr in ("model_name", "model", "model_id", "deployment_name"):
        v = getattr(model, attr, None)
        if isinstance(v, str) and v:
            return v
    bound = getattr(model, "bound", None)  # RunnableBinding from bind_tools
    if bound is not None and bound is not model:
        return model_name(bound)
    try:
        return str(model._llm_type)
    except Exception:
        return type(model).__name__


def text_of(value: Any) -> str:
    """The readable text of a message, a chain output or anything else (for outcomes)."""
    if isinstance(value, BaseMessage):
        text = str(value.text)
    elif isinstance(value, str):
        text = value
    elif isinstance(value, Mapping) and isinstance(value.get("messages"), Sequence) and value["messages"]:
        return text_of(value["messages"][-1])
    elif isinstance(value, Mapping) and "output" in value:
        return text_of(value["output"])
    else:
        try:
            text = json.dumps(value, default=str, ensure_ascii=False)
        except Exception:
            text = str(value)
    return text if len(text) <= MAX_ANSWER_CHARS else text[:MAX_ANSWER_CHARS] + "…"


def with_block(system: SystemMessage | None, block: str) -> SystemMessage:
    """A new system message: the block appended to the existing one, or the block alone."""
    if system is None:
        return SystemMessage(content=block)
    return SystemMessage(
        content=append_block(system.content, block),
        additional_kwargs=dict(system.additional_kwargs),
        id=system.id,
        name=system.name,
    )


def inject_messages(messages: Sequence[BaseMessage], block: str) -> list[BaseMessage]:
    """Append the block to the leading system message, or put a new one first."""
    out = list(messages)
    if not block:
        return out
    if out and isinstance(out[0], SystemMessage):
        out[0] = with_block(out[0], block)
    else:
        out.insert(0, SystemMessage(content=block))
    return out
