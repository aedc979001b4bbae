"""The agent's chat model for the plugin's own calls (``learning.model: host``), and telling those calls apart.

The middleware and ``with_skills`` see the chat model object itself; the first one seen is offered to the core,
which calls it (``invoke``, no callbacks of the run, the plugin's tag and mark in the config) for the evolver, the
judge, memory extraction and skill review. The callback handler sees no model object, so with the handler alone
the host's model is not known (``status`` says so). Every part of the adapter passes the plugin's own calls
through, unrecorded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, convert_to_messages

from metaclaw_plugin import MetaClawPlugin
from metaclaw_plugin.integration import PLUGIN_CALL_TAG, HostModel, HostReply, in_plugin_call

from ._common import model_name

MARK = "metaclaw_internal"


def is_plugin_call(tags: Sequence[str] | None = None, metadata: Mapping[str, Any] | None = None) -> bool:
    """One of the plugin's own calls: made inside the core's mark (this thread) or tagged as one."""
    if in_plugin_call():
        return True
    return bool(tags and PLUGIN_CALL_TAG in tags) or bool(isinstance(metadata, Mapping) and metadata.get(MARK))


def chat_model(model: Any) -> HostModel:
    """``model.invoke`` on the plugin's messages, with none of the run's callbacks."""

    def call(messages: Sequence[dict[str, Any]], temperature: float, max_tokens: int, purpose: str) -> HostReply:
        out = model.invoke(
            convert_to_messages([dict(m) for m in messages]),
            config={"callbacks": [], "tags": [PLUGIN_CALL_TAG], "metadata": {MARK: True, "purpose": purpose}},
        )
        text = str(out.text) if isinstance(out, BaseMessage) else str(out)
        usage = getattr(out, "usage_metadata", None) or {}
        return HostReply(text, int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0))

    return HostModel(model_name(model) or type(model).__name__, "the LangChain agent's chat model", call)


def offer(plugin: MetaClawPlugin, model: Any) -> None:
    """Offer the agent's chat model, once (the first one seen stays)."""
    if model is not None and plugin.host_models.wanted() and plugin.settings.learning.model == "host":
        plugin.host_models.offer(chat_model(model))
