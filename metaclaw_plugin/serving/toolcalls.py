"""Tool calls in a policy's text: the Hermes/Qwen ``<tool_call>{json}</tool_call>`` format, to OpenAI ``tool_calls``.

Instruct models trained with tools (Qwen2.5/3, Hermes, SmolLM2 with a tool template) write a call as a JSON
object ``{"name": ..., "arguments": {...}}`` between ``<tool_call>`` tags; their chat templates render the
``tools`` of a request into the prompt (:mod:`metaclaw_plugin.training.chat` renders them, or writes them in this
format for a template that does not). The served policy parses that text back into the OpenAI wire format that
hosts expect. A block that is not valid JSON with a string ``name`` stays in the text: it was not a call.
"""

from __future__ import annotations

import json
import re
import secrets
from typing import Any

from ..training.chat import CLOSE, OPEN

_BLOCK = re.compile(re.escape(OPEN) + r"\s*(.*?)\s*(?:" + re.escape(CLOSE) + r"|$)", re.DOTALL)


def _call(obj: Any) -> dict[str, Any] | None:
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str) or not obj["name"]:
        return None
    args = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(args, str):
        arguments = args
    else:
        arguments = json.dumps(args if args is not None else {}, ensure_ascii=False)
    return {
        "id": "call_" + secrets.token_hex(12),
        "type": "function",
        "function": {"name": obj["name"], "arguments": arguments},
    }


def parse_tool_calls(text: str) -> tuple[str, list[dict[str, Any]]]:
    """``(content, tool_calls)``: the text with every well-formed call block removed, and the calls in order.

    An unterminated last block (the model ran out of tokens) counts when its JSON is complete.
    """
    if OPEN not in text:
        return text, []
    calls: list[dict[str, Any]] = []
    kept: list[str] = []
    pos = 0
    for m in _BLOCK.finditer(text):
        try:
            call = _call(json.loads(m.group(1)))
        except json.JSONDecodeError:
            call = None
        if call is None:
            continue
        kept.append(text[pos : m.start()])
        pos = m.end()
        calls.append(call)
    kept.append(text[pos:])
    return "".join(kept).strip() if calls else text, calls


def safe_prefix(text: str) -> int:
    """How much of a growing ``text`` may be streamed as content now: everything before a ``<tool_call>`` tag,
    holding back a tail that could be the start of one."""
    i = text.find(OPEN)
    if i >= 0:
        return i
    for k in range(min(len(OPEN) - 1, len(text)), 0, -1):
        if text.endswith(OPEN[:k]):
            return len(text) - k
    return len(text)
