"""The trajectory store's journal side, on the request path: a turn as journal records, appended to the journal in one
frame (:mod:`.journal`) and queued for the writer (:mod:`.apply`). Never touches the database.

Why content addressing: hosts resend the whole history, and often a 30+ KB system prompt, on
every turn. Each distinct message is stored once, keyed by hash; a turn's message list is a chain
of cons cells ``(previous list, message)``, so an extra turn costs only its new messages. The
injected skill block is cut out of the system message and stored once per distinct block, so the
system prompt still dedups although the block changes between turns. A request's tool definitions
(often kilobytes, the same on every turn) are stored the same way, once per distinct list, and a turn
names them by hash; a list this process stored lately is recognised by its ``marshal`` bytes, not
encoded again.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import math
import queue
import threading
import time
from collections import OrderedDict
from typing import Any

from ..privacy import Redactor
from ..skillbank.render import CLOSE, MEMORY_CLOSE, MEMORY_OPEN, OPEN
from ..types import Message, Turn
from .journal import Journal, JournalWriteError

BLOCK_MARK = "{{metaclaw-skills}}"
KNOWN_MAX = 200_000  # messages and list cells remembered as stored (a forgotten one is just written again)
PREFIX_SESSIONS = 1024  # sessions whose last turn's messages are kept to key the next turn's by comparison
PREFIX_BYTES = 32 * 1024 * 1024  # ... and at most this much of their text, all sessions together
TOOL_SETS = 16  # distinct tool lists remembered as stored (a host sends the same few on every turn)
_NULL_LIST = ""

# What the writer takes: (the journal segment the records went to, or None when the journal write failed; the records)
Batch = tuple[str | None, list[dict[str, Any]]]


def _h(data: str) -> str:
    return hashlib.blake2b(data.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


# Canonical JSON (the content address of a message): one encoder, not one per call as json.dumps makes.
_canon = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str, allow_nan=False)
_record = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str, allow_nan=False)  # journal


def dumps(obj: Any) -> str:
    try:
        return _canon.encode(obj)
    except (ValueError, TypeError, RecursionError):  # inf/nan, keys of mixed types, cycles: made plain first
        return _canon.encode(_jsonable(obj))


def _line(obj: Any) -> str:
    try:
        return _record.encode(obj)
    except (ValueError, TypeError, RecursionError):
        return _record.encode(_jsonable(obj))


def _jsonable(v: Any, depth: int = 0) -> Any:
    """A copy that encodes as strict JSON: text keys, non-finite floats as null, depth bounded (cycles too)."""
    if depth > 200:
        return "[too deep]"
    if isinstance(v, dict):
        return {k if isinstance(k, str) else str(k): _jsonable(x, depth + 1) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x, depth + 1) for x in v]
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    return v


def finite(v: Any) -> float | None:
    """A number to store in a REAL column that may be null: inf, nan and non-numbers become null."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    try:
        f = float(v)
    except OverflowError:
        return None
    return f if math.isfinite(f) else None


def _msg_line(h: str, text: str) -> str:
    """A message's journal record. ``text`` is already canonical JSON, so it goes in as is rather than
    encoded a second time as a string (replay turns it back into the same text)."""
    return '{"t":"msg","h":"' + h + '","c":' + text + "}"


def _cell_line(h: str, prev: str, msg: str) -> str:
    return '{"t":"cell","h":"' + h + '","p":"' + prev + '","m":"' + msg + '"}'


def _raw_key(msg: Message) -> str:
    """The cache key of a message as the host sent it. Plain text messages (nearly all of them) skip
    the JSON encoding: fields are length-prefixed, and the leading NUL keeps these keys apart from
    JSON ones (JSON never holds a raw NUL)."""
    if len(msg) == 2:  # {"role", "content"}, nearly every message: the same key, without sorting
        content, role = msg.get("content"), msg.get("role")
        if type(content) is str and type(role) is str:
            return _h("\0" + f"7:content{len(content)}:{content}4:role{len(role)}:{role}")
    parts = ["\0"]
    for k, v in sorted(msg.items()):
        if not isinstance(v, str) or not isinstance(k, str):
            return _h(dumps(msg))
        parts.append(f"{len(k)}:{k}{len(v)}:")
        parts.append(v)
    return _h("".join(parts))


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON documents, types included: 1, 1.0 and True differ, and so do 0.0 and -0.0, since their
    canonical JSON (the message's stored form and hash) differs. Anything unusual answers False."""
    t = type(a)
    if t is not type(b):
        return False
    if t is str:
        return a == b
    if t is dict:
        if len(a) != len(b):
            return False
        for k, v in a.items():
            if type(k) is not str or k not in b or not _same(v, b[k]):
                return False
        return True
    if t is list or t is tuple:
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if t is float:
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    if t is int or t is bool or a is None:
        return a == b
    return False


_NEVER = object()  # stands for a value _same cannot vouch for: it equals nothing


def _snapshot(v: Any) -> Any:
    """A copy that the host cannot change afterwards: hosts may edit their message dicts in place."""
    t = type(v)
    if t is dict:
        return {k: _snapshot(x) for k, x in v.items()}
    if t is list:
        return [_snapshot(x) for x in v]
    if t is tuple:
        return tuple(_snapshot(x) for x in v)
    if t is str or t is int or t is float or t is bool or v is None:
        return v
    return _NEVER


_MEMORY_AFTER = "\n\n" + MEMORY_OPEN  # how prepare_turn joins the memory section to the skills block


def _safe_text(s: str) -> str:
    """Lone surrogates (from broken UTF-16 or non-UTF-8 input) cannot be encoded; replace them."""
    return s.encode("utf-8", "replace").decode("utf-8") if s and not s.isascii() else s


def _block_span(text: str) -> tuple[int, int] | None:
    """Where the injected text is (substring searches: it runs to kilobytes): the first complete skills block with
    the memory section that follows it, or a memory section alone. The memory section changes from turn to turn
    with the request; left in the message, it made the whole system prompt (tens of KB for an agent) a new message
    to redact, hash and store on every turn."""
    start = text.find(OPEN)
    if start < 0:
        return _fenced(text, MEMORY_OPEN, MEMORY_CLOSE)
    end = text.find(CLOSE, start + len(OPEN))
    if end < 0:
        return None
    end += len(CLOSE)
    if text.startswith(_MEMORY_AFTER, end):
        memory = _fenced(text, MEMORY_OPEN, MEMORY_CLOSE, end + 2)
        if memory is not None:
            end = memory[1]
    return start, end


def _fenced(text: str, open_: str, close: str, at: int = 0) -> tuple[int, int] | None:
    start = text.find(open_, at)
    if start < 0:
        return None
    end = text.find(close, start + len(open_))
    return None if end < 0 else (start, end + len(close))


def _split_block(msg: Message) -> tuple[Message, str | None]:
    content = msg.get("content")
    if isinstance(content, str):
        span = _block_span(content)
        if span:
            a, b = span
            return {**msg, "content": content[:a] + BLOCK_MARK + content[b:]}, content[a:b]
    if isinstance(content, list):
        for i, part in enumerate(content):
            t = part.get("text") if isinstance(part, dict) else None
            span = _block_span(t) if isinstance(t, str) else None
            if span:
                a, b = span
                parts = list(content)
                parts[i] = {**part, "text": t[:a] + BLOCK_MARK + t[b:]}  # type: ignore[index]
                return {**msg, "content": parts}, t[a:b]  # type: ignore[index]
    return msg, None


def _rendered(block: str, skill_block: str | None) -> bool:
    """Whether the text split out of a message is what the plugin rendered into this turn (library text and
    memories redacted when filed), stored without another redaction pass. The split stops short of the rendered
    text where the host changed what follows the skills block, so the plugin's is a prefix of it: comparing whole
    texts had redacted the ~3 KB library block again on every turn with a memory section (~0.35 ms of the proxy's
    loop)."""
    return skill_block is not None and skill_block.startswith(block)


def join_block(msg: Message, block: str | None) -> Message:
    if block is None:
        return msg
    content = msg.get("content")
    if isinstance(content, str) and BLOCK_MARK in content:
        return {**msg, "content": content.replace(BLOCK_MARK, block, 1)}
    if isinstance(content, list):
        parts = [
            {**p, "text": p["text"].replace(BLOCK_MARK, block, 1)}
            if isinstance(p, dict) and isinstance(p.get("text"), str)
            else p
            for p in content
        ]
        return {**msg, "content": parts}
    return msg


class Recorder:
    """Turns, session ends and rewards as journal records: journaled (durable when this returns), then queued for
    the writer. ``lock`` guards the caches of what is stored and the journal's counts (the writer takes it too)."""

    def __init__(self, redactor: Redactor | None, max_message_bytes: int, queue_max: int):
        self.redactor = redactor
        self.max_message_bytes = max_message_bytes
        self.queue: queue.Queue[Batch | None] = queue.Queue(maxsize=queue_max)  # None: the writer's wake-up
        self.lock = threading.Lock()
        self.journal: Journal | None = None  # open while the store is
        self.dropped = 0  # commits the full queue left in the journal only
        self._known: OrderedDict[str, str] = OrderedDict()  # raw message key -> stored hash (process memory only)
        self._known_lists: OrderedDict[tuple[str, str], str] = OrderedDict()  # (list, message) -> cell hash
        # (tenant, session, kind) -> the last turn's messages (block split off) and the list hash after each:
        # the next turn repeats them, and comparing costs far less than keying them again.
        self._prefixes: OrderedDict[tuple[str, str, str], tuple[list[Message], list[str], int]] = OrderedDict()
        self._prefix_bytes = 0
        self._tool_sets: OrderedDict[bytes, str] = OrderedDict()  # recent tool lists (marshalled) -> stored hash

    def _message_records(
        self, msg: Message, out: list[dict[str, Any]], lines: list[str], *, redact: bool = True
    ) -> str:
        raw_key = _raw_key(msg)
        stored = self._known.get(raw_key)
        if stored is not None:
            self._known.move_to_end(raw_key)
            return stored
        clean = self.redactor.redact_obj(msg) if self.redactor and redact else msg
        text = _safe_text(dumps(clean))
        if len(text) > self.max_message_bytes:
            clean = {"role": msg.get("role", "?"), "content": text[: self.max_message_bytes] + "…[truncated]"}
            text = dumps(clean)
        stored = _h(text)
        out.append({"t": "msg", "h": stored, "c": text})
        lines.append(_msg_line(stored, text))
        self._known[raw_key] = stored
        if len(self._known) > KNOWN_MAX:
            self._known.popitem(last=False)
        return stored

    def append_turn(self, turn: Turn, *, skill_block: str | None = None) -> bool:
        """Make a turn durable (journal) and queue it for SQLite. Never blocks on the database.

        ``skill_block``: the text the plugin itself injected into this turn (its skills block first). The block is library text (already
        on disk, and screened before a learned skill is promoted), so it is stored without another
        redaction pass, which would cost more than the rest of the turn; any other block is redacted."""
        records: list[dict[str, Any]] = []
        lines: list[str] = []  # the same records as journal lines
        block_hash = None
        list_hash = _NULL_LIST
        key = (turn.tenant, turn.session_id, turn.kind)
        with self.lock:
            try:
                prev = self._prefixes.get(key)
                same_so_far = prev is not None
                seen: list[Message] = []
                chain: list[str] = []
                size = 0
                for i, msg in enumerate(turn.messages):
                    if not isinstance(msg, dict):
                        msg = {"role": "unknown", "content": str(msg)}
                    stripped, block = _split_block(msg)
                    if block is not None:
                        block_hash = self._message_records(
                            {"role": "block", "content": block},
                            records,
                            lines,
                            redact=not _rendered(block, skill_block),
                        )
                    if same_so_far and i < len(prev[0]) and _same(stripped, prev[0][i]):  # type: ignore[index]
                        list_hash = prev[1][i]  # type: ignore[index]
                        seen.append(prev[0][i])  # type: ignore[index]
                    else:
                        same_so_far = False
                        list_hash = self._list_cell(
                            list_hash, self._message_records(stripped, records, lines), records, lines
                        )
                        seen.append(_snapshot(stripped))
                    chain.append(list_hash)
                    content = stripped.get("content")
                    size += len(content) if isinstance(content, str) else 256
                response_hash = (
                    self._message_records(turn.response, records, lines) if turn.response is not None else None
                )
                tools_hash = self._tools_records(turn.tools, records, lines) if turn.tools else None
                row = {
                    "t": "turn",
                    "turn_id": turn.turn_id,
                    "tenant": turn.tenant,
                    "session_id": turn.session_id,
                    "kind": turn.kind,
                    "host": turn.host,
                    "user": turn.user,
                    "model": turn.model,
                    "list_hash": list_hash,
                    "block_hash": block_hash,
                    "response_hash": response_hash,
                    "tools_hash": tools_hash,
                    "tool_calls": _safe_text(dumps(self._clean(turn.tool_calls))) if turn.tool_calls else None,
                    "usage": dumps(turn.usage) if turn.usage else None,
                    "latency_ms": finite(turn.latency_ms),
                    "injected": dumps(turn.injected_skills),
                    "generation": turn.skill_generation,
                    "error": _safe_text(self._clean(turn.error)) if turn.error else None,
                    "created_at": turn.created_at,
                }
                records.append(row)
                lines.append(_line(row))
                committed = self._commit_records(records, lines)
                self._keep_prefix(key, seen, chain, size)
                return committed
            except BaseException:
                self.forget()  # what this turn cached as stored was never journaled: later turns carry it again
                raise

    def _list_cell(self, list_hash: str, mh: str, records: list[dict[str, Any]], lines: list[str]) -> str:
        """The list ``list_hash`` with message ``mh`` appended: its hash, and its cell record when new."""
        new_list = self._known_lists.get((list_hash, mh))
        if new_list is None:
            new_list = _h(list_hash + mh)
            records.append({"t": "cell", "h": new_list, "p": list_hash, "m": mh})
            lines.append(_cell_line(new_list, list_hash, mh))
            self._known_lists[(list_hash, mh)] = new_list
            if len(self._known_lists) > KNOWN_MAX:
                self._known_lists.popitem(last=False)
        else:
            self._known_lists.move_to_end((list_hash, mh))
        return new_list

    def _tools_records(
        self, tools: list[dict[str, Any]], records: list[dict[str, Any]], lines: list[str]
    ) -> str | None:
        """The stored hash of a tool list (redacted, content-addressed), with its record when this process has not
        stored it lately. Its JSON keeps the keys in the order sent (a template renders them so), and its journal
        record holds it as a string (a replay stores that text, not a re-encoding). A list seen lately is known
        by its ``marshal`` bytes, exact for JSON values (key order, 1 / 1.0 / True, -0.0) and several times
        cheaper than a walk or an encoding of the kilobytes an agent's tools take. None: too large to keep (the
        turn is then trained as if it had no tools)."""
        try:
            key: bytes | None = marshal.dumps(tools, 2)  # version 2: by structure alone, no back-references
        except ValueError:  # not plain JSON values: encoded every time
            key = None
        if key is not None and key in self._tool_sets:
            self._tool_sets.move_to_end(key)
            return self._tool_sets[key]
        text = _safe_text(_line(self._clean(tools)))
        if len(text) > self.max_message_bytes:
            return None
        h = _h(text)
        rec = {"t": "msg", "h": h, "c": text}
        records.append(rec)
        lines.append(_line(rec))
        if key is not None:
            self._tool_sets[key] = h
            if len(self._tool_sets) > TOOL_SETS:
                self._tool_sets.popitem(last=False)
        return h

    def _keep_prefix(self, key: tuple[str, str, str], seen: list[Message], chain: list[str], size: int) -> None:
        """Remember a turn's messages for its session's next turn, within the session and byte budgets."""
        old = self._prefixes.pop(key, None)
        if old is not None:
            self._prefix_bytes -= old[2]
        if size > PREFIX_BYTES // 8:
            return
        self._prefixes[key] = (seen, chain, size)
        self._prefix_bytes += size
        while self._prefixes and (len(self._prefixes) > PREFIX_SESSIONS or self._prefix_bytes > PREFIX_BYTES):
            self._prefix_bytes -= self._prefixes.popitem(last=False)[1][2]

    def _clean(self, obj: Any) -> Any:
        return self.redactor.redact_obj(obj) if self.redactor else obj

    def end_session(self, tenant: str, session_id: str, outcome: dict[str, Any] | None, reason: str) -> bool:
        rec = {
            "t": "end",
            "tenant": tenant,
            "session_id": session_id,
            "outcome": dumps(self._clean(outcome)) if outcome else None,
            "reason": reason,
            "at": time.time(),
        }
        with self.lock:
            return self._commit_records([rec])

    def record_reward(self, turn_id: str, source: str, score: float, detail: Any = None) -> bool:
        rec = {
            "t": "reward",
            "turn_id": turn_id,
            "source": source,
            "score": float(score),
            "detail": dumps(self._clean(detail)) if detail is not None else None,
            "at": time.time(),
        }
        with self.lock:
            return self._commit_records([rec])

    def _commit_records(self, records: list[dict[str, Any]], lines: list[str] | None = None) -> bool:
        """Journal the records (one frame), then queue them. True: queued; False: the queue is full, and they wait
        in the journal for the next start. Raises :class:`JournalWriteError` when the journal write failed: the
        records still go to the writer (best effort), but the caller must not acknowledge them."""
        if self.journal is None:
            raise RuntimeError("TrajectoryStore is not open")
        if lines is None:
            lines = [_line(r) for r in records]
        lines.append("")  # the last record's newline
        try:
            seg: str | None = self.journal.write("\n".join(lines))
        except JournalWriteError:
            self.forget()  # what this process remembers as stored may now exist nowhere: later turns carry it all
            try:
                self.queue.put_nowait((None, records))
            except queue.Full:
                pass
            raise
        try:
            self.queue.put_nowait((seg, records))
            return True
        except queue.Full:
            # Still durable in the journal: the segment is kept and replayed at the next start.
            self.dropped += 1
            self.journal.counts[seg][2] += 1  # type: ignore[index]
            return False

    def forget(self) -> None:
        """Forget which messages, lists and tool sets are stored (call with ``self.lock`` held): turns from now
        on carry their rows again (inserted if absent)."""
        self._known.clear()
        self._known_lists.clear()
        self._prefixes.clear()
        self._prefix_bytes = 0
        self._tool_sets.clear()
