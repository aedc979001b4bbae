"""Whose session a turn belongs to, and the session of a conversation whose client names none.

**A session belongs to one (tenant, user).** Sessions are stored by (tenant, session id), and the session id a turn
is stored under is the id the host gave, namespaced by the turn's user: ``<given>~u<16 hex>``, the hex a hash of the
user. A turn with no user keeps the given id as it is. So:

* two users who name the same id (by chance, or because one of them read it somewhere) get two sessions: neither
  user's turns, outcome or memories move to the other, whoever came first;
* the mapping is a pure function, the same in every process and every host on one database, with no table of owners
  to load or keep (the alternative, "the first user owns the id", needs one, on the request path, in every process);
* the id a host knows still finds its sessions: reads of a given id look for ``<given>`` and ``<given>~u...``
  (:meth:`MetaClawPlugin.read_session`), and an end or feedback that names no user applies to every user's part of
  the session (an end from OpenClaw's ``session_end``, the sidecar's ``/v1/sessions/<id>/end``);
* an id that already carries the turn's own suffix is kept (an adapter may pass a stored id back), and a turn that
  names an id in a form only the plugin makes (a namespaced id without its user, a conversation's ``fp-`` id) is
  stored under that id's keyed hash (the home's ``ids.key``): no client can name another user's session or another
  conversation's.

**Conversations without an id** (:class:`Conversations`): a client that sends no session id is grouped by its
conversation. A conversation is known by its opening, the user's words of its first user message that has any
(system prompts, and the tags and wrappers a client puts around the user's words, are not part of it: clients send
the same ones in every conversation), hashed with the tenant and the user into ``fp-<16 hex>``. In each process a
table follows the conversations it has seen: a request that continues one (its messages extend that conversation's
last request) stays in it, and a new conversation whose opening another conversation of the same user already has
(aider opens every run in a repository with the same repository map; a user may open two chats with "hi") gets an id
of its own, from its first request. Ids in use by earlier processes are loaded from the store at start, so a new
conversation is never filed into a session stored before a restart. What this cannot tell apart: two processes
(LiteLLM ``--num_workers``, hosts on one database) that each see, for the first time, a new conversation whose
opening the same user already used give both one id; a client that names its session never depends on any of this.
"""

from __future__ import annotations

import functools
import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..tasktext import NON_USER_ROLES, user_words
from ..text import content_text
from ..types import new_id
from .bounds import ID_MAX, Identifiers

USER_MARK = "~u"  # <given>~u<tag>: the session id of a user's turns
_TAG = re.compile(r"~u[0-9a-f]{16}$")
FINGERPRINT_PREFIX = "fp-"
_FINGERPRINT = re.compile(r"^fp-[0-9a-f]{16}$")
CONVERSATIONS_MAX = 20_000  # conversations a process follows (least recently seen forgotten first)
TAKEN_MAX = 200_000  # fingerprinted ids remembered as in use (the table's and the store's)
OPENING_CHARS = 4000  # the opening is read this far
PER_OPENING_MAX = 64  # conversations followed per (tenant, user, opening): a request is checked against each


def tag(*parts: str) -> str:
    """16 hex digits of a hash of ``parts``: the same in every process and host that shares a database."""
    data = "\x00".join(parts).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=8, person=b"metaclaw-sess").hexdigest()


@functools.lru_cache(maxsize=4096)
def user_suffix(user: str) -> str:
    return USER_MARK + tag("user", user)


def stored_session(
    ids: Identifiers, given: str, user: str | None, *, turn: bool = True, fingerprint: bool = False
) -> str:
    """The session id a turn of ``user`` that names ``given`` is stored under (``given`` and ``user`` already in
    their stored forms). ``turn=False`` (an end, a feedback): an id in the namespaced form is taken as it is.
    ``fingerprint``: ``given`` is the conversation's id the plugin made; an id of that form that a client named is
    not one (it is stored under its keyed hash), so no client can name another conversation's session."""
    if turn and not fingerprint and _FINGERPRINT.match(given):
        given = ids.hashed(given)
    if user is None:
        if turn and _TAG.search(given):
            return ids.hashed(given)  # the plugin makes these for users' turns: not a name a turn may take
        return given
    suffix = user_suffix(user)
    if given.endswith(suffix):
        return given
    if len(given) + len(suffix) > ID_MAX:
        given = ids.hashed(given)
    return given + suffix


def given_of(session_id: str) -> str:
    """The id the host gave, from a stored session id (the user's suffix off)."""
    return session_id[: -len(USER_MARK) - 16] if _TAG.search(session_id) else session_id


def namespaced(session_id: str) -> bool:
    return _TAG.search(session_id) is not None


# ------------------------------------------------------------------------------------------------
# Conversations without a session id
# ------------------------------------------------------------------------------------------------
def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=12).digest()


def message_digest(m: Any) -> bytes:
    """A message as a continuation check compares it: role, text, tool call ids (cheap; no JSON of the whole)."""
    if not isinstance(m, dict):
        return _digest("")
    parts = [str(m.get("role")), content_text(m.get("content"))]
    calls = m.get("tool_calls")
    if isinstance(calls, list):
        parts += [str(c.get("id")) for c in calls if isinstance(c, dict)]
    if m.get("tool_call_id") is not None:
        parts.append(str(m.get("tool_call_id")))
    return _digest("\x00".join(parts))


def opening(messages: Sequence[Any]) -> str | None:
    """The user's words of the first user message that has any (whitespace folded), or None."""
    for m in messages:
        if not isinstance(m, dict) or m.get("role") in NON_USER_ROLES or m.get("role") != "user":
            continue
        words = user_words({"role": "user", "content": _head(m.get("content"))})
        if words.strip():
            return " ".join(words.split())
    return None


def _head(content: Any) -> Any:
    if isinstance(content, str):
        return content[:OPENING_CHARS]
    return content


def said_last(messages: Sequence[Any]) -> tuple[int, bytes]:
    """Where a request's last message that is not a system or developer message stands, and its digest: what the
    conversation said last. A client may end every request with the same system reminder (aider's edit rules), which
    tells no two conversations apart."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if not (isinstance(m, dict) and m.get("role") in ("system", "developer")):
            return i, message_digest(m)
    return len(messages) - 1, message_digest(messages[-1])


@dataclass
class _Conversation:
    session_id: str
    n: int  # messages of its latest request
    at: int  # where that request's last said message (not a system reminder) stands
    tail: bytes  # its digest
    first_at: int  # the same of its first request: conversations that open alike part there (aider's runs)
    first_tail: bytes

    def continued_by(self, messages: Sequence[Any], n: int) -> bool:
        """Whether a request extends (or repeats) this conversation's latest one: it holds that request's last said
        message and its first request's last said message where they were."""
        return (
            n >= self.n
            and message_digest(messages[self.at]) == self.tail
            and message_digest(messages[self.first_at]) == self.first_tail
        )


class Conversations:
    """The conversations a process has seen, per (tenant, user, opening); bounded, thread-safe, in memory."""

    def __init__(self, cap: int = CONVERSATIONS_MAX, taken_cap: int = TAKEN_MAX) -> None:
        self.cap = cap
        self.taken_cap = taken_cap
        self._by_opening: OrderedDict[tuple[str, str, str], list[_Conversation]] = OrderedDict()
        self._taken: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()

    def session_of(self, messages: Sequence[Any], tenant: str, user: str | None) -> str | None:
        """The id of the conversation ``messages`` belong to (``fp-<hex>``; the caller namespaces it by user like any
        id), or None when no user message has words. ``tenant`` and ``user`` in their stored forms."""
        if not isinstance(messages, (list, tuple)) or not messages:
            return None
        words = opening(messages)
        if words is None:
            return None
        key = (tenant, user or "", words)
        n = len(messages)
        with self._lock:
            convs = self._by_opening.get(key)
            if convs is not None:
                self._by_opening.move_to_end(key)
                found = None
                for c in convs:  # the longest earlier request this one extends (or repeats: a retry, a second hook)
                    if (found is None or c.n > found.n) and c.continued_by(messages, n):
                        found = c
                if found is not None:
                    found.n, (found.at, found.tail) = n, said_last(messages)
                    return found.session_id
            at, tail = said_last(messages)
            sid = self._fingerprint(key)
            if sid in self._taken or convs:  # a repeated opening: this conversation is told by its first request
                sid = self._fingerprint(key, tail.hex(), str(at))
                if sid in self._taken:
                    sid = self._fingerprint(key, new_id())
            if convs is None:
                convs = self._by_opening[key] = []
            convs.append(_Conversation(sid, n, at, tail, at, tail))
            if len(convs) > PER_OPENING_MAX:
                del convs[0]
            self._take(sid)
            while len(self._by_opening) > self.cap:
                self._by_opening.popitem(last=False)
            return sid

    def _fingerprint(self, key: tuple[str, str, str], *extra: str) -> str:
        return FINGERPRINT_PREFIX + tag("conversation", *key, *extra)

    def _take(self, sid: str) -> None:
        self._taken[sid] = None
        self._taken.move_to_end(sid)
        while len(self._taken) > self.taken_cap:
            self._taken.popitem(last=False)

    def taken(self, session_ids: Iterable[str]) -> None:
        """Ids stored by earlier processes (their fingerprinted sessions): a new conversation never takes one."""
        with self._lock:
            for sid in session_ids:
                g = given_of(sid)
                if g.startswith(FINGERPRINT_PREFIX) and g not in self._taken:
                    self._taken[g] = None
                    self._taken.move_to_end(g, last=False)  # older than what this process made
            while len(self._taken) > self.taken_cap:
                self._taken.popitem(last=False)
