"""The text of an OpenAI-format message, and the token estimate: one rule each, so that retrieval, reward,
training, the dashboard and the benchmarks see the same text for one turn and count it the same way."""

from __future__ import annotations

import time
import unicodedata
from typing import Any


def content_text(content: Any) -> str:
    """The text of a message's ``content``: a string as it is; a list of parts: the text of each part that has
    one (``{"type": "text", "text": ...}`` or any part with a string ``text``, and bare strings), joined by a
    newline; anything else (None, a list of images only) is ``""``."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for p in content:
            t = p.get("text") if isinstance(p, dict) else p
            if isinstance(t, str):
                parts.append(t)
        return "\n".join(parts)
    return ""


def message_text(message: Any) -> str:
    """The text of an OpenAI-format message (a dict, or an object with ``content``, such as a LangChain or
    LiteLLM message): its :func:`content_text`. Tool calls are not text; callers that show them render them."""
    if isinstance(message, dict):
        return content_text(message.get("content"))
    return content_text(getattr(message, "content", None))


def approx_tokens(text: str) -> int:
    """About four characters per token for English prose (rounded up); cheap and conservative enough for a
    budget. Where a real tokenizer is at hand (training, the benchmarks' cl100k counts), that counts instead."""
    return (len(text) + 3) // 4


def approx_message_tokens(messages: Any) -> int:
    """The estimate for a list of messages: their text, plus four tokens a message for the chat framing."""
    return sum(approx_tokens(message_text(m)) + 4 for m in messages or [])


def local_time(ts: float | None, none: str = "", fmt: str = "%Y-%m-%d %H:%M:%S") -> str:
    """A time as people read it (the CLI's tables, the dashboard's pages): local, to the second by default;
    ``none`` where there is no time (None, or 0: never shown as the epoch)."""
    return time.strftime(fmt, time.localtime(ts)) if ts else none


def strip_marks(text: str) -> str:
    """``text`` without its combining marks ("répondes" -> "repondes"): screening compares folded text, and a
    skill name made from a French or German rule keeps its words whole."""
    if text.isascii():  # ASCII decomposes to itself and has no marks: most text, at no per-character cost
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def folded_words(text: str) -> str:
    """``text`` case-folded, its whitespace collapsed to single spaces: how "the request already says this" is
    compared (a rule retyped with other line breaks or capitals is the same rule)."""
    return " ".join(text.casefold().split())
