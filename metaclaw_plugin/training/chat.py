"""The prompt the policy sees, rendered by one function for both sides: the served policy samples from these ids,
and the trainer rebuilds them from the captured turn (messages as sent, and the request's ``tools``), so the
logprobs recorded with an answer stay valid when it is trained.

- **Messages** are normalised as chat templates expect OpenAI-format ones: text content (text parts joined by
  newlines, ``None`` as ""), tool-call arguments as objects (templates ``tojson`` them); other keys are kept.
- **Native.** A template that renders tool definitions, assistant tool calls and tool results (Qwen2.5/3, Hermes,
  the tiny model's) gets them through Hugging Face's ``apply_chat_template(messages, tools=...)``.
- **Fallback.** A template that does not (plain ChatML, SmolLM2's) gets the Hermes/Qwen format written into plain
  messages, the format the served policy parses back: the tool definitions (:data:`TOOLS_HEAD`, one JSON object a
  line, :data:`TOOLS_TAIL`) after the first system message's text (a system message is added when there is
  none), each assistant tool call as a ``<tool_call>`` block on its own line after the text, and each run of tool
  results as one user message of ``<tool_response>`` blocks. Under a ChatML template this is the text Qwen2.5's
  own template renders. Which way a template goes is decided once per template, by rendering a probe.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..text import content_text

OPEN = "<tool_call>"
CLOSE = "</tool_call>"
TOOLS_HEAD = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
TOOLS_TAIL = (
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
    '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n'
    "</tool_call>"
)

_PROBE = ("metaclaw_probe_tool", "metaclaw_probe_call", "metaclaw_probe_result")
_native: dict[str, bool] = {}  # template text -> renders tools natively


def normalise(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI-format messages as chat templates expect them: text content, tool-call arguments as objects."""
    out = []
    for m in messages:
        m = dict(m)
        content = m.get("content")
        if isinstance(content, list) or content is None:
            m["content"] = content_text(content)
        if m.get("tool_calls"):
            calls = []
            for c in m["tool_calls"]:
                fn = dict((c or {}).get("function") or {})
                args = fn.get("arguments")
                if isinstance(args, str):
                    try:
                        fn["arguments"] = json.loads(args)
                    except json.JSONDecodeError:
                        pass
                calls.append({**c, "function": fn})
            m["tool_calls"] = calls
        out.append(m)
    return out


def _uses_tools(messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] | None) -> bool:
    return bool(tools) or any(m.get("tool_calls") or m.get("role") == "tool" for m in messages)


def native_tools(tokenizer: Any) -> bool:
    """Whether ``tokenizer``'s chat template renders tools, assistant tool calls and tool results itself."""
    key = repr(getattr(tokenizer, "chat_template", None))
    known = _native.get(key)
    if known is None:
        tool, call, result = _PROBE
        probe = [
            {"role": "user", "content": "?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "c0", "type": "function", "function": {"name": call, "arguments": {}}}],
            },
            {"role": "tool", "tool_call_id": "c0", "name": call, "content": result},
        ]
        schema = {"type": "function", "function": {"name": tool, "parameters": {"type": "object", "properties": {}}}}
        try:
            text = str(tokenizer.apply_chat_template(probe, tools=[schema], tokenize=False))
            known = all(s in text for s in _PROBE)
        except Exception:  # a template that refuses a tool role or tool calls has no tool support
            known = False
        _native[key] = known
    return known


def _call_block(call: dict[str, Any]) -> str:
    fn = call.get("function") or {}
    body = json.dumps({"name": fn.get("name"), "arguments": fn.get("arguments", {})}, ensure_ascii=False)
    return f"{OPEN}\n{body}\n{CLOSE}"


def fallback(messages: list[dict[str, Any]], tools: Sequence[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Normalised ``messages`` and ``tools`` as plain system/user/assistant messages (the module doc's format)."""
    out: list[dict[str, Any]] = []
    after_tool = False
    for m in messages:
        role = m.get("role")
        if role == "assistant" and m.get("tool_calls"):
            said = [m["content"]] if m.get("content") else []
            out.append({"role": "assistant", "content": "\n".join(said + [_call_block(c) for c in m["tool_calls"]])})
        elif role == "tool":
            block = f"<tool_response>\n{m.get('content', '')}\n</tool_response>"
            if after_tool:  # a run of results is one user message
                out[-1] = {"role": "user", "content": out[-1]["content"] + "\n" + block}
            else:
                out.append({"role": "user", "content": block})
        else:
            out.append(m)
        after_tool = role == "tool"
    if tools:
        defs = TOOLS_HEAD + "".join("\n" + json.dumps(t, ensure_ascii=False) for t in tools) + TOOLS_TAIL
        if out and out[0].get("role") == "system":
            out[0] = {**out[0], "content": f"{out[0]['content']}\n\n{defs}"}
        else:
            out.insert(0, {"role": "system", "content": defs})
    return out


def render(
    tokenizer: Any,
    messages: Sequence[dict[str, Any]],
    tools: Sequence[dict[str, Any]] | None = None,
    *,
    generation_prompt: bool = True,
) -> str:
    """The chat template's text for ``messages`` and ``tools`` (natively, or through :func:`fallback`)."""
    msgs = normalise(messages)
    schema = list(tools) if tools else None
    if _uses_tools(msgs, schema) and not native_tools(tokenizer):
        msgs, schema = fallback(msgs, schema), None
    text = tokenizer.apply_chat_template(msgs, tools=schema, tokenize=False, add_generation_prompt=generation_prompt)
    return str(text)


def ids(tokenizer: Any, text: str) -> list[int]:
    """The token ids of rendered text (the template wrote the special tokens: none are added)."""
    return [int(t) for t in tokenizer(text, add_special_tokens=False)["input_ids"]]


def prompt_ids(
    tokenizer: Any, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] | None = None
) -> list[int]:
    """The ids the policy answers ``messages`` (with ``tools``) from: the template with the generation prompt.
    The served policy samples from exactly these, and the trainer rebuilds them from the captured turn."""
    return ids(tokenizer, render(tokenizer, messages, tools))


def stop_ids(tokenizer: Any) -> frozenset[int]:
    """The tokens an answer ends at: the tokenizer's end of text and, with a ChatML template, ``<|im_end|>``."""
    vocab = tokenizer.get_vocab()
    found = (tokenizer.eos_token_id, vocab.get("<|im_end|>"))
    return frozenset(i for i in found if isinstance(i, int))


def answer_text(tokenizer: Any, answer_ids: Sequence[int]) -> str:
    """A generated answer as a scorer reads it: decoded without special tokens (the stop token), trimmed."""
    return str(tokenizer.decode(list(answer_ids), skip_special_tokens=True)).strip()
