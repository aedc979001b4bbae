"""TrajectoryStore: sessions, turns and rewards in SQLite (WAL), made durable by a journal.

Why a journal: a turn counts as completed when its response reaches the client, so it must be
on disk before the host returns. One ``write()`` of a line to an append-only file costs
microseconds and survives a killed process (the page cache keeps it); a synchronous SQLite commit
would cost far more on the request path. A background thread moves journal records into SQLite
in batches; at start-up, leftover journal segments are replayed (idempotently).

Why isolation: no record may block its neighbours or the start-up. A batch the database refuses is
written again record by record (each in a savepoint); a record it still refuses is set aside in the
dead-letter file (see :mod:`.journal`), and the rest is stored. A database that is away (locked, full,
read-only, unreachable) is retried, the journal keeping everything meanwhile; a database file deleted,
truncated or replaced under the process is noticed, created again, and this process's journal segments
are replayed into it. A segment is deleted only once its records are durably in the database.

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
import logging
import marshal
import math
import os
import queue
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..infra.service import Service
from ..privacy import Redactor
from ..skillbank.render import CLOSE, MEMORY_CLOSE, MEMORY_OPEN, OPEN
from ..types import Message, Session, Turn
from .journal import SEGMENT_BYTES, DeadLetter, Journal, JournalWriteError, read_segment
from .sqlite import SchemaTooNew, connect

if TYPE_CHECKING:
    from .postgres import PostgresDatabase

log = logging.getLogger("metaclaw_plugin.store")

BLOCK_MARK = "{{metaclaw-skills}}"
__all__ = ["SEGMENT_BYTES", "JournalWriteError", "TrajectoryStore", "turn_dict"]
KNOWN_MAX = 200_000  # messages and list cells remembered as stored (a forgotten one is just written again)
PREFIX_SESSIONS = 1024  # sessions whose last turn's messages are kept to key the next turn's by comparison
PREFIX_BYTES = 32 * 1024 * 1024  # ... and at most this much of their text, all sessions together
TOOL_SETS = 16  # distinct tool lists remembered as stored (a host sends the same few on every turn)
WRITER_LINGER = 0.2  # seconds the writer waits for more turns, so a quiet proxy commits a few per transaction
RETRY_MAX = 5.0  # at most this many seconds between tries while the database is unreachable
_NULL_LIST = ""


def _h(data: str) -> str:
    return hashlib.blake2b(data.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


# Canonical JSON (the content address of a message): one encoder, not one per call as json.dumps makes.
_canon = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str, allow_nan=False)
_record = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str, allow_nan=False)  # journal


def _dumps(obj: Any) -> str:
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


def _finite(v: Any) -> float | None:
    """A number to store in a REAL column that may be null: inf, nan and non-numbers become null."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    try:
        f = float(v)
    except OverflowError:
        return None
    return f if math.isfinite(f) else None


def _required(v: Any, what: str) -> float:
    f = _finite(v)
    if f is None:
        raise ValueError(f"{what} is not a finite number: {v!r:.80}")
    return f


# Reads: a non-finite constant written by an older release reads as null, so output stays valid JSON.
_loads = json.JSONDecoder(parse_constant=lambda _c: None).decode


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
            return _h(_dumps(msg))
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


def _join_block(msg: Message, block: str | None) -> Message:
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


class TrajectoryStore:
    def __init__(
        self,
        db_path: Path | str,
        *,
        redactor: Redactor | None = None,
        queue_max: int = 10_000,
        max_message_bytes: int = 1_000_000,
        journal_fsync: bool = False,
        journal_dir: Path | str | None = None,
        database: PostgresDatabase | None = None,
    ):
        """``database``: a PostgreSQL target instead of the SQLite file ``db_path`` (the journal stays local,
        beside ``db_path``; while the server is unreachable the writer keeps retrying and nothing is lost)."""
        self.db_path = Path(db_path).expanduser()
        self._pg = database
        self.journal_dir = Path(journal_dir) if journal_dir else self.db_path.parent / "journal"
        self.redactor = redactor
        self.max_message_bytes = max_message_bytes
        self._journal_fsync = journal_fsync
        self._queue: queue.Queue[tuple[str | None, list[dict[str, Any]]] | None] = queue.Queue(maxsize=queue_max)
        self._lock = threading.Lock()
        self._known: OrderedDict[str, str] = OrderedDict()  # raw message key -> stored hash (process memory only)
        self._known_lists: OrderedDict[tuple[str, str], str] = OrderedDict()  # (list, message) -> cell hash
        # (tenant, session, kind) -> the last turn's messages (block split off) and the list hash after each:
        # the next turn repeats them, and comparing costs far less than keying them again.
        self._prefixes: OrderedDict[tuple[str, str, str], tuple[list[Message], list[str], int]] = OrderedDict()
        self._prefix_bytes = 0
        self._tool_sets: OrderedDict[bytes, str] = OrderedDict()  # recent tool lists (marshalled) -> stored hash
        self._hurry = threading.Event()  # set by flush()/close(): the writer skips its linger
        self._journal: Journal | None = None
        self.service = Service("metaclaw-store-writer", self._writer, wake=self._wake_writer)
        self._read_lock = threading.Lock()
        self._reader: sqlite3.Connection | None = None
        self._reader_id: tuple[int, int] | None = None
        self._conn: sqlite3.Connection | None = None  # the writer's (SQLite)
        self._db_id: tuple[int, int] | None = None  # (device, inode) of the file self._conn has open
        # this process's segments must be replayed: the database file under it was lost, or the queue overflowed
        self._replay_own_segments = False
        self._dead = DeadLetter(self.db_path, redactor)
        self.dropped = 0
        self.written = 0
        self.replayed = 0
        self.write_errors = 0
        self.db_recreated = 0  # database files found deleted, truncated, replaced or corrupt, and created again
        self.retrying = 0  # records waiting for the database to come back
        self._orphans: list[Path] = []
        self._closing = threading.Event()

    @property
    def set_aside(self) -> int:
        """Records this process moved to the dead-letter file (the database refused them, or they were torn)."""
        return self._dead.count

    @property
    def journal_errors(self) -> int:
        """Journal writes that failed (disk full, read-only home): those turns were not acknowledged."""
        return self._journal.errors if self._journal is not None else 0

    # Lifecycle ---------------------------------------------------------------------------------
    def open(self) -> None:
        """Replay what earlier processes left in the journal and start the writer. Never raises for a bad
        journal or a database that is away: the writer replays it when the database returns."""
        if self.service.running:
            return
        self._closing.clear()
        try:
            self.journal_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            orphans = Journal.orphans(self.journal_dir)
        except OSError as e:
            log.error("journal folder %s unusable: %s", self.journal_dir, e)
            orphans = []
        if self._pg is None:  # SQLite: replayed now, so what was recorded reads back at once
            try:
                conn = self._db()
                while orphans:
                    self.replayed += self._replay(conn, orphans[0])
                    _discard(orphans.pop(0))
            except SchemaTooNew:
                raise
            except Exception as e:
                self._drop_conn()
                log.error("database unavailable at start (%s); the journal is replayed when it returns", e)
        self._orphans = orphans  # what is left: replayed by the writer, which waits for the database
        self._journal = Journal(self.journal_dir, self._journal_fsync)
        self.service.start()

    def close(self) -> None:
        """Drain the writer (when open) and close the readers; a store only read from needs it too."""
        if self.service.running:
            self._closing.set()
            self.service.stop(30)
        if self._journal is not None:
            self._journal.close()
            done = [seg for seg, (w, c, d) in self._journal.counts.items() if c >= w and not d]
            self._prune_segments(done)
            self._journal = None
        self._drop_conn()
        with self._read_lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None
        if self._pg is not None:
            self._pg.close()

    def _wake_writer(self) -> None:
        self._queue.put(None)
        self._hurry.set()

    def services(self) -> list[Service]:
        return [self.service]

    def _connect(self) -> sqlite3.Connection | None:
        return None if self._pg is not None else connect(self.db_path)

    @property
    def backend(self) -> str:
        return "postgres" if self._pg is not None else "sqlite"

    # The database, as the writer sees it -----------------------------------------------------------
    def _db(self) -> sqlite3.Connection | None:
        """The writer's SQLite connection, opened again (and the file created again) when the file under it was
        deleted, truncated or replaced. PostgreSQL: None (its pool reconnects by itself)."""
        if self._pg is not None:
            return None
        st = _stat(self.db_path)
        if self._conn is not None:
            if st is not None and (st.st_dev, st.st_ino) == self._db_id and st.st_size >= 512:
                return self._conn
            what = "deleted" if st is None else "truncated" if st.st_size < 512 else "replaced"
            self._database_lost(f"the database file was {what}", keep_file=st is not None and st.st_size >= 512)
        try:
            conn = connect(self.db_path)
        except sqlite3.OperationalError:
            raise  # away (read-only, locked, unreadable folder): retried
        except sqlite3.DatabaseError as e:  # not a database (junk, a corrupt header): set aside, start afresh
            self._database_lost(f"the database file is unreadable ({e})", keep_file=False)
            conn = connect(self.db_path)
        st = os.stat(self.db_path)
        self._conn, self._db_id = conn, (st.st_dev, st.st_ino)
        return conn

    def _database_lost(self, why: str, *, keep_file: bool) -> None:
        """Forget the connection to a lost database and move aside what is left of it (kept for a look, never
        deleted) unless the file is a whole database someone put there. This process's journal segments are then
        replayed into the new one."""
        self._drop_conn()
        self.db_recreated += 1
        self._replay_own_segments = True
        log.error("%s: %s is opened (created) again and this process's journal replayed into it", why, self.db_path)
        if not keep_file:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            for suffix in ("", "-wal", "-shm"):
                try:
                    Path(f"{self.db_path}{suffix}").rename(f"{self.db_path}.lost-{stamp}{suffix}")
                except FileNotFoundError:
                    pass
                except OSError as e:
                    log.error("could not move %s%s aside: %s", self.db_path, suffix, e)
        with self._read_lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None

    def _after_error(self, e: BaseException) -> None:
        """The database was away: reconnect on the next try; a lost one is created again."""
        if self._pg is not None:
            return
        if isinstance(e, sqlite3.OperationalError) and "no such table" in str(e):
            self._database_lost(f"the database lost its tables ({e})", keep_file=True)
        elif type(e) is sqlite3.DatabaseError:
            self._database_lost(f"the database file is unreadable ({e})", keep_file=False)
        else:
            self._drop_conn()

    def _drop_conn(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
            self._conn, self._db_id = None, None

    def _in_transaction(self, conn: sqlite3.Connection | None, fn: Callable[[Any], None]) -> None:
        """Run ``fn(connection)`` in one transaction, on SQLite (``conn``) or PostgreSQL."""
        if self._pg is not None:
            with self._pg.transaction() as tx:
                fn(tx)
            return
        assert conn is not None
        conn.execute("BEGIN IMMEDIATE")
        try:
            fn(conn)
            conn.execute("COMMIT")
        except BaseException:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            raise

    def _apply(self, conn: sqlite3.Connection | None, records: list[dict[str, Any]]) -> None:
        """Apply journal records in one transaction."""
        self._in_transaction(conn, lambda c: _apply_all(c, records))

    def _apply_isolated(self, conn: sqlite3.Connection | None, records: list[dict[str, Any]], where: str) -> None:
        """Apply records; a record the database refuses is set aside and the others are stored. Raises only when
        the database is away (the caller retries; nothing was set aside then)."""
        if not records:
            return
        try:
            self._apply(conn, records)
            return
        except Exception as e:
            if self._away(e):
                raise
        refused: list[tuple[dict[str, Any], BaseException]] = []
        self._in_transaction(conn, lambda c: self._each(c, records, refused))
        forget = False
        for rec, err in refused:
            self._dead.put(f"{type(err).__name__}: {err}", where=where, record=rec)
            forget = forget or rec.get("t") in ("msg", "cell")
        if forget:  # later turns must carry that message again rather than point at it
            with self._lock:
                self._forget()

    def _each(
        self, conn: sqlite3.Connection, records: list[dict[str, Any]], refused: list[tuple[dict[str, Any], Any]]
    ) -> None:
        for rec in records:
            conn.execute("SAVEPOINT metaclaw_rec")
            try:
                _apply_all(conn, [rec])
            except Exception as e:
                conn.execute("ROLLBACK TO SAVEPOINT metaclaw_rec")
                conn.execute("RELEASE SAVEPOINT metaclaw_rec")
                if self._away(e):
                    raise
                refused.append((rec, e))
                continue
            conn.execute("RELEASE SAVEPOINT metaclaw_rec")

    def _away(self, e: BaseException) -> bool:
        """The database is away (retry later), as opposed to refusing this record's data."""
        if self._pg is not None:
            from .postgres import is_transient

            return is_transient(e)
        # OperationalError: locked, full, read-only, I/O error, no such table; DatabaseError itself: corrupt
        return isinstance(e, (sqlite3.OperationalError, SchemaTooNew, OSError)) or type(e) is sqlite3.DatabaseError

    def _transient(self, e: BaseException) -> bool:
        return self._away(e)

    # Request path --------------------------------------------------------------------------------
    def _message_records(
        self, msg: Message, out: list[dict[str, Any]], lines: list[str], *, redact: bool = True
    ) -> str:
        raw_key = _raw_key(msg)
        stored = self._known.get(raw_key)
        if stored is not None:
            self._known.move_to_end(raw_key)
            return stored
        clean = self.redactor.redact_obj(msg) if self.redactor and redact else msg
        text = _safe_text(_dumps(clean))
        if len(text) > self.max_message_bytes:
            clean = {"role": msg.get("role", "?"), "content": text[: self.max_message_bytes] + "…[truncated]"}
            text = _dumps(clean)
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
        with self._lock:
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
                    "tool_calls": _safe_text(_dumps(self._clean(turn.tool_calls))) if turn.tool_calls else None,
                    "usage": _dumps(turn.usage) if turn.usage else None,
                    "latency_ms": _finite(turn.latency_ms),
                    "injected": _dumps(turn.injected_skills),
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
                self._forget()  # what this turn cached as stored was never journaled: later turns carry it again
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
            "outcome": _dumps(self._clean(outcome)) if outcome else None,
            "reason": reason,
            "at": time.time(),
        }
        with self._lock:
            return self._commit_records([rec])

    def record_reward(self, turn_id: str, source: str, score: float, detail: Any = None) -> bool:
        rec = {
            "t": "reward",
            "turn_id": turn_id,
            "source": source,
            "score": float(score),
            "detail": _dumps(self._clean(detail)) if detail is not None else None,
            "at": time.time(),
        }
        with self._lock:
            return self._commit_records([rec])

    def _commit_records(self, records: list[dict[str, Any]], lines: list[str] | None = None) -> bool:
        """Journal the records (one frame), then queue them. True: queued; False: the queue is full, and they wait
        in the journal for the next start. Raises :class:`JournalWriteError` when the journal write failed: the
        records still go to the writer (best effort), but the caller must not acknowledge them."""
        if self._journal is None:
            raise RuntimeError("TrajectoryStore is not open")
        if lines is None:
            lines = [_line(r) for r in records]
        lines.append("")  # the last record's newline
        try:
            seg: str | None = self._journal.write("\n".join(lines))
        except JournalWriteError:
            self._forget()  # what this process remembers as stored may now exist nowhere: later turns carry it all
            try:
                self._queue.put_nowait((None, records))
            except queue.Full:
                pass
            raise
        try:
            self._queue.put_nowait((seg, records))
            return True
        except queue.Full:
            # Still durable in the journal: the segment is kept and replayed at the next start.
            self.dropped += 1
            self._journal.counts[seg][2] += 1  # type: ignore[index]
            return False

    def _forget(self) -> None:
        """Forget which messages, lists and tool sets are stored (call with ``self._lock`` held): turns from now
        on carry their rows again (inserted if absent)."""
        self._known.clear()
        self._known_lists.clear()
        self._prefixes.clear()
        self._prefix_bytes = 0
        self._tool_sets.clear()

    # Writer thread -----------------------------------------------------------------------------
    def _writer(self, _stop: threading.Event) -> None:
        stop = False
        batch: list[tuple[str | None, list[dict[str, Any]]]] = []  # not empty here only while the database is away
        backoff = 0.0
        while not stop:
            if (
                batch or self._orphans or self._replay_own_segments
            ):  # wait before the next try, taking what arrives meanwhile
                if backoff:
                    self._hurry.wait(backoff)
                    self._hurry.clear()
            else:
                item = self._queue.get()
                if item is None:
                    stop = True
                else:
                    batch.append(item)
                    if self._hurry.wait(WRITER_LINGER):
                        self._hurry.clear()
            while not stop and len(batch) < 512:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    stop = True
                    break
                batch.append(nxt)
            try:
                done = self._catch_up(last_try=stop) and (not batch or self._write_batch(batch, last_try=stop))
            except Exception:  # a fault of this code: logged and counted, and tried again like a database away
                log.exception("trajectory writer failed; retrying")
                self.write_errors += 1
                self._drop_conn()
                done = False
            if done:
                batch, backoff = [], 0.0
            elif stop:
                self._give_up(batch, "the database is still unavailable at shutdown")
                batch = []
            else:
                backoff = min(RETRY_MAX, backoff * 2 or 0.2)
            self.retrying = sum(len(r) for _, r in batch)
        # the connection stays open for close(), which syncs it before deleting the journal segments

    def _catch_up(self, last_try: bool) -> bool:
        """Replay what must go in before new records: segments of earlier processes, and this process's own after
        its database file was lost. False while the database is away."""
        try:
            conn = self._db()
            while self._orphans:
                seg = self._orphans[0]
                self.replayed += self._replay(conn, seg)
                _discard(seg)
                self._orphans.pop(0)
            if self._replay_own_segments:
                self._replay_own(conn)
            return True
        except Exception as e:
            if not self._away(e):
                raise  # a fault of this code, not of the data or the database: logged by the writer loop
            self.write_errors += 1
            self._after_error(e)
            if last_try or self.write_errors == 1 or self.write_errors % 50 == 0:
                log.warning("database unavailable; the journal waits for it: %s", e)
            return False

    def _replay_own(self, conn: sqlite3.Connection | None) -> None:
        """This process's segments into the database (idempotent): after its file was lost, or after the full queue
        left turns only in the journal."""
        journal = self._journal
        if journal is None:
            self._replay_own_segments = False
            return
        with self._lock:
            journal.rotate()  # every earlier segment is now complete
            segs = [s for s in journal.counts if s != journal.current]
        for name in segs:
            path = self.journal_dir / name
            if path.exists():
                self.replayed += self._replay(conn, path, where="replay after the database was lost")
        with self._lock:
            for name in segs:
                counts = journal.counts.get(name)
                if counts is not None:
                    counts[1], counts[2] = max(counts[0], counts[1]), 0
        self._replay_own_segments = False

    def _give_up(self, batch: list[tuple[str | None, list[dict[str, Any]]]], why: str) -> None:
        log.error("trajectory write failed (kept in the journal for the next start): %s", why)
        if self._journal is not None:
            for seg, _ in batch:
                counts = self._journal.counts.get(seg) if seg is not None else None
                if counts is not None:  # (a segment replayed whole after a lost database is gone already)
                    counts[2] += 1

    def _queue_closing(self) -> bool:
        return self._closing.is_set()

    def _write_batch(self, batch: list[tuple[str | None, list[dict[str, Any]]]], last_try: bool = True) -> bool:
        """Move a batch into the database. False when the database is away and the batch should be tried again."""
        try:
            self._apply_isolated(self._db(), [rec for _, records in batch for rec in records], "writer")
        except Exception as e:
            if not self._away(e):
                raise
            self.write_errors += 1
            self._after_error(e)
            if not last_try:
                if self.write_errors == 1 or self.write_errors % 50 == 0:
                    log.warning("database unavailable; %d turn batches wait in the journal: %s", len(batch), e)
                return False
            self._give_up(batch, str(e))
            return True
        journal = self._journal
        with self._lock:
            for seg, _ in batch:
                self.written += 1
                counts = journal.counts.get(seg) if journal is not None and seg is not None else None
                if counts is not None:
                    counts[1] += 1
            finished = journal.finished_segments() if journal is not None else []
            # turns the full queue left only in the journal go in now that the writer has caught up
            if journal is not None and self._queue.empty() and any(d for _, _, d in journal.counts.values()):
                self._replay_own_segments = True
        self._prune_segments(finished)
        return True

    def _prune_segments(self, names: list[str]) -> None:
        """Delete journal segments whose records are all stored, once those are durable in the database."""
        if not names or not self._durable():
            return
        with self._lock:
            for name in names:
                (self.journal_dir / name).unlink(missing_ok=True)
                if self._journal is not None:
                    self._journal.counts.pop(name, None)

    def _durable(self) -> bool:
        """SQLite: the file written is still the one at the path, and its WAL and file are synced to disk (commits
        are not fsynced one by one: synchronous=NORMAL). PostgreSQL commits are durable when they return."""
        if self._pg is not None:
            return True
        st = _stat(self.db_path)
        if st is None or (st.st_dev, st.st_ino) != self._db_id or st.st_size < 512:
            return False  # lost: the next batch notices, creates it again and replays these segments
        try:
            for path in (self.db_path, Path(f"{self.db_path}-wal")):
                if path.exists():
                    fd = os.open(path, os.O_RDONLY)
                    try:
                        os.fsync(fd)
                    finally:
                        os.close(fd)
        except OSError as e:
            log.warning("database not synced to disk; journal segments kept: %s", e)
            return False
        return True

    def _replay(self, conn: sqlite3.Connection | None, seg: Path, where: str = "replay") -> int:
        """Apply a journal segment: whole frames (and old unframed lines); torn or unreadable pieces and records the
        database refuses are set aside. Raises only when the database is away."""
        try:
            content = read_segment(seg)
        except OSError as e:  # not a file one can read (a folder, an I/O error): left where it is
            log.error("journal segment %s not readable, left in place: %s", seg, e)
            return 0
        records = [rec for group in content.groups for rec in group]
        self._apply_isolated(conn, records, f"{where} of {seg.name}")
        for reason, raw in content.bad:  # after the apply: a retry (database away) must not set them aside twice
            self._dead.put(reason, where=f"{where} of {seg.name}", raw=raw)
        n = sum(1 for rec in records if rec.get("t") == "turn")
        if n:
            log.info("replayed %d turns from journal %s", n, seg.name)
        return n

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every queued record is in SQLite (for tests, the CLI and shutdown). Records the full queue
        left in the journal count while their replay is due: the writer's last batch sets it (under the lock that
        this reads with) and its next pass replays them."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._hurry.set()
            with self._lock:
                j = self._journal
                due = self._replay_own_segments
                pending = sum(w - c - (0 if due else d) for w, c, d in j.counts.values()) if j else 0
            if pending <= 0:
                return True
            time.sleep(0.005)
        return False

    @property
    def queued(self) -> int:
        return self._queue.qsize()

    # Reads --------------------------------------------------------------------------------------
    def _read(self, sql: str, args: Iterable[Any] = ()) -> list[sqlite3.Row]:
        if self._pg is not None:
            return self._pg.query(sql, args)  # type: ignore[return-value]
        with self._read_lock:
            st = _stat(self.db_path)
            if self._reader is not None and (st is None or (st.st_dev, st.st_ino) != self._reader_id):
                self._reader.close()  # the file was deleted or replaced: read the one at the path now
                self._reader = None
            if self._reader is None:
                if st is None:
                    return []
                self._reader = connect(self.db_path, rows=True)
                self._reader_id = (st.st_dev, st.st_ino)
            return self._reader.execute(sql, tuple(args)).fetchall()

    def list_sessions(self, limit: int = 50, tenant: str | None = None) -> list[dict[str, Any]]:
        where, args = ("WHERE tenant = ?", [tenant]) if tenant else ("", [])
        rows = self._read(f"SELECT * FROM sessions {where} ORDER BY last_at DESC LIMIT ?", [*args, int(limit)])
        return [_session_dict(r) for r in rows]

    def _message(self, h: str | None) -> Message | None:
        if not h:
            return None
        rows = self._read("SELECT content FROM messages WHERE hash = ?", [h])
        return _loads(rows[0]["content"]) if rows else {"role": "unknown", "content": "[missing]"}

    def _tools(self, h: str | None) -> list[dict[str, Any]] | None:
        if not h:
            return None
        rows = self._read("SELECT content FROM messages WHERE hash = ?", [h])
        tools = _loads(rows[0]["content"]) if rows else None
        return tools if isinstance(tools, list) else None

    def _messages(self, list_hash: str, block_hash: str | None) -> list[Message]:
        rows = self._read(
            """WITH RECURSIVE chain(hash, prev, msg, depth) AS (
                 SELECT hash, prev, msg, 0 FROM msg_lists WHERE hash = ?
                 UNION ALL SELECT l.hash, l.prev, l.msg, c.depth + 1 FROM msg_lists l JOIN chain c ON l.hash = c.prev)
               SELECT m.content FROM chain LEFT JOIN messages m ON m.hash = chain.msg ORDER BY depth DESC""",
            [list_hash],
        )
        block = self._message(block_hash)
        block_text = block.get("content") if block else None
        return [
            _join_block(
                _loads(r["content"]) if r["content"] else {"role": "unknown", "content": "[missing]"}, block_text
            )
            for r in rows
        ]

    def get_session(self, session_id: str, tenant: str | None = None) -> Session | None:
        if tenant is None:
            srows = self._read(
                "SELECT * FROM sessions WHERE session_id = ? ORDER BY last_at DESC LIMIT 1", [session_id]
            )
        else:
            srows = self._read("SELECT * FROM sessions WHERE session_id = ? AND tenant = ?", [session_id, tenant])
        if not srows:
            return None
        s = srows[0]
        outcome = _loads(s["outcome"]) if s["outcome"] else None
        session = Session(
            session_id=s["session_id"],
            tenant=s["tenant"],
            host=s["host"] or "unknown",
            started_at=_finite(s["started_at"]) or 0.0,
            last_at=_finite(s["last_at"]) or 0.0,
            ended_at=_finite(s["ended_at"]),
            outcome=outcome,
        )
        for r in self._read(
            "SELECT * FROM turns WHERE tenant = ? AND session_id = ? ORDER BY seq", [s["tenant"], s["session_id"]]
        ):
            session.turns.append(self._turn(r))
        return session

    def sessions_named(self, given: str, tenant: str | None = None) -> list[dict[str, Any]]:
        """The sessions stored under an id as a host gave it: the id itself and each user's session of it
        (``<given>~u<16 hex>``, see ``metaclaw_plugin.sessions``), most recent first."""
        where, args = (" AND tenant = ?", [tenant]) if tenant else ("", [])
        rows = self._read(
            f"SELECT * FROM sessions WHERE (session_id = ? OR (length(session_id) = ? AND substr(session_id, 1, ?) = ?))"
            f"{where} ORDER BY last_at DESC LIMIT 1000",
            [given, len(given) + 18, len(given) + 2, given + "~u", *args],
        )
        return [_session_dict(r) for r in rows]

    def open_sessions(self, before: float, limit: int = 500) -> list[dict[str, Any]]:
        """Sessions with no end whose last turn is older than ``before``, oldest first (the idle sweep of sessions
        an earlier process left open)."""
        rows = self._read(
            "SELECT * FROM sessions WHERE ended_at IS NULL AND last_at < ? ORDER BY last_at LIMIT ?",
            [before, int(limit)],
        )
        return [_session_dict(r) for r in rows]

    def fingerprinted_sessions(self, limit: int = 200_000) -> list[str]:
        """The most recent session ids made for conversations that named none (``fp-...``), newest first."""
        rows = self._read(
            "SELECT session_id FROM sessions WHERE substr(session_id, 1, 3) = 'fp-' ORDER BY last_at DESC LIMIT ?",
            [int(limit)],
        )
        return [r["session_id"] for r in rows]

    def has_session(self, session_id: str, tenant: str | None = None) -> bool:
        where, args = (" AND tenant = ?", [tenant]) if tenant else ("", [])
        return bool(self._read(f"SELECT 1 FROM sessions WHERE session_id = ?{where} LIMIT 1", [session_id, *args]))

    def get_turn(self, turn_id: str) -> Turn | None:
        """One turn with its messages as sent (the injected skill block in place), for building samples."""
        rows = self._read("SELECT * FROM turns WHERE turn_id = ?", [turn_id])
        return self._turn(rows[0]) if rows else None

    def _turn(self, r: sqlite3.Row) -> Turn:
        return Turn(
            turn_id=r["turn_id"],
            session_id=r["session_id"],
            tenant=r["tenant"],
            kind=r["kind"],
            messages=self._messages(r["list_hash"], r["block_hash"]),
            response=self._message(r["response_hash"]),
            tools=self._tools(r["tools_hash"]),
            tool_calls=_loads(r["tool_calls"]) if r["tool_calls"] else [],
            model=r["model"],
            usage=_loads(r["usage"]) if r["usage"] else None,
            latency_ms=_finite(r["latency_ms"]),
            injected_skills=_loads(r["injected"]) if r["injected"] else [],
            skill_generation=r["generation"],
            error=r["error"],
            host=r["host"] or "unknown",
            user=r["user"],
            created_at=r["created_at"],
            seq=r["seq"],
        )

    def rewards(self, turn_id: str) -> list[dict[str, Any]]:
        return [dict(r) for r in self._read("SELECT * FROM rewards WHERE turn_id = ? ORDER BY id", [turn_id])]

    def counts(self) -> dict[str, int]:
        out = {}
        for table in ("sessions", "turns", "messages", "rewards"):
            rows = self._read(f"SELECT COUNT(*) AS n FROM {table}")
            out[table] = int(rows[0]["n"]) if rows else 0
        return out

    # Retention ----------------------------------------------------------------------------------
    def prune(self, older_than_days: float) -> int:
        """Delete sessions (and what only they referenced) whose last turn is older than the cutoff."""
        if older_than_days <= 0:
            return 0
        cutoff = time.time() - older_than_days * 86400
        # Forget what is already stored (by message, list and session) before deleting: a turn that refers
        # to a remembered row would point at a deleted one. Turns from now on carry their rows again (inserted
        # if absent), and those queued before are flushed first, so the delete sees them as live.
        with self._lock:
            self._forget()
        self.flush()
        if self._pg is not None:
            with self._pg.transaction() as tx:
                return _prune(tx, cutoff, collect=False)  # type: ignore[arg-type]
        conn = connect(self.db_path)
        try:
            conn.execute("BEGIN IMMEDIATE")
            n = _prune(conn, cutoff, collect=True)
            conn.execute("COMMIT")
            return n
        finally:
            conn.close()


def _discard(seg: Path) -> None:
    try:
        seg.unlink(missing_ok=True)
    except OSError as e:
        log.error("journal segment %s not removed: %s", seg, e)


def _stat(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def _prune(conn: sqlite3.Connection, cutoff: float, *, collect: bool) -> int:
    """Delete old sessions with their turns and rewards; ``collect``: also the messages only they referenced.
    Not on PostgreSQL: other hosts remember which messages are stored, and would point at collected ones."""
    old = conn.execute("SELECT tenant, session_id FROM sessions WHERE last_at < ?", [cutoff]).fetchall()
    for tenant, sid in old:
        conn.execute(
            "DELETE FROM rewards WHERE turn_id IN (SELECT turn_id FROM turns WHERE tenant=? AND session_id=?)",
            [tenant, sid],
        )
        conn.execute("DELETE FROM turns WHERE tenant=? AND session_id=?", [tenant, sid])
        conn.execute("DELETE FROM sessions WHERE tenant=? AND session_id=?", [tenant, sid])
    if old and collect:
        conn.execute(
            """WITH RECURSIVE live(hash) AS (
                 SELECT list_hash FROM turns UNION SELECT l.prev FROM msg_lists l JOIN live ON l.hash = live.hash)
               DELETE FROM msg_lists WHERE hash NOT IN (SELECT hash FROM live)"""
        )
        conn.execute(
            """DELETE FROM messages WHERE hash NOT IN (SELECT msg FROM msg_lists)
               AND hash NOT IN (SELECT response_hash FROM turns WHERE response_hash IS NOT NULL)
               AND hash NOT IN (SELECT block_hash FROM turns WHERE block_hash IS NOT NULL)
               AND hash NOT IN (SELECT tools_hash FROM turns WHERE tools_hash IS NOT NULL)"""
        )
    return len(old)


_BULK = frozenset(("msg", "cell", "turn"))
_TURN_COLS = (
    "turn_id", "tenant", "session_id", "kind", "host", "user", "model", "list_hash", "block_hash",
    "response_hash", "tools_hash", "tool_calls", "usage", "latency_ms", "injected", "generation", "error",
    "created_at",
)  # fmt: skip


def _apply_all(conn: sqlite3.Connection, records: list[dict[str, Any]]) -> None:
    """Apply journal records in order, inside the caller's transaction.

    Runs of messages, list cells and turns go in a few multi-row statements rather than several per
    turn: each statement step releases and retakes the GIL, and in a busy host every retake waits on
    the host's request thread (measured in the LiteLLM proxy: the per-row version cost ~4% of its
    throughput). Session ends and rewards keep their place in the order."""
    run: list[dict[str, Any]] = []
    for rec in records:
        if rec.get("t") in _BULK:
            run.append(rec)
            continue
        _apply_run(conn, run)
        run = []
        _apply_event(conn, rec)
    _apply_run(conn, run)


def _insert_rows(conn: sqlite3.Connection, head: str, rows: list[tuple[Any, ...]], width: int, tail: str = "") -> None:
    per = max(1, 900 // width)  # stay under SQLite's bound-parameter limit
    for i in range(0, len(rows), per):
        chunk = rows[i : i + per]
        marks = ",".join(["(" + ",".join("?" * width) + ")"] * len(chunk))
        conn.execute(head + marks + tail, [v for row in chunk for v in row])


def _apply_run(conn: sqlite3.Connection, run: list[dict[str, Any]]) -> None:
    if not run:
        return
    msgs: dict[str, str] = {}
    cells: dict[str, tuple[str, str]] = {}
    turns: list[dict[str, Any]] = []
    for rec in run:
        t = rec["t"]
        if t == "msg":
            c = rec["c"]  # the canonical text; a replayed journal line holds it as JSON
            msgs.setdefault(rec["h"], c if isinstance(c, str) else _dumps(c))
        elif t == "cell":
            cells.setdefault(rec["h"], (rec["p"], rec["m"]))
        else:
            # numbers as the columns hold them: a non-finite latency is null, a turn without a time is refused;
            # so is one without an id (SQLite would key it by NULL, never to be found or deduplicated)
            if not isinstance(rec["turn_id"], str) or not rec["turn_id"]:
                raise ValueError(f"turn_id is not a non-empty string: {rec['turn_id']!r:.80}")
            rec = {
                **rec,
                "latency_ms": _finite(rec.get("latency_ms")),
                "created_at": _required(rec["created_at"], "created_at"),
            }
            turns.append(rec)
    _insert_rows(conn, "INSERT OR IGNORE INTO messages(hash, content) VALUES ", list(msgs.items()), 2)
    _insert_rows(
        conn, "INSERT OR IGNORE INTO msg_lists(hash, prev, msg) VALUES ", [(h, *pm) for h, pm in cells.items()], 3
    )
    if not turns:
        return
    # A turn already stored (a journal replayed twice) or repeated in the run is applied once.
    ids = list(dict.fromkeys(r["turn_id"] for r in turns))
    seen: set[str] = set()
    for i in range(0, len(ids), 900):
        chunk = ids[i : i + 900]
        sql = f"SELECT turn_id FROM turns WHERE turn_id IN ({','.join('?' * len(chunk))})"
        seen.update(row[0] for row in conn.execute(sql, chunk))
    fresh = []
    for r in turns:
        if r["turn_id"] not in seen:
            seen.add(r["turn_id"])
            fresh.append(r)
    if not fresh:
        return
    # Sessions: one upsert row each, with the run's turn count; a turn after the session's end reopens it.
    sessions: dict[tuple[str, str], list[Any]] = {}
    for r in fresh:
        key = (r["tenant"], r["session_id"])
        at = r["created_at"]
        agg = sessions.get(key)
        if agg is None:
            sessions[key] = [r.get("host"), at, at, 1]
        else:
            agg[2] = max(agg[2], at)
            agg[3] += 1
    _insert_rows(
        conn,
        "INSERT INTO sessions(tenant, session_id, host, started_at, last_at, turn_count) VALUES ",
        [(*key, *agg) for key, agg in sessions.items()],
        6,
        """ ON CONFLICT(tenant, session_id) DO UPDATE SET last_at = MAX(last_at, excluded.last_at),
        turn_count = turn_count + excluded.turn_count,
        ended_at = CASE WHEN ended_at IS NOT NULL AND excluded.last_at > ended_at THEN NULL ELSE ended_at END,
        end_reason = CASE WHEN ended_at IS NOT NULL AND excluded.last_at > ended_at THEN NULL ELSE end_reason END""",
    )
    seq: dict[tuple[str, str], int] = {key: 0 for key in sessions}
    keys = list(sessions)
    for i in range(0, len(keys), 400):
        chunk = keys[i : i + 400]
        sql = (
            "SELECT tenant, session_id, MAX(seq) FROM turns WHERE (tenant, session_id) IN (VALUES "
            + ",".join(["(?,?)"] * len(chunk))
            + ") GROUP BY tenant, session_id"
        )
        for tenant, sid, top in conn.execute(sql, [v for key in chunk for v in key]):
            seq[(tenant, sid)] = top or 0
    rows = []
    for r in fresh:
        key = (r["tenant"], r["session_id"])
        seq[key] += 1
        rows.append((seq[key], *[r.get(c) for c in _TURN_COLS]))
    _insert_rows(conn, f"INSERT INTO turns(seq, {', '.join(_TURN_COLS)}) VALUES ", rows, 1 + len(_TURN_COLS))


def _apply_event(conn: sqlite3.Connection, rec: dict[str, Any]) -> None:
    t = rec.get("t")
    if t == "end":
        conn.execute(
            """INSERT INTO sessions(tenant, session_id, started_at, last_at, ended_at, outcome, end_reason)
               VALUES (?, ?, ?, ?, ?, ?, ?)
               ON CONFLICT(tenant, session_id) DO UPDATE SET ended_at = excluded.ended_at,
               outcome = COALESCE(excluded.outcome, outcome), end_reason = excluded.end_reason
               WHERE excluded.ended_at >= last_at""",  # an end older than the last turn (a replay) is stale
            (
                rec["tenant"],
                rec["session_id"],
                *[_required(rec["at"], "at")] * 3,
                rec.get("outcome"),
                rec.get("reason"),
            ),
        )
    elif t == "reward":
        conn.execute(
            """INSERT INTO rewards(turn_id, source, score, detail, created_at) VALUES (?, ?, ?, ?, ?)
               ON CONFLICT(turn_id, source) DO UPDATE SET score = excluded.score, detail = excluded.detail""",
            (
                rec["turn_id"],
                rec["source"],
                _required(rec["score"], "score"),
                rec.get("detail"),
                _required(rec["at"], "at"),
            ),
        )


def _session_dict(r: sqlite3.Row) -> dict[str, Any]:
    return {
        "session_id": r["session_id"],
        "tenant": r["tenant"],
        "host": r["host"],
        "started_at": _finite(r["started_at"]),
        "last_at": _finite(r["last_at"]),
        "ended_at": _finite(r["ended_at"]),
        "end_reason": r["end_reason"],
        "outcome": _loads(r["outcome"]) if r["outcome"] else None,
        "turns": r["turn_count"],
    }


def turn_dict(turn: Turn, rewards: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    d = asdict(turn)
    d["reward"] = rewards or []
    return d
