"""The text of an OpenAI-format message, and the token estimate: one rule each, so that retrieval, reward,
training, the dashboard and the benchmarks see the same text for one turn and count it the same way."""

from __future__ import annotations

import re
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


# Look-alike letters (Cyrillic, Greek, and Latin ones NFKC keeps) and the characters that show nothing: how a
# screen reads a word disguised with them.
_LOOKALIKES = {
    # Cyrillic
    "а": "a",
    "в": "b",
    "е": "e",
    "ё": "e",
    "к": "k",
    "м": "m",
    "н": "h",
    "о": "o",
    "р": "p",
    "с": "c",
    "т": "t",
    "у": "y",
    "х": "x",
    "ѕ": "s",
    "і": "i",
    "ї": "i",
    "ј": "j",
    "ԁ": "d",
    "ɡ": "g",
    "һ": "h",
    "ӏ": "l",
    "ԛ": "q",
    "ԝ": "w",
    "ү": "y",
    # Greek
    "α": "a",
    "β": "b",
    "ε": "e",
    "η": "n",
    "ι": "i",
    "κ": "k",
    "ν": "v",
    "ο": "o",
    "ρ": "p",
    "τ": "t",
    "υ": "u",
    "χ": "x",
    "γ": "y",
    "ω": "w",
    "μ": "u",
    # Latin look-alikes that NFKC keeps
    "ı": "i",
    "ł": "l",
    "ø": "o",
    "đ": "d",
    "ß": "ss",
    "ɑ": "a",
    "ɩ": "i",
    "ʀ": "r",
    "ѵ": "v",
}
HOMOGLYPHS = str.maketrans(
    _LOOKALIKES | {k.upper(): v.upper() for k, v in _LOOKALIKES.items() if len(k.upper()) == 1 and k.upper() != k}
)
INVISIBLE = re.compile(
    r"[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f]"
)

_NON_LATIN = re.compile(r"[\u0370-\u03ff\u0400-\u04ff]")
_LATIN_WORD = re.compile(r"\w*[A-Za-z]\w*")


def fold_homoglyphs(t: str) -> str:
    """Look-alikes mapped to Latin letters: everywhere in a text that is mostly Latin, and in a text that is mostly
    Cyrillic or Greek (Russian is read as Russian) only inside the words that mix in Latin letters."""
    if t.isascii():
        return t
    foreign = len(_NON_LATIN.findall(t))
    if foreign <= sum(c.isascii() and c.isalpha() for c in t):  # mostly Latin
        return t.translate(HOMOGLYPHS)
    return fold_mixed(t)


def fold_mixed(t: str) -> str:
    """Look-alikes mapped to Latin letters inside the words that have a Latin letter ("pаsswоrd" with a Cyrillic а
    and о): a word of one script is left as it is."""
    return _LATIN_WORD.sub(lambda m: m.group(0).translate(HOMOGLYPHS), t)
