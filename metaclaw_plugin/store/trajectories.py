"""TrajectoryStore: sessions, turns and rewards in SQLite (WAL) or PostgreSQL, made durable by a journal.

Why a journal: a turn counts as completed when its response reaches the client, so it must be
on disk before the host returns. One ``write()`` of a line to an append-only file costs
microseconds and survives a killed process (the page cache keeps it); a synchronous SQLite commit
would cost far more on the request path. A background thread moves journal records into SQLite
in batches; at start-up, leftover journal segments are replayed (idempotently).

The store is three parts, one module each, behind this one entry: the journal side on the request path
(:mod:`.records`: a turn as content-addressed records, appended to the journal's files of :mod:`.journal` and
queued), the writer that applies them to the database and replays what was left (:mod:`.apply`), and the reads
and retention (:mod:`.queries`).
"""

from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..infra.service import Service
from ..privacy import Redactor
from ..types import Session, Turn
from .apply import Writer
from .journal import Journal
from .queries import PlacedTurn, Queries
from .records import Recorder

if TYPE_CHECKING:
    from .postgres import PostgresDatabase

__all__ = ["TrajectoryStore", "turn_dict"]


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
        self._journal_fsync = journal_fsync
        self.records = Recorder(redactor, max_message_bytes, queue_max)
        self.queries = Queries(self.db_path, database)
        self.writer = Writer(
            self.db_path,
            self.journal_dir,
            self.records,
            redactor=redactor,
            database=database,
            on_lost=self.queries.close,
        )

    # Lifecycle ---------------------------------------------------------------------------------
    def open(self) -> None:
        """Replay what earlier processes left in the journal and start the writer. Never raises for a bad
        journal or a database that is away: the writer replays it when the database returns."""
        if self.writer.service.running:
            return
        self.writer.recover()
        self.records.journal = Journal(self.journal_dir, self._journal_fsync)
        self.writer.service.start()

    def close(self) -> None:
        """Drain the writer (when open) and close the readers; a store only read from needs it too."""
        self.writer.close()
        self.queries.close()
        if self._pg is not None:
            self._pg.close()

    def services(self) -> list[Service]:
        return [self.writer.service]

    @property
    def backend(self) -> str:
        return "postgres" if self._pg is not None else "sqlite"

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every queued record is in the database (for tests, the CLI and shutdown)."""
        return self.writer.flush(timeout)

    # Counters, for status -------------------------------------------------------------------------
    @property
    def queued(self) -> int:
        return self.records.queue.qsize()

    @property
    def dropped(self) -> int:
        """Commits the full queue left in the journal only (replayed by the writer, or at the next start)."""
        return self.records.dropped

    @property
    def journal_errors(self) -> int:
        """Journal writes that failed (disk full, read-only home): those turns were not acknowledged."""
        journal = self.records.journal
        return journal.errors if journal is not None else 0

    @property
    def set_aside(self) -> int:
        """Records this process moved to the dead-letter file (the database refused them, or they were torn)."""
        return self.writer.dead.count

    @property
    def written(self) -> int:
        return self.writer.written

    @property
    def replayed(self) -> int:
        return self.writer.replayed

    @property
    def write_errors(self) -> int:
        return self.writer.write_errors

    @property
    def db_recreated(self) -> int:
        return self.writer.db_recreated

    @property
    def retrying(self) -> int:
        return self.writer.retrying

    # Request path: the journal side -----------------------------------------------------------------
    def append_turn(self, turn: Turn, *, skill_block: str | None = None) -> bool:
        return self.records.append_turn(turn, skill_block=skill_block)

    def end_session(self, tenant: str, session_id: str, outcome: dict[str, Any] | None, reason: str) -> bool:
        return self.records.end_session(tenant, session_id, outcome, reason)

    def record_reward(self, turn_id: str, source: str, score: float, detail: Any = None) -> bool:
        return self.records.record_reward(turn_id, source, score, detail)

    # Reads -------------------------------------------------------------------------------------------
    def list_sessions(self, limit: int = 50, tenant: str | None = None) -> list[dict[str, Any]]:
        return self.queries.list_sessions(limit, tenant)

    def get_session(self, session_id: str, tenant: str | None = None) -> Session | None:
        return self.queries.get_session(session_id, tenant)

    def sessions_named(self, given: str, tenant: str | None = None) -> list[dict[str, Any]]:
        return self.queries.sessions_named(given, tenant)

    def open_sessions(self, before: float, limit: int = 500) -> list[dict[str, Any]]:
        return self.queries.open_sessions(before, limit)

    def fingerprinted_sessions(self, limit: int = 200_000) -> list[str]:
        return self.queries.fingerprinted_sessions(limit)

    def has_session(self, session_id: str, tenant: str | None = None) -> bool:
        return self.queries.has_session(session_id, tenant)

    def get_turn(self, turn_id: str) -> Turn | None:
        return self.queries.get_turn(turn_id)

    def placed_turn(self, turn_id: str) -> PlacedTurn | None:
        return self.queries.placed_turn(turn_id)

    def rewards(self, turn_id: str) -> list[dict[str, Any]]:
        return self.queries.rewards(turn_id)

    def counts(self) -> dict[str, int]:
        return self.queries.counts()

    # Retention ----------------------------------------------------------------------------------
    def prune(self, older_than_days: float) -> int:
        """Delete sessions (and what only they referenced) whose last turn is older than the cutoff."""
        if older_than_days <= 0:
            return 0
        cutoff = time.time() - older_than_days * 86400
        # Forget what is already stored (by message, list and session) before deleting: a turn that refers
        # to a remembered row would point at a deleted one. Turns from now on carry their rows again (inserted
        # if absent), and those queued before are flushed first, so the delete sees them as live.
        with self.records.lock:
            self.records.forget()
        self.flush()
        return self.queries.prune(cutoff)


def turn_dict(turn: Turn, rewards: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    d = asdict(turn)
    d["reward"] = rewards or []
    return d
