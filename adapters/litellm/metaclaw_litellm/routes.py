"""The three request/response formats LiteLLM serves, to and from the core's neutral (OpenAI chat) messages.

* ``chat``: ``/v1/chat/completions`` (``completion``/``acompletion``): already neutral.
* ``messages``: Anthropic ``/v1/messages`` (``anthropic_messages``): the system prompt in ``system`` (a string or
  a list of text blocks), content as blocks (``text``, ``tool_use``, ``tool_result``, images...).
* ``responses``: OpenAI ``/v1/responses`` (``responses``/``aresponses``): the system prompt in ``instructions``,
  the conversation in ``input`` (a string, or items: messages, ``function_call``, ``function_call_output``...).

Each route says how to read its request as neutral messages and tools, where the skill block goes (the route's
own system field), whether the block is already there, and how to read its reply (text and tool calls) and
usage. Pure functions: no LiteLLM import, no I/O, no state.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from metaclaw_plugin.integration import append_block, content_text, has_block

from .translate import get, is_chat_response, response_message, usage_dict

Reply = tuple[dict[str, Any] | None, dict[str, Any] | None]


# ------------------------------------------------------------------------------------------------
# Anthropic Messages
# ------------------------------------------------------------------------------------------------
def _json_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def anthropic_messages(request: Any) -> list[dict[str, Any]]:
    """The neutral messages of an Anthropic request: ``system`` first, then each message, its ``tool_use`` blocks
    as tool calls and its ``tool_result`` blocks as tool messages (in order)."""
    out: list[dict[str, Any]] = []
    system = get(request, "system")
    if system:
        out.append({"role": "system", "content": content_text(system)})
    for m in get(request, "messages") or []:
        role, content = get(m, "role"), get(m, "content")
        if not isinstance(role, str):
            continue
        if not isinstance(content, list):
            out.append({"role": role, "content": content if isinstance(content, str) else ""})
            continue
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        for block in content:
            kind = get(block, "type")
            if kind == "tool_result":
                if texts:
                    out.append({"role": role, "content": "\n".join(texts)})
                    texts = []
                result = get(block, "content")
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": get(block, "tool_use_id"),
                        "content": content_text(result) if not isinstance(result, str) else result,
                    }
                )
            elif kind == "tool_use":
                calls.append(_call(get(block, "id"), get(block, "name"), _json_text(get(block, "input") or {})))
            elif isinstance(get(block, "text"), str):
                texts.append(get(block, "text"))
        if texts or calls:
            msg: dict[str, Any] = {"role": role, "content": "\n".join(texts) if texts else None}
            if calls:
                msg["tool_calls"] = calls
            out.append(msg)
    return out


def anthropic_tools(request: Any) -> list[dict[str, Any]] | None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": get(t, "name"),
                "description": get(t, "description") or "",
                "parameters": get(t, "input_schema") or {},
            },
        }
        for t in get(request, "tools") or []
        if isinstance(get(t, "name"), str)
    ]
    return tools or None


def anthropic_injected(request: Any) -> bool:
    return has_block(get(request, "system"))


def anthropic_inject(request: dict[str, Any], block: str) -> None:
    """Append the block to ``system``: to the string, as one more text block of the list, or as the system."""
    request["system"] = append_block(request.get("system"), block)


def anthropic_reply(response: Any) -> Reply:
    """The assistant message and usage of an Anthropic ``message`` object (dict or model)."""
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in get(response, "content") or []:
        kind = get(block, "type")
        if kind == "tool_use":
            calls.append(_call(get(block, "id"), get(block, "name"), _json_text(get(block, "input") or {})))
        elif kind == "text" and isinstance(get(block, "text"), str):
            texts.append(get(block, "text"))
    return _message(texts, calls), _token_usage(get(response, "usage"))


def is_anthropic_reply(response: Any) -> bool:
    return get(response, "type") == "message" and isinstance(get(response, "content"), list)


def anthropic_stream_reply(raw: list[bytes]) -> Reply | None:
    """The message and usage of a whole Anthropic SSE stream (its raw bytes, as sent to the client), or None when
    it did not end with ``message_stop``. Read once, at the end of the stream."""
    message: dict[str, Any] = {}
    blocks: dict[int, dict[str, Any]] = {}
    usage: dict[str, Any] = {}
    done = False
    for line in b"".join(raw).decode("utf-8", "replace").splitlines():
        if not line.startswith("data:"):
            continue
        try:
            event = json.loads(line[5:])
        except ValueError:
            continue
        kind = event.get("type") if isinstance(event, dict) else None
        if kind == "message_start":
            message = event.get("message") or {}
            usage.update(message.get("usage") or {})
        elif kind == "content_block_start":
            block = dict(event.get("content_block") or {})
            block["partial_json"] = ""
            blocks[event.get("index", len(blocks))] = block
        elif kind == "content_block_delta":
            block = blocks.setdefault(event.get("index", 0), {"type": "text", "text": "", "partial_json": ""})
            delta = event.get("delta") or {}
            if delta.get("type") == "text_delta":
                block["text"] = block.get("text", "") + delta.get("text", "")
            elif delta.get("type") == "input_json_delta":
                block["partial_json"] += delta.get("partial_json", "")
        elif kind == "message_delta":
            usage.update({k: v for k, v in (event.get("usage") or {}).items() if v is not None})
        elif kind == "message_stop":
            done = True
    if not done:
        return None
    content = []
    for _, block in sorted(blocks.items()):
        if block.get("type") == "tool_use" and block["partial_json"]:
            block["input"] = block["partial_json"]  # the arguments as streamed (a JSON string)
        content.append(block)
    return anthropic_reply({**message, "content": content, "usage": usage})


# ------------------------------------------------------------------------------------------------
# OpenAI Responses
# ------------------------------------------------------------------------------------------------
def responses_messages(request: Any) -> list[dict[str, Any]]:
    """The neutral messages of a Responses request: ``instructions`` first, then the ``input`` items."""
    out: list[dict[str, Any]] = []
    instructions = get(request, "instructions")
    if isinstance(instructions, str) and instructions:
        out.append({"role": "system", "content": instructions})
    items = get(request, "input")
    if isinstance(items, str):
        out.append({"role": "user", "content": items})
        return out
    for item in items if isinstance(items, list) else []:
        kind = get(item, "type")
        if kind == "function_call":
            call = _call(get(item, "call_id") or get(item, "id"), get(item, "name"), _json_text(get(item, "arguments")))
            if out and out[-1].get("role") == "assistant" and "tool_calls" in out[-1]:
                out[-1]["tool_calls"].append(call)
            else:
                out.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind in ("function_call_output", "custom_tool_call_output"):
            out.append(
                {"role": "tool", "tool_call_id": get(item, "call_id"), "content": _output_text(get(item, "output"))}
            )
        elif kind in (None, "message") and isinstance(get(item, "role"), str):
            content = get(item, "content")
            out.append({"role": get(item, "role"), "content": content_text(content)})
    return out


def _output_text(output: Any) -> str:
    return output if isinstance(output, str) else content_text(output) or _json_text(output)


def responses_tools(request: Any) -> list[dict[str, Any]] | None:
    tools = []
    for t in get(request, "tools") or []:
        name = get(t, "name")
        if not isinstance(name, str):
            continue
        fn = {"name": name, "description": get(t, "description") or "", "parameters": get(t, "parameters") or {}}
        tools.append({"type": "function", "function": fn})
    return tools or None


def responses_injected(request: Any) -> bool:
    instructions = get(request, "instructions")
    return isinstance(instructions, str) and has_block(instructions)


def responses_inject(request: dict[str, Any], block: str) -> None:
    instructions = request.get("instructions")
    request["instructions"] = append_block(instructions if isinstance(instructions, str) else None, block)


def responses_reply(response: Any) -> Reply:
    """The assistant message and usage of a ``response`` object, or of the ``response.completed`` event that
    carries it (a stream's end)."""
    if get(response, "type") == "response.completed":
        response = get(response, "response")
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for item in get(response, "output") or []:
        kind = get(item, "type")
        if kind == "message":
            for part in get(item, "content") or []:
                text = get(part, "text")
                if get(part, "type") == "output_text" and isinstance(text, str):
                    texts.append(text)
        elif kind in ("function_call", "custom_tool_call"):
            args = get(item, "arguments") if kind == "function_call" else get(item, "input")
            calls.append(_call(get(item, "call_id") or get(item, "id"), get(item, "name"), _json_text(args or "")))
    return _message(texts, calls), _token_usage(get(response, "usage"))


def is_responses_reply(response: Any) -> bool:
    if get(response, "type") == "response.completed":
        response = get(response, "response")
    return get(response, "object") == "response" and get(response, "output") is not None


# ------------------------------------------------------------------------------------------------
# Shared
# ------------------------------------------------------------------------------------------------
def _call(cid: Any, name: Any, arguments: str) -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}


def _message(texts: list[str], calls: list[dict[str, Any]]) -> dict[str, Any]:
    joined = "".join(texts)
    msg: dict[str, Any] = {"role": "assistant", "content": joined if (joined or not calls) else None}
    if calls:
        msg["tool_calls"] = calls
    return msg


def _token_usage(usage: Any) -> dict[str, Any] | None:
    """Anthropic's and Responses' usage (``input_tokens``/``output_tokens``) as the core's names. Anthropic counts
    cached prompt tokens apart (``cache_*_input_tokens``): they are prompt tokens too."""
    if usage is None:
        return None
    plain = usage_dict(usage)
    if plain and "prompt_tokens" in plain:
        return plain
    nums = {k: get(usage, k) for k in ("input_tokens", "output_tokens", "total_tokens")}
    if not isinstance(nums["input_tokens"], int) or not isinstance(nums["output_tokens"], int):
        return None
    prompt = nums["input_tokens"]
    for k in ("cache_creation_input_tokens", "cache_read_input_tokens"):
        v = get(usage, k)
        prompt += v if isinstance(v, int) else 0
    total = nums["total_tokens"] if isinstance(nums["total_tokens"], int) else prompt + nums["output_tokens"]
    return {"prompt_tokens": prompt, "completion_tokens": nums["output_tokens"], "total_tokens": total}


def _chat_messages(request: Any) -> list[dict[str, Any]] | None:
    messages = get(request, "messages")
    return messages if isinstance(messages, list) else None


@dataclass(frozen=True)
class Route:
    """One API's translation. ``messages`` returns None for a request it cannot read (LiteLLM answers it)."""

    name: str
    messages: Callable[[Any], list[dict[str, Any]] | None]
    tools: Callable[[Any], list[dict[str, Any]] | None] | None
    injected: Callable[[Any], bool] | None  # None: the chat route (the block is in the neutral messages)
    inject: Callable[[dict[str, Any], str], None] | None
    reply: Callable[[Any], Reply]
    is_reply: Callable[[Any], bool]
    metadata_key: str  # where the proxy puts its own metadata in this route's request


CHAT = Route("chat", _chat_messages, None, None, None, response_message, is_chat_response, "metadata")
MESSAGES = Route(
    "messages",
    lambda r: anthropic_messages(r) if isinstance(get(r, "messages"), list) else None,
    anthropic_tools,
    anthropic_injected,
    anthropic_inject,
    anthropic_reply,
    is_anthropic_reply,
    "litellm_metadata",
)
RESPONSES = Route(
    "responses",
    lambda r: responses_messages(r) if get(r, "input") is not None else None,
    responses_tools,
    responses_injected,
    responses_inject,
    responses_reply,
    is_responses_reply,
    "litellm_metadata",
)

# LiteLLM's call types (``CallTypes`` values) -> route
BY_CALL_TYPE: dict[str, Route] = {
    "completion": CHAT,
    "acompletion": CHAT,
    "anthropic_messages": MESSAGES,
    "responses": RESPONSES,
    "aresponses": RESPONSES,
}


def any_reply(response: Any) -> Reply | None:
    """The message and usage of a complete reply in any of the three formats, or None for anything else (a
    stream wrapper, another API's object)."""
    for route in (CHAT, MESSAGES, RESPONSES):
        if route.is_reply(response):
            return route.reply(response)
    return None


# LiteLLM call types that carry a conversation but that this adapter does not hook -> what the client called.
# Each is said once per model in the log (and counted in ``MetaClawCallback.status()["unhooked"]``).
UNHOOKED: dict[str, str] = {
    "text_completion": "/v1/completions (legacy text completion)",
    "atext_completion": "/v1/completions (legacy text completion)",
    "_aresponses_websocket": "/v1/responses over WebSocket",
    "_arealtime": "the Realtime API",
    "agenerate_content": "Gemini generateContent",
    "agenerate_content_stream": "Gemini streamGenerateContent",
    "allm_passthrough_route": "a pass-through endpoint (raw bytes to the provider)",
}
UNHOOKED_FIX = (
    "send the client to /v1/chat/completions, /v1/messages or /v1/responses over HTTP (streamed or not), "
    "with the model mapped in model_list"
)
LEARNS = "/v1/chat/completions, /v1/messages and /v1/responses (native and bridged models, streamed and not)"
