"""The trajectory store's writer: one thread (a :class:`~metaclaw_plugin.infra.service.Service`) that moves journal records
into the database in batches, and replays at start-up what earlier processes left in the journal (idempotently).

Why isolation: no record may block its neighbours or the start-up. A batch the database refuses is
written again record by record (each in a savepoint); a record it still refuses is set aside in the
dead-letter file (see :mod:`.journal`), and the rest is stored. A database that is away (locked, full,
read-only, unreachable) is retried, the journal keeping everything meanwhile; a database file deleted,
truncated or replaced under the process is noticed, created again, and this process's journal segments
are replayed into it. A segment is deleted only once its records are durably in the database.
"""

from __future__ import annotations

import logging
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..infra.service import Service
from ..privacy import Redactor
from .journal import DeadLetter, Journal, read_segment
from .records import Batch, Recorder, dumps, finite
from .sqlite import SchemaTooNew, connect, file_stat

if TYPE_CHECKING:
    from .postgres import PostgresDatabase

log = logging.getLogger("metaclaw_plugin.store")

WRITER_LINGER = 0.2  # seconds the writer waits for more turns, so a quiet proxy commits a few per transaction
RETRY_MAX = 5.0  # at most this many seconds between tries while the database is unreachable


class Writer:
    """Moves what :class:`~.records.Recorder` journals and queues into the database. ``on_lost``: called when the
    database file was lost (the readers then open the new one)."""

    def __init__(
        self,
        db_path: Path,
        journal_dir: Path,
        records: Recorder,
        *,
        redactor: Redactor | None,
        database: PostgresDatabase | None,
        on_lost: Callable[[], None],
    ):
        self.db_path = db_path
        self.journal_dir = journal_dir
        self.records = records
        self._pg = database
        self._on_lost = on_lost
        self._hurry = threading.Event()  # set by flush()/close(): the writer skips its linger
        self.service = Service("metaclaw-store-writer", self._run, wake=self._wake)
        self._conn: sqlite3.Connection | None = None  # the writer's (SQLite)
        self._db_id: tuple[int, int] | None = None  # (device, inode) of the file self._conn has open
        # this process's segments must be replayed: the database file under it was lost, or the queue overflowed
        self._replay_own_segments = False
        self.dead = DeadLetter(db_path, redactor)
        self.written = 0
        self.replayed = 0
        self.write_errors = 0
        self.db_recreated = 0  # database files found deleted, truncated, replaced or corrupt, and created again
        self.retrying = 0  # records waiting for the database to come back
        self._orphans: list[Path] = []

    def recover(self) -> None:
        """Take up what earlier processes left in the journal, before this process opens a segment of its own.
        Never raises for a bad journal or a database that is away: the writer replays it when the database
        returns."""
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

    def close(self) -> None:
        """Drain the queue into the database (when running), delete the journal segments whose records are all
        stored, and close the connection."""
        if self.service.running:
            self.service.stop(30)
        journal = self.records.journal
        if journal is not None:
            journal.close()
            done = [seg for seg, (w, c, d) in journal.counts.items() if c >= w and not d]
            self._prune_segments(done)
            self.records.journal = None
        self._drop_conn()

    def _wake(self) -> None:
        self.records.queue.put(None)
        self._hurry.set()

    # The database, as the writer sees it -----------------------------------------------------------
    def _db(self) -> sqlite3.Connection | None:
        """The writer's SQLite connection, opened again (and the file created again) when the file under it was
        deleted, truncated or replaced. PostgreSQL: None (its pool reconnects by itself)."""
        if self._pg is not None:
            return None
        st = file_stat(self.db_path)
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
        self._on_lost()

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
            self.dead.put(f"{type(err).__name__}: {err}", where=where, record=rec)
            forget = forget or rec.get("t") in ("msg", "cell")
        if forget:  # later turns must carry that message again rather than point at it
            with self.records.lock:
                self.records.forget()

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

    # Writer thread -----------------------------------------------------------------------------
    def _run(self, _stop: threading.Event) -> None:
        stop = False
        batch: list[Batch] = []  # not empty here only while the database is away
        backoff = 0.0
        while not stop:
            if (
                batch or self._orphans or self._replay_own_segments
            ):  # wait before the next try, taking what arrives meanwhile
                if backoff:
                    self._hurry.wait(backoff)
                    self._hurry.clear()
            else:
                item = self.records.queue.get()
                if item is None:
                    stop = True
                else:
                    batch.append(item)
                    if self._hurry.wait(WRITER_LINGER):
                        self._hurry.clear()
            while not stop and len(batch) < 512:
                try:
                    nxt = self.records.queue.get_nowait()
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
        journal = self.records.journal
        if journal is None:
            self._replay_own_segments = False
            return
        with self.records.lock:
            journal.rotate()  # every earlier segment is now complete
            segs = [s for s in journal.counts if s != journal.current]
        for name in segs:
            path = self.journal_dir / name
            if path.exists():
                self.replayed += self._replay(conn, path, where="replay after the database was lost")
        with self.records.lock:
            for name in segs:
                counts = journal.counts.get(name)
                if counts is not None:
                    counts[1], counts[2] = max(counts[0], counts[1]), 0
        self._replay_own_segments = False

    def _give_up(self, batch: list[Batch], why: str) -> None:
        log.error("trajectory write failed (kept in the journal for the next start): %s", why)
        if self.records.journal is not None:
            for seg, _ in batch:
                counts = self.records.journal.counts.get(seg) if seg is not None else None
                if counts is not None:  # (a segment replayed whole after a lost database is gone already)
                    counts[2] += 1

    def _write_batch(self, batch: list[Batch], last_try: bool = True) -> bool:
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
        journal = self.records.journal
        with self.records.lock:
            for seg, _ in batch:
                self.written += 1
                counts = journal.counts.get(seg) if journal is not None and seg is not None else None
                if counts is not None:
                    counts[1] += 1
            finished = journal.finished_segments() if journal is not None else []
            # turns the full queue left only in the journal go in now that the writer has caught up
            if journal is not None and self.records.queue.empty() and any(d for _, _, d in journal.counts.values()):
                self._replay_own_segments = True
        self._prune_segments(finished)
        return True

    def _prune_segments(self, names: list[str]) -> None:
        """Delete journal segments whose records are all stored, once those are durable in the database."""
        if not names or not self._durable():
            return
        with self.records.lock:
            for name in names:
                (self.journal_dir / name).unlink(missing_ok=True)
                if self.records.journal is not None:
                    self.records.journal.counts.pop(name, None)

    def _durable(self) -> bool:
        """SQLite: the file written is still the one at the path, and its WAL and file are synced to disk (commits
        are not fsynced one by one: synchronous=NORMAL). PostgreSQL commits are durable when they return."""
        if self._pg is not None:
            return True
        st = file_stat(self.db_path)
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
            self.dead.put(reason, where=f"{where} of {seg.name}", raw=raw)
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
            with self.records.lock:
                j = self.records.journal
                due = self._replay_own_segments
                pending = sum(w - c - (0 if due else d) for w, c, d in j.counts.values()) if j else 0
            if pending <= 0:
                return True
            time.sleep(0.005)
        return False


def _discard(seg: Path) -> None:
    try:
        seg.unlink(missing_ok=True)
    except OSError as e:
        log.error("journal segment %s not removed: %s", seg, e)


def _required(v: Any, what: str) -> float:
    f = finite(v)
    if f is None:
        raise ValueError(f"{what} is not a finite number: {v!r:.80}")
    return f


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
            msgs.setdefault(rec["h"], c if isinstance(c, str) else dumps(c))
        elif t == "cell":
            cells.setdefault(rec["h"], (rec["p"], rec["m"]))
        else:
            # numbers as the columns hold them: a non-finite latency is null, a turn without a time is refused;
            # so is one without an id (SQLite would key it by NULL, never to be found or deduplicated)
            if not isinstance(rec["turn_id"], str) or not rec["turn_id"]:
                raise ValueError(f"turn_id is not a non-empty string: {rec['turn_id']!r:.80}")
            rec = {
                **rec,
                "latency_ms": finite(rec.get("latency_ms")),
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
