"""Side calls of an agent client, told from its main turns by their shape.

Agent clients make calls that are not the user's task: a title for the chat, a summary to compact the history, a
classification, a commit message, a memory or other sub-agent. Those are side turns: no skills, no memory, not the
session's work. A client that says so sends ``X-Turn-Type: side``; the others are judged here, from signals any
client's side call shows, each with a weight; two points make a side call:

* **role** (1): the system prompt's opening (two sentences) gives the model a side job (a title, a summary, a commit
  message, a classification, a label, a sub-agent); 2 when that opening also narrows the output (one line, only,
  concise, JSON, N words) or names a sub-agent: that is the form of a side call, not of an assistant;
* **no tools** (2): the request has no tools while this session's main turns have (1 when only the client's
  recent main turns have: another app may share the proxy without a user or session id);
* **short output** (1): ``max_tokens`` at most :data:`SHORT_OUTPUT`; 2 when the session's main turns allow four
  times more;
* **other model** (1): a model other than the one of the session's main turns (of the client's recent main turns,
  within :data:`RECENT` seconds, only for a request without tools);
* **ask** (1): the user's words open by asking for such an artifact ("Summarize this conversation", "Generate a
  title"): alone, a user who asks for a summary is still doing their own task.

Pure and cheap (a few regexes on the first few hundred characters; one table lookup).
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any

from ..infra.memo import Memo
from ..tasktext import task_text, text_parts
from ..types import TurnContext
from .turns import InFlight

SHORT_OUTPUT = 1024  # max_tokens at or below this is a short answer
RECENT = 600.0  # seconds a client's main shape is remembered
OPENING_CHARS = 400
PROSE_WORDS = 8  # a system part of fewer words is a header, not the prompt
HEADS_MAX = 1024  # system prompt heads judged and remembered (_role_points)

_JOB = (
    r"titles?|summar(?:y|ies|i[sz]e\w*)|recap|compact\w*|commit messages?|classif\w*|categori[sz]\w*|"
    r"sub-?agents?|memory extract\w*|extract\w* (?:durable )?memor\w*"
)
_ROLE = re.compile(rf"\b(?:{_JOB})\b", re.IGNORECASE)
_COUNT = r"(?:\d+|one|two|three|four|five|six|seven|eight|ten|twelve|a few)"
# the output narrowed to an artifact (not "be concise", which any assistant prompt may say)
_NARROW = re.compile(
    rf"\b(?:one[- ]line|(?:with|return|output) only|only (?:the|a|one|with)|nothing else|no other text|json|"
    rf"sub-?agent|{_COUNT}(?: (?:to|or) {_COUNT})? (?:words|characters|chars|sentences|lines))\b",
    re.IGNORECASE,
)
_ASK = re.compile(
    rf"^\s*(?:please\s+)?(?:generate|write|create|give|produce|summari[sz]e|classify|categori[sz]e|label|suggest|"
    rf"extract|analy[sz]e)\b[^.\n]{{0,80}}\b(?:{_JOB}|this (?:conversation|session|transcript|chat))\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s|\n")
_HEADS: Memo[str, int] = Memo(HEADS_MAX)


@dataclass
class MainShape:
    """What a client's main turns look like."""

    tools: bool
    model: str | None
    max_tokens: int | None


def _role_points(messages: Sequence[Any]) -> int:
    """The role signal's points (0, 1 or 2) from the opening of the system prompt's first prose part. A host
    resends the same system prompt every turn, so each part's head is judged once (bounded)."""
    for m in messages:
        if isinstance(m, dict) and m.get("role") in ("system", "developer"):
            for part in text_parts(m.get("content")):
                head = part[:OPENING_CHARS]
                points = _HEADS.get(head)
                if points is None:
                    points = _HEADS.put(head, _judge_head(head))
                if points >= 0:
                    return points
    return 0


def _judge_head(head: str) -> int:
    """-1 for a header (a billing tag, a part of a few words: not where a prompt says what the model is for);
    else the points of its first two sentences: 1 for a side job, 2 when they also narrow the output."""
    text = head.lstrip()
    if len(text.split(None, PROSE_WORDS)) <= PROSE_WORDS:
        return -1
    ends = [e.start() for e in islice(_SENTENCE_END.finditer(text), 2)]
    opening = text[: ends[-1]] if len(ends) == 2 else text
    if not _ROLE.search(opening):
        return 0
    return 2 if _NARROW.search(opening) else 1


def max_tokens_of(value: Any) -> int | None:
    """A request's output limit, or None (absent, or not a positive integer)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        return None
    return int(value)


def side_reason(
    messages: Sequence[Any],
    *,
    tools: bool,
    model: str | None,
    max_tokens: int | None,
    main: MainShape | None,
    same_session: bool = True,
) -> str | None:
    """Why this request is a side call ("role+no-tools", ...), or None for a main turn. ``main``: the shape of
    this session's main turns (``same_session``), else of the client's recent ones, else None."""
    score = 0
    why: list[str] = []
    role = _role_points(messages)
    if role:
        score += role
        why.append("role")
    if main is not None and main.tools and not tools:
        score += 2 if same_session else 1
        why.append("no-tools")
    if max_tokens is not None and max_tokens <= SHORT_OUTPUT:
        big = same_session and main is not None and (main.max_tokens is None or main.max_tokens >= 4 * max_tokens)
        score += 2 if big else 1
        why.append("short-output")
    # Another model is a side call's mark within a session; across sessions (the client's recent main turns: any app
    # on the proxy) it is one only for a request without tools: a new session of another app or model with tools
    # and a modest max_tokens is somebody's main turn.
    if main is not None and model and main.model and model != main.model and (same_session or not tools):
        score += 1
        why.append("other-model")
    if score < 2 and score + 1 >= 2:  # only then can the ask decide: skip the scan otherwise
        words = task_text(messages, 300)[0]
        if words and _ASK.search(words):
            score += 1
            why.append("ask")
    return "+".join(why) if score >= 2 else None


class SideCalls:
    """The main shapes of recent sessions and clients, and the judgement of each request against them."""

    def __init__(self, ttl: float = RECENT) -> None:
        self._main: InFlight[tuple[str, ...], MainShape] = InFlight(ttl=ttl, max_items=20_000, clock=time.monotonic)

    def _keys(self, ctx: TurnContext) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return ("s", ctx.tenant, ctx.session_id), ("c", ctx.tenant, ctx.host, ctx.user or "")

    def judge(self, ctx: TurnContext, messages: Sequence[Any], tools: bool, *, note: bool = True) -> str | None:
        """Why ``ctx``'s request is a side call, or None; a main turn's shape is remembered for the next ones
        (``note=False``: a request judged but not recorded, such as a block asked for ahead of the request)."""
        limit = max_tokens_of(ctx.metadata.get("max_tokens")) if ctx.metadata else None
        by_session, by_client = self._keys(ctx)
        main = self._main.get(by_session)
        same = main is not None
        if main is None:
            main = self._main.get(by_client)
        why = side_reason(messages, tools=tools, model=ctx.model, max_tokens=limit, main=main, same_session=same)
        if why is None and note:
            shape = MainShape(tools or bool(main and main.tools), ctx.model, limit)
            self._main.put(by_session, shape)
            self._main.put(by_client, shape)
        return why
