"""The user's words in a request, without the text an agent client wraps around them.

Agent clients put their own text where the user's goes: Claude Code and qwen-code send ``<system-reminder>``
blocks as parts of the user message, Codex sends an ``<environment_context>`` user message, aider appends its
edit-format rules to the last user message, Anthropic-style clients send tool results as user messages. Retrieval
and memory read :func:`task_text`, which drops that text by its structure, not by any one client's strings:

* content parts that are not text (tool results, images, documents) are not the user's words;
* a block that opens with a tag at the start of a line and closes with the same tag at the end of a line
  (``<anything ...>`` ... ``</anything>``) is injected context, whatever the tag is called;
* a paragraph that repeats a system message of the same request is an echo of the instructions;
* a long Markdown section appended after short prose (from a heading on, at least 800 characters and three
  times the text before it) is an appended instruction sheet;
* a long paragraph seen beside different texts in earlier requests is a preamble that is the same every turn
  (:class:`Repeats`: bounded; the skill bank keeps one per plugin);
* of the user messages that end the request, the first with words is the task: later ones are appended text;
* a prompt wrapped whole in quotes (opencode sends ``"..."``) is read inside them;
* a message before the task seen beside different tasks is the client's fixed preamble, not context.

When stripping leaves nothing, the raw text of the last user message is the answer (a message that is all XML is
still the user's). Cheap and linear: a few passes over the task message only (about 20 to 30 us of CPU a request on the
recorded requests of four agent CLIs, tests/data/client_requests).
"""

from __future__ import annotations

import bisect
import hashlib
import re
import threading
from collections.abc import Sequence
from typing import Any

from .infra.memo import Memo
from .text import content_text

TEXT_PARTS = frozenset({"text", "input_text"})
NON_USER_ROLES = frozenset({"tool", "function", "ipython"})
TASK_MAX_CHARS = 100_000  # the most of the task text any reader takes (retrieval.max_query_chars' bound)
SCAN_CHARS = 65536  # a user message is read this far: retrieval reads 2000 characters of it at most
REPEAT_MIN_CHARS = 160  # shorter paragraphs are the user's (a repeated one-liner is a repeated request)
REPEAT_CONTEXTS = 3  # a paragraph beside this many different texts is boilerplate
ECHO_MIN_CHARS = 80  # a shorter paragraph found in the system prompt may still be the user's
ECHO_SCAN_CHARS = 400  # a shorter message is the user's own: not searched for echoes (the search costs ~1 us/KB)
APPENDIX_MIN_CHARS = 800  # an appended section shorter than this is the user's own
REPEAT_MAX = 4096  # paragraphs remembered; the table is cleared when full
FRAMING_KEY_CHARS = 2000  # longer messages are not remembered by their text (task_parts cuts them to 500)

# An injected block: a tag at the start of a line, the same tag closing at the end of a line. Tag names are any
# word (``system-reminder``, ``environment_context``, ``permissions instructions``): they are the client's.
_OPEN = re.compile(r"(?m)^[ \t]*<([A-Za-z][\w.:-]*)(?:[ \t][^<>\n]*)?>")
_CLOSE = re.compile(r"(?m)</([A-Za-z][\w.:-]*)(?:[ \t][^<>\n]*)?>[ \t]*$")
_HEADING = re.compile(r"(?m)^#{1,6}[ \t]+\S")
_FENCED = re.compile(r"(?ms)^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?^[ \t]*\1[ \t]*$")
_PARA = re.compile(r"\n[ \t]*\n")


class Repeats:
    """Long paragraphs seen beside different texts: a client's per-turn preamble. Thread-safe, bounded."""

    def __init__(self, min_chars: int = REPEAT_MIN_CHARS, contexts: int = REPEAT_CONTEXTS, cap: int = REPEAT_MAX):
        self.min_chars, self.contexts, self.cap = min_chars, contexts, cap
        self._seen: dict[bytes, set[bytes]] = {}
        self._lock = threading.Lock()
        self._framings: Memo[str, bytes] = Memo(cap)  # a message's text -> the digest of its opening (constant)
        self._beside: tuple[str, bytes] = ("", _digest(""))

    def split(self, text: str) -> tuple[list[str], list[str]]:
        """(paragraphs to keep, paragraphs known as boilerplate); notes this text's long paragraphs."""
        paras = [p for p in _PARA.split(text) if p.strip()]
        long = [(i, _digest(p)) for i, p in enumerate(paras) if len(p) >= self.min_chars]
        if not long:
            return paras, []
        rest = _digest("\n".join(p for p in paras if len(p) < self.min_chars))
        drop: set[int] = set()
        with self._lock:
            if len(self._seen) >= self.cap:
                self._seen.clear()
            for i, d in long:
                ctxs = self._seen.setdefault(d, set())
                if len(ctxs) < self.contexts:
                    ctxs.add(rest)
                if len(ctxs) >= self.contexts:
                    drop.add(i)
        return [p for i, p in enumerate(paras) if i not in drop], [paras[i] for i in sorted(drop)]

    def constant(self, text: str, beside: str) -> bool:
        """Whether ``text`` (a message before the task, known by its opening paragraph outside fenced code) has
        now been seen beside this many different tasks: a client's fixed preamble exchange (aider's "files added
        to the chat" and its "Ok", the repository map): framing that varies only in what it attaches."""
        d = self._framings.get(text)
        if d is None:  # the same messages come back turn after turn: each is read once (bounded)
            d = _digest(_PARA.split(_FENCED.sub("", text).strip(), 1)[0])  # its opening, whatever it attaches
            if len(text) <= FRAMING_KEY_CHARS:
                self._framings.put(text, d)
        last = self._beside  # one task is checked against each of its messages in turn
        b = last[1] if last[0] == beside else _digest(beside)
        self._beside = (beside, b)
        with self._lock:
            if len(self._seen) >= self.cap:
                self._seen.clear()
            ctxs = self._seen.setdefault(d, set())
            if len(ctxs) < self.contexts:
                ctxs.add(b)
            return len(ctxs) >= self.contexts

    def clear(self) -> None:
        with self._lock:
            self._seen.clear()


def _digest(text: str) -> bytes:
    return hashlib.blake2b(" ".join(text.split()).encode("utf-8", "replace"), digest_size=12).digest()


def text_parts(content: Any) -> list[str]:
    """The text parts of a message's content (a string is one part); tool results, images and other typed parts
    are left out, as are dict parts whose ``text`` is not a string."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    out = []
    for p in content:
        if isinstance(p, str):
            out.append(p)
        elif isinstance(p, dict) and isinstance(p.get("text"), str) and p.get("type", "text") in TEXT_PARTS:
            out.append(p["text"])
    return out


def _one_block(text: str) -> bool:
    """``text`` is a single tag block (the common case, checked without the regexes)."""
    if not (text.startswith("<") and text.endswith(">")):
        return False
    end = text.find(">")
    name = text[1:end].split(None, 1)[0] if end > 1 else ""
    last = text.rfind("</")
    return (
        bool(name)
        and text.startswith(f"</{name}", last)
        and text[last + len(name) + 2] in " \t>"
        and text.count(f"</{name}") == 1
    )


def strip_blocks(text: str) -> str:
    """``text`` without its tag blocks (an opening tag at the start of a line, the same tag closing at the end of a
    later or the same line). One pass over the closing tags, one over the opening ones: linear in the text,
    whatever it holds (a lazy regex with a back-reference is quadratic on many unclosed tags)."""
    closes: dict[str, list[tuple[int, int]]] = {}
    for m in _CLOSE.finditer(text):
        closes.setdefault(m.group(1), []).append((m.start(), m.end()))
    if not closes:
        return text
    spans: list[tuple[int, int]] = []
    done = 0
    for m in _OPEN.finditer(text):
        if m.start() < done:
            continue
        ends = closes.get(m.group(1))
        if not ends:
            continue
        k = bisect.bisect_left(ends, (m.end(), -1))
        if k < len(ends):
            spans.append((m.start(), ends[k][1]))
            done = ends[k][1]
    if not spans:
        return text
    out, at = [], 0
    for a, b in spans:
        out.append(text[at:a])
        at = b
    out.append(text[at:])
    return "".join(out)


# Quotes a client may wrap a whole prompt in (opencode sends the prompt as ``"..."``): opening -> closing.
QUOTE_PAIRS = {
    '"': '"',
    "'": "'",
    "\u201c": "\u201d",
    "\u2018": "\u2019",
    "\u00ab": "\u00bb",
    "\u201e": "\u201c",
    "\u300c": "\u300d",
    "\u300e": "\u300f",
}


def unquote(text: str) -> str:
    """``text`` without one pair of quotes that wraps all of it (``"fix the bug"`` -> ``fix the bug``); a text
    whose quotes do not wrap the whole (``"a" and "b"``, ``"x" is the flag``) is left as it is."""
    t = text.strip()
    if len(t) < 3:
        return text
    close = QUOTE_PAIRS.get(t[0])
    if close is None or t[-1] != close:
        return text
    inner = t[1:-1]
    if close in inner and (close == t[0] or inner.count(close) != inner.count(t[0])):
        return text  # the opening quote closes before the end: a quoted phrase, not a quoted prompt
    return inner.strip() or text


def strip_wrappers(text: str, instructions: Sequence[str] = (), repeats: Repeats | None = None) -> str:
    """``text`` without injected tag blocks, paragraphs echoing ``instructions`` (the request's system texts), an
    appended instruction section, and (with ``repeats``) known preambles."""
    text = text.strip()
    if "<" in text:
        if _one_block(text):
            return ""
        text = strip_blocks(text).strip()
    if not text:
        return ""
    m = _HEADING.search(text, 1)
    if m is not None and len(text) - m.start() >= max(3 * m.start(), APPENDIX_MIN_CHARS):
        text = text[: m.start()].rstrip()
    if instructions and len(text) >= ECHO_SCAN_CHARS:
        text = "\n\n".join(p for p in _PARA.split(text) if p.strip() and not _echoes(p.strip(), instructions)).strip()
    if repeats is not None and len(text) >= repeats.min_chars:
        keep, dropped = repeats.split(text)
        if dropped:
            text = "\n\n".join(keep).strip()
    return unquote(text) if text[:1] in QUOTE_PAIRS else text


def _echoes(paragraph: str, instructions: Sequence[str]) -> bool:
    return len(paragraph) >= ECHO_MIN_CHARS and any(paragraph in s for s in instructions)


def _instructions(messages: Sequence[Any]) -> tuple[str, ...]:
    """The texts of the request's system messages (a substring search in them is cheaper than hashing them)."""
    return tuple(
        content_text(m.get("content"))
        for m in messages
        if isinstance(m, dict) and m.get("role") in ("system", "developer")
    )


def _has_words(message: Any) -> bool:
    """Whether a user message has text outside tag blocks (cheap: no echo or repeat checks)."""
    for t in text_parts(message.get("content") if isinstance(message, dict) else None):
        t = t.strip()
        if t and not ("<" in t and (_one_block(t) or not strip_blocks(t).strip())):
            return True
    return False


def user_words(message: Any, instructions: Sequence[str] = (), repeats: Repeats | None = None) -> str:
    """The user's words in one user message: its text parts, stripped (see :func:`strip_wrappers`); the first
    part with words comes first, later parts follow it."""
    if not isinstance(message, dict):
        return ""
    parts = []
    for t in text_parts(message.get("content")):
        w = strip_wrappers(t[:SCAN_CHARS], instructions, repeats)
        if w:
            parts.append(w)
    return "\n".join(parts)


def task_message(messages: Sequence[Any]) -> int | None:
    """The index of the user message that carries the task: the last user message with words, moved back to the
    first of the user messages with words right before it (tool results and wrapper-only messages between them
    do not break the run); None when there is no user message."""
    found: int | None = None
    last_user: int | None = None
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        role = m.get("role") if isinstance(m, dict) else None
        if role in NON_USER_ROLES:
            continue
        if role != "user":
            if found is not None:
                break
            continue
        if last_user is None:
            last_user = i
        if _has_words(m):
            found = i
    return found if found is not None else last_user


def task_text(messages: Sequence[Any], max_chars: int = 2000, repeats: Repeats | None = None) -> tuple[str, int]:
    """The user's words for this turn and the index of their message (-1 when there is no user message). Falls
    back to the raw text of the task message when stripping leaves nothing."""
    i = task_message(messages)
    if i is None:
        return "", -1
    m = messages[i]
    words = user_words(m, _instructions(messages), repeats)
    if not words:
        words = content_text(m.get("content") if isinstance(m, dict) else None).strip()
    return words[:max_chars], i


class TurnTask:
    """A request's :func:`task_text`, computed at most once for everything on the request path that searches by it
    (skill retrieval, memory recall): both see the same words, and ``repeats`` notes them once. Each reader cuts
    them to its own length (``retrieval.max_query_chars`` is at most ``TASK_MAX_CHARS``)."""

    def __init__(self, messages: Sequence[Any], repeats: Repeats | None = None) -> None:
        self.messages, self.repeats = messages, repeats
        self._got: tuple[str, int] | None = None

    def get(self, max_chars: int) -> tuple[str, int]:
        """The user's words cut to ``max_chars``, and the index of their message (see :func:`task_text`)."""
        if self._got is None:
            self._got = task_text(self.messages, TASK_MAX_CHARS, self.repeats)
        return self._got[0][:max_chars], self._got[1]
