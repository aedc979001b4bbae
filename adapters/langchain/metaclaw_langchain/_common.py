"""Shared plumbing for the LangChain adapter: the plugin reference, session ids, message conversion.

Nothing here may raise into the host: every helper that can fail is called inside a ``try`` by its
caller, and the caller counts the failure on the plugin (``plugin.errors``) and goes on.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from typing import Any, Iterable, Mapping, Sequence

from langchain_core.messages import BaseMessage, SystemMessage, convert_to_openai_messages

from metaclaw_plugin import MetaClawPlugin
from metaclaw_plugin.types import Message

log = logging.getLogger("metaclaw_langchain")

HOST = "langchain"
MAX_ANSWER_CHARS = 4000
MAX_ERROR_CHARS = 2000
# Tag that with_skills puts on its model calls, so that a MetaClawCallbackHandler on the same run
# does not record them a second time.
CAPTURED_TAG = "metaclaw:captured"

_default_lock = threading.Lock()
_defaults: dict[tuple[str | None, str | None], MetaClawPlugin] = {}


def default_plugin() -> MetaClawPlugin:
    """One plugin per process and config source, shared by every no-argument adapter object.

    Two plugins on the same home would be two writers of the same journal and database, so
    ``MetaClawMiddleware()`` and ``MetaClawCallbackHandler()`` built without a plugin share this one.
    """
    key = (os.environ.get("METACLAW_CONFIG"), os.environ.get("METACLAW_HOME"))
    with _default_lock:
        plugin = _defaults.get(key)
        if plugin is None:
            plugin = _defaults[key] = MetaClawPlugin()
        return plugin


class PluginRef:
    """An explicit plugin, or the default one built on first use.

    Building lazily keeps ``MetaClawMiddleware()`` cheap and side-effect free at import time; a
    config that fails to load is logged once and the adapter becomes a pass-through.
    """

    def __init__(self, plugin: MetaClawPlugin | None):
        self._plugin = plugin
        self._failed = False
        self._lock = threading.Lock()

    def get(self) -> MetaClawPlugin | None:
        p = self._plugin
        if p is not None:
            return p
        if self._failed:
            return None
        with self._lock:
            if self._plugin is None and not self._failed:
                try:
                    self._plugin = default_plugin()
                except Exception:
                    self._failed = True
                    log.exception("metaclaw: could not build the default plugin; LangChain runs go on without it")
            return self._plugin


def fail(plugin: MetaClawPlugin | None, where: str) -> None:
    """Log and count an adapter failure; never raises."""
    try:
        log.exception("metaclaw langchain %s failed; the run continues unchanged", where)
        if plugin is not None:
            plugin.errors[f"langchain.{where}"] += 1
    except Exception:  # pragma: no cover - logging itself broke
        pass


def short_error(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS] + "…"


def is_interrupt(exc: BaseException) -> bool:
    """LangGraph interrupts (human in the loop) travel as exceptions but are not failures."""
    return any(c.__name__ in ("GraphBubbleUp", "GraphInterrupt", "ParentCommand") for c in type(exc).__mro__)


def session_from_config(config: Mapping[str, Any] | None) -> str | None:
    """``metadata.session_id``, then ``configurable.thread_id`` (or ``configurable.session_id``)."""
    if not config:
        return None
    meta = config.get("metadata") or {}
    conf = config.get("configurable") or {}
    for v in (meta.get("session_id"), conf.get("session_id"), conf.get("thread_id"), meta.get("thread_id")):
        if v not in (None, ""):
            return str(v)
    return None


def who_from_config(config: Mapping[str, Any] | None) -> tuple[str | None, str | None]:
    """(tenant, user) from ``metadata`` or ``configurable`` (``tenant``/``metaclaw_tenant``, ``user_id``/``user``)."""
    if not config:
        return None, None
    meta = config.get("metadata") or {}
    conf = config.get("configurable") or {}

    def pick(*keys: str) -> str | None:
        for src in (meta, conf):
            for k in keys:
                v = src.get(k)
                if isinstance(v, (str, int)) and v != "":
                    return str(v)
        return None

    return pick("metaclaw_tenant", "tenant"), pick("user_id", "user")


def to_openai(messages: Iterable[BaseMessage | Mapping[str, Any]]) -> list[Message]:
    """LangChain messages to the core's neutral OpenAI-format dicts."""
    msgs = list(messages)
    if not msgs:
        return []
    out = convert_to_openai_messages(msgs)
    return out if isinstance(out, list) else [out]


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
    content = system.content
    if isinstance(content, list):
        new: Any = [*content, {"type": "text", "text": block}]
    elif isinstance(content, str) and content:
        new = f"{content}\n\n{block}"
    else:
        new = block
    return SystemMessage(content=new, additional_kwargs=dict(system.additional_kwargs), id=system.id,
                         name=system.name)


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
