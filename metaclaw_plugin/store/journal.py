"""The journal's files: framed append-only segments, and the dead-letter file for what cannot be stored.

Why framing: a segment is appended by one ``write()`` per turn, and a write can stop part way (disk full, a
process killed in a large write). Each write is one frame, ``#<bytes> <crc32>\\n`` and then that many bytes of
JSON lines, so a reader tells a whole turn from a torn one and skips the torn bytes instead of gluing them to
the next record. A failed write is cut back off the file (``ftruncate``) and reported to the caller, never
acknowledged. Lines without a frame (journals of older releases) are still read, one JSON object a line.

Why a dead-letter file: a record the database refuses (an out-of-range number, a missing key, a torn line)
must neither block the records around it nor stop the home from starting. It is moved aside, redacted, with
the reason, to ``dead-letter.jsonl`` beside the database, where ``status`` and ``doctor`` count it.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import math
import os
import threading
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..infra.procs import pid_alive
from ..privacy import Redactor

log = logging.getLogger("metaclaw_plugin.store")

SEGMENT_BYTES = 8 * 1024 * 1024
DEAD_LETTER = "dead-letter.jsonl"
DEAD_LETTER_MAX = 64 * 1024 * 1024  # beyond this the file stops growing; what is set aside is still counted
DEAD_RAW_MAX = 64 * 1024  # at most this many characters of an unreadable piece are kept
DEAD_REDACT_MAX = 4 * 1024 * 1024  # this much of it is read (and redacted) to find what to keep


class JournalWriteError(OSError):
    """A turn could not be made durable (disk full, read-only home): it must not be acknowledged."""


def frame(payload: bytes) -> bytes:
    return b"#%d %08x\n" % (len(payload), zlib.crc32(payload)) + payload


@dataclass
class Segment:
    """What a segment holds: its records grouped by the write that made them, and the pieces it could not read."""

    groups: list[list[dict[str, Any]]] = field(default_factory=list)
    bad: list[tuple[str, bytes]] = field(default_factory=list)


def read_segment(path: Path) -> Segment:
    """Every whole frame (and unframed line) of a segment; torn or unparseable pieces go to ``bad``."""
    data = path.read_bytes()
    out = Segment()
    pos, n = 0, len(data)
    while pos < n:
        if data[pos : pos + 1] == b"\n":
            pos += 1
            continue
        if data[pos : pos + 1] == b"#":
            good, nxt = _frame_at(data, pos)
            if good is None:
                nxt = _resync(data, pos)
                out.bad.append(("torn or corrupt journal frame", data[pos:nxt]))
            else:
                records, bad = _lines(good)
                out.bad += bad
                if records:
                    out.groups.append(records)
            pos = nxt
            continue
        end = data.find(b"\n", pos)  # a line of an older, unframed journal
        end = n if end < 0 else end
        records, bad = _lines(data[pos:end])
        out.bad += bad
        if records:
            out.groups.append(records)
        pos = end + 1
    return out


def _frame_at(data: bytes, pos: int) -> tuple[bytes | None, int]:
    head_end = data.find(b"\n", pos, pos + 40)
    if head_end < 0:
        return None, pos
    try:
        size_s, crc_s = data[pos + 1 : head_end].split(b" ")
        size, crc = int(size_s), int(crc_s, 16)
    except ValueError:
        return None, pos
    body = data[head_end + 1 : head_end + 1 + size]
    if size < 0 or len(body) != size or zlib.crc32(body) != crc:
        return None, pos
    return body, head_end + 1 + size


def _resync(data: bytes, pos: int) -> int:
    """The start of the next frame after a torn one (a frame always starts a line)."""
    nxt = data.find(b"\n#", pos + 1)
    return len(data) if nxt < 0 else nxt + 1


def _lines(chunk: bytes) -> tuple[list[dict[str, Any]], list[tuple[str, bytes]]]:
    records: list[dict[str, Any]] = []
    bad: list[tuple[str, bytes]] = []
    for line in chunk.split(b"\n"):
        if not line.strip():
            continue
        try:
            rec = json.loads(line.decode("utf-8", "replace"))
        except (ValueError, RecursionError) as e:
            bad.append((f"unparseable journal line: {type(e).__name__}", line))
            continue
        if isinstance(rec, dict):
            records.append(rec)
        else:
            bad.append(("journal line is not an object", line))
    return records, bad


class Journal:
    """Append-only segments named by process, so processes sharing a home never interleave.

    ``counts``: segment -> [written, committed, dropped] (dropped: not queued, replayed at the next start)."""

    def __init__(self, folder: Path, fsync: bool):
        self.folder = folder
        self.fsync = fsync
        self._tag = f"{os.getpid()}-{int(time.time() * 1000)}"
        self._seq = 0
        self._fd = -1
        self._size = 0
        self.counts: dict[str, list[int]] = {}
        self.current = ""
        self.errors = 0  # writes that failed (not acknowledged)
        self.last_error = ""
        try:
            self._open_next()
        except OSError as e:  # a read-only or full home: every write tries again, and fails visibly meanwhile
            self._failed(e)

    def _open_next(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._seq += 1
        name = f"{self._tag}-{self._seq:06d}.jsonl"
        self._fd = os.open(self.folder / name, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        if self.fsync:  # the new name is durable too
            dfd = os.open(self.folder, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        self.current = name
        self._size = os.fstat(self._fd).st_size
        self.counts.setdefault(name, [0, 0, 0])

    def _failed(self, e: OSError) -> None:
        self.errors += 1
        self.last_error = f"{errno.errorcode.get(e.errno or 0, type(e).__name__)}: {e.strerror or e}"
        if self.errors == 1 or self.errors % 100 == 0:
            log.error("journal write failed (%d so far; turns are not acknowledged): %s", self.errors, e)

    def write(self, lines: str) -> str:
        """Append one frame; the segment it went to. Raises :class:`JournalWriteError` when it is not all on disk."""
        payload = lines.encode("utf-8", "replace")
        data = frame(payload)
        try:
            if self._fd < 0:
                self._open_next()
            start = self._size
            done = 0
            try:
                while done < len(data):
                    done += os.write(self._fd, data[done:])
                if self.fsync:
                    os.fsync(self._fd)
            except OSError:
                self._cut(start)
                raise
        except OSError as e:
            self._failed(e)
            raise JournalWriteError(e.errno or errno.EIO, f"journal write failed: {e.strerror or e}") from e
        seg = self.current
        self.counts[seg][0] += 1
        self._size += len(data)
        if self._size >= SEGMENT_BYTES:
            try:
                self._open_next()
            except OSError as e:  # this write is durable; the next one tries to open a segment again
                self._failed(e)
                self._fd = -1
        return seg

    def _cut(self, start: int) -> None:
        """Take a partial write back off the file; if that fails too, leave the segment (its torn tail is
        skipped by the reader) so the next record does not follow the torn bytes."""
        try:
            os.ftruncate(self._fd, start)
        except OSError:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = -1

    def rotate(self) -> None:
        """Start a new segment, so every earlier one is complete and can be read back whole."""
        try:
            self._open_next()
        except OSError as e:
            self._failed(e)
            self._fd = -1

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def finished_segments(self) -> list[str]:
        return [s for s, (w, c, d) in self.counts.items() if s != self.current and c >= w and not d]

    @staticmethod
    def orphans(folder: Path) -> list[Path]:
        """Segments left by processes that are gone (or by this one before a restart)."""
        out = []
        for p in sorted(folder.glob("*.jsonl")):
            try:
                pid = int(p.name.split("-", 1)[0])
            except ValueError:
                continue
            alive = pid != os.getpid() and pid_alive(pid)
            if not alive:
                out.append(p)
        return out


def dead_letter_path(db_path: Path) -> Path:
    return Path(db_path).expanduser().parent / DEAD_LETTER


def dead_letter_count(db_path: Path) -> int:
    """How many records a home has set aside (lines of its dead-letter file), for status and doctor."""
    try:
        with dead_letter_path(db_path).open("rb") as f:
            return sum(1 for line in f if line.strip())
    except OSError:
        return 0


class DeadLetter:
    """Where records that cannot be stored go, redacted, with the reason. Writing here never raises. A record this
    process already set aside (a segment replayed again after the database was lost) is not set aside twice."""

    def __init__(self, db_path: Path, redactor: Redactor | None):
        self.path = dead_letter_path(db_path)
        self.redactor = redactor
        self.count = 0  # set aside by this process
        self._seen: set[bytes] = set()
        self._lock = threading.Lock()

    def put(self, reason: str, *, where: str, record: Any = None, raw: bytes | None = None) -> None:
        """One line of ASCII JSON (no U+2028 or NEL that a line splitter would break it at)."""
        what: dict[str, Any] = {}
        try:
            if raw is not None:
                # Redact, then cut (a secret across the cut is whole when the redactor reads it), on a character
                # boundary (the cut is of the decoded text).
                text = raw[:DEAD_REDACT_MAX].decode("utf-8", "replace")
                text = (self.redactor.redact(text) if self.redactor else text)[:DEAD_RAW_MAX]
                what = {"raw": text, "raw_bytes": len(raw)}
            else:
                plain = self.redactor.redact_obj(_plain(record)) if self.redactor else _plain(record)
                text = json.dumps(plain, default=repr)
                what = {"record": plain} if len(text) <= DEAD_RAW_MAX else {"record_head": text[:DEAD_RAW_MAX]}
        except Exception as e:  # a record too odd even to describe: keep the reason
            what = {"unprintable": f"{type(e).__name__}: {e}"[:500]}
        body = json.dumps(what, default=repr)
        key = hashlib.blake2b(body.encode("utf-8", "replace"), digest_size=16).digest()
        with self._lock:
            if key in self._seen:
                return
            if len(self._seen) < 1_000_000:
                self._seen.add(key)
            self.count += 1
        log.error("journal record set aside (%s): %s", where, reason[:300])
        line = json.dumps({"at": time.time(), "where": where, "reason": reason[:2000], **what}, default=repr)
        data = (line + "\n").encode("utf-8", "replace")
        with self._lock:
            try:
                if self.path.exists() and self.path.stat().st_size + len(data) > DEAD_LETTER_MAX:
                    return
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                try:
                    os.write(fd, data)
                finally:
                    os.close(fd)
            except OSError as e:
                log.error("dead-letter file %s not written: %s", self.path, e)


def _plain(v: Any, depth: int = 0) -> Any:
    """A JSON-safe copy: non-finite floats and huge ints as text, unknown objects by ``repr``, depth bounded."""
    if depth > 50:
        return "[too deep]"
    if isinstance(v, dict):
        return {str(k): _plain(x, depth + 1) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x, depth + 1) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) > 2**63:
        try:
            return str(v)
        except ValueError:  # beyond Python's digit limit
            return f"[int of {v.bit_length()} bits]"
    if isinstance(v, str):
        return v.encode("utf-8", "replace").decode("utf-8")
    if v is None or isinstance(v, (bool, int, float)):
        return v
    return repr(v)[:2000]
