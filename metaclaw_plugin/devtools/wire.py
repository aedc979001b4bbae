"""The scripted upstream's other two APIs: Anthropic ``/v1/messages`` and OpenAI ``/v1/responses``.

One scripted reply (``{"content": str, "tool_calls": [{"name", "arguments"}], ...}``) in each API's own wire form,
JSON or SSE, with usage, as the vendors' servers send them (Anthropic: ``message_start``, ``content_block_*``,
``message_delta``, ``message_stop``; Responses: ``response.created`` ... ``response.output_text.delta`` ...
``response.completed``), so that the real clients (Claude Code, Codex) and LiteLLM's native routes can talk to it.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from ..text import approx_tokens

Reply = dict[str, Any]


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _pieces(text: str, chunks: int) -> list[str]:
    """The text cut as a paced stream sends it: ``chunks`` pieces, else 16 characters each."""
    if chunks > 0:
        cuts = [round(i * len(text) / chunks) for i in range(chunks + 1)]
        return [text[cuts[i] : cuts[i + 1]] for i in range(chunks)]
    return [text[i : i + 16] for i in range(0, len(text), 16)]


def _args(tc: dict[str, Any]) -> str:
    a = tc.get("arguments", {})
    return a if isinstance(a, str) else json.dumps(a)


def _prompt_tokens(body: dict[str, Any], *fields: str) -> int:
    return max(1, approx_tokens(json.dumps([body.get(f) for f in fields], default=str)))


def _error(status: int, reply: Reply, anthropic: bool) -> tuple[int, bytes]:
    message = reply.get("error", "upstream error")
    if anthropic:
        return status, json.dumps({"type": "error", "error": {"type": "api_error", "message": message}}).encode()
    return status, json.dumps({"error": {"message": message, "type": "server_error", "code": status}}).encode()


# ------------------------------------------------------------------------------------------------
# Anthropic Messages
# ------------------------------------------------------------------------------------------------
def render_messages(
    body: dict[str, Any], reply: Reply, default_model: str, chunks: int = 0
) -> tuple[int, bytes | list[bytes]]:
    """An Anthropic Messages reply: the ``message`` object, or its SSE events for ``stream: true``."""
    status = int(reply.get("status", 200))
    if status != 200:
        return _error(status, reply, anthropic=True)
    text = str(reply.get("content") or "")
    calls = reply.get("tool_calls") or []
    model = body.get("model") or default_model
    usage = {"input_tokens": _prompt_tokens(body, "system", "messages"), "output_tokens": max(1, approx_tokens(text))}
    mid = "msg_" + uuid.uuid4().hex[:20]
    stop = "tool_use" if calls else "end_turn"
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text or not calls else []
    uses = [
        {"type": "tool_use", "id": tc.get("id") or f"toolu_{i}_{uuid.uuid4().hex[:8]}", "name": tc["name"]}
        for i, tc in enumerate(calls)
    ]
    if not body.get("stream"):
        content = blocks + [{**u, "input": json.loads(_args(tc) or "{}")} for u, tc in zip(uses, calls, strict=True)]
        message = {
            "id": mid,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        return 200, json.dumps(message).encode()
    start: dict[str, Any] = {
        "id": mid,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": usage["input_tokens"], "output_tokens": 1},
    }
    events = [_sse("message_start", {"type": "message_start", "message": start})]
    index = 0
    if blocks:
        events.append(_block_start(index, {"type": "text", "text": ""}))
        events += [
            _sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
            for d in ({"type": "text_delta", "text": p} for p in _pieces(text, chunks))
        ]
        events.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    for u, tc in zip(uses, calls, strict=True):
        events.append(_block_start(index, {**u, "input": {}}))
        delta = {"type": "input_json_delta", "partial_json": _args(tc)}
        events.append(_sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
        events.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    end = {"stop_reason": stop, "stop_sequence": None}
    events.append(
        _sse(
            "message_delta", {"type": "message_delta", "delta": end, "usage": {"output_tokens": usage["output_tokens"]}}
        )
    )
    events.append(_sse("message_stop", {"type": "message_stop"}))
    return 200, events


def _block_start(index: int, block: dict[str, Any]) -> bytes:
    return _sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})


def count_tokens(body: dict[str, Any]) -> bytes:
    """``POST /v1/messages/count_tokens``."""
    return json.dumps({"input_tokens": _prompt_tokens(body, "system", "messages", "tools")}).encode()


# ------------------------------------------------------------------------------------------------
# OpenAI Responses
# ------------------------------------------------------------------------------------------------
def render_responses(
    body: dict[str, Any], reply: Reply, default_model: str, chunks: int = 0
) -> tuple[int, bytes | list[bytes]]:
    """An OpenAI Responses reply: the ``response`` object, or its SSE events for ``stream: true``."""
    status = int(reply.get("status", 200))
    if status != 200:
        return _error(status, reply, anthropic=False)
    text = str(reply.get("content") or "")
    calls = reply.get("tool_calls") or []
    model = body.get("model") or default_model
    n_in = _prompt_tokens(body, "instructions", "input")
    n_out = max(1, approx_tokens(text))
    usage = {
        "input_tokens": n_in,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": n_out,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": n_in + n_out,
    }
    rid = "resp_" + uuid.uuid4().hex[:24]
    message = {
        "type": "message",
        "id": "msg_" + uuid.uuid4().hex[:24],
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    fcalls = [
        {
            "type": "function_call",
            "id": "fc_" + uuid.uuid4().hex[:24],
            "call_id": tc.get("id") or f"call_{i}_{uuid.uuid4().hex[:8]}",
            "name": tc["name"],
            "arguments": _args(tc),
            "status": "completed",
        }
        for i, tc in enumerate(calls)
    ]
    output = ([message] if text or not calls else []) + fcalls

    def response(state: str, out: list[dict[str, Any]], use: dict[str, Any] | None) -> dict[str, Any]:
        return {
            "id": rid,
            "object": "response",
            "created_at": int(time.time()),
            "status": state,
            "model": model,
            "output": out,
            "parallel_tool_calls": True,
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": body.get("tools") or [],
            "text": {"format": {"type": "text"}},
            "usage": use,
            "error": None,
            "incomplete_details": None,
            "instructions": body.get("instructions"),
            "metadata": {},
            "temperature": 1.0,
            "top_p": 1.0,
        }

    if not body.get("stream"):
        return 200, json.dumps(response("completed", output, usage)).encode()
    seq = iter(range(1_000_000))

    def ev(kind: str, **data: Any) -> bytes:
        return _sse(kind, {"type": kind, "sequence_number": next(seq), **data})

    events = [
        ev("response.created", response=response("in_progress", [], None)),
        ev("response.in_progress", response=response("in_progress", [], None)),
    ]
    for i, item in enumerate(output):
        if item["type"] == "message":
            iid = item["id"]
            events.append(
                ev("response.output_item.added", output_index=i, item={**item, "status": "in_progress", "content": []})
            )
            part = {"type": "output_text", "text": "", "annotations": []}
            events.append(ev("response.content_part.added", item_id=iid, output_index=i, content_index=0, part=part))
            events += [
                ev("response.output_text.delta", item_id=iid, output_index=i, content_index=0, delta=p, logprobs=[])
                for p in _pieces(text, chunks)
            ]
            events.append(
                ev("response.output_text.done", item_id=iid, output_index=i, content_index=0, text=text, logprobs=[])
            )
            events.append(
                ev("response.content_part.done", item_id=iid, output_index=i, content_index=0, part=item["content"][0])
            )
        else:
            events.append(
                ev(
                    "response.output_item.added",
                    output_index=i,
                    item={**item, "status": "in_progress", "arguments": ""},
                )
            )
            args = item["arguments"]
            events.append(ev("response.function_call_arguments.delta", item_id=item["id"], output_index=i, delta=args))
            events.append(
                ev("response.function_call_arguments.done", item_id=item["id"], output_index=i, arguments=args)
            )
        events.append(ev("response.output_item.done", output_index=i, item=item))
    events.append(ev("response.completed", response=response("completed", output, usage)))
    return 200, events
