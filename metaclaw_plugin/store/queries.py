"""The trajectory store's reads (sessions, turns as sent, rewards, counts) and its retention (pruning old sessions).

On SQLite the reads share one connection of their own, opened again when the file at the path is not the one it
has open (deleted or replaced); on PostgreSQL they go through the pool.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..types import Message, Session, Turn
from .records import finite, join_block
from .sqlite import connect, file_stat

if TYPE_CHECKING:
    from .postgres import PostgresDatabase

# Reads: a non-finite constant written by an older release reads as null, so output stays valid JSON.
_loads = json.JSONDecoder(parse_constant=lambda _c: None).decode


@dataclass(frozen=True)
class PlacedTurn:
    """A turn, the session's next main turn after it, and the ended session's outcome when it is the last one."""

    turn: Turn
    next_main: Turn | None
    outcome: dict[str, Any] | None


class Queries:
    def __init__(self, db_path: Path, database: PostgresDatabase | None):
        self.db_path = db_path
        self._pg = database
        self._lock = threading.Lock()
        self._reader: sqlite3.Connection | None = None
        self._reader_id: tuple[int, int] | None = None

    def close(self) -> None:
        """Close the reader (the store closes; the database file was lost under the writer)."""
        with self._lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None

    def read(self, sql: str, args: Iterable[Any] = ()) -> list[sqlite3.Row]:
        if self._pg is not None:
            return self._pg.query(sql, args)  # type: ignore[return-value]
        with self._lock:
            st = file_stat(self.db_path)
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
        rows = self.read(f"SELECT * FROM sessions {where} ORDER BY last_at DESC LIMIT ?", [*args, int(limit)])
        return [_session_dict(r) for r in rows]

    def _message(self, h: str | None) -> Message | None:
        if not h:
            return None
        rows = self.read("SELECT content FROM messages WHERE hash = ?", [h])
        return _loads(rows[0]["content"]) if rows else {"role": "unknown", "content": "[missing]"}

    def _tools(self, h: str | None) -> list[dict[str, Any]] | None:
        if not h:
            return None
        rows = self.read("SELECT content FROM messages WHERE hash = ?", [h])
        tools = _loads(rows[0]["content"]) if rows else None
        return tools if isinstance(tools, list) else None

    def _messages(self, list_hash: str, block_hash: str | None) -> list[Message]:
        rows = self.read(
            """WITH RECURSIVE chain(hash, prev, msg, depth) AS (
                 SELECT hash, prev, msg, 0 FROM msg_lists WHERE hash = ?
                 UNION ALL SELECT l.hash, l.prev, l.msg, c.depth + 1 FROM msg_lists l JOIN chain c ON l.hash = c.prev)
               SELECT m.content FROM chain LEFT JOIN messages m ON m.hash = chain.msg ORDER BY depth DESC""",
            [list_hash],
        )
        block = self._message(block_hash)
        block_text = block.get("content") if block else None
        return [
            join_block(
                _loads(r["content"]) if r["content"] else {"role": "unknown", "content": "[missing]"}, block_text
            )
            for r in rows
        ]

    def get_session(self, session_id: str, tenant: str | None = None) -> Session | None:
        if tenant is None:
            srows = self.read("SELECT * FROM sessions WHERE session_id = ? ORDER BY last_at DESC LIMIT 1", [session_id])
        else:
            srows = self.read("SELECT * FROM sessions WHERE session_id = ? AND tenant = ?", [session_id, tenant])
        if not srows:
            return None
        s = srows[0]
        outcome = _loads(s["outcome"]) if s["outcome"] else None
        session = Session(
            session_id=s["session_id"],
            tenant=s["tenant"],
            host=s["host"] or "unknown",
            started_at=finite(s["started_at"]) or 0.0,
            last_at=finite(s["last_at"]) or 0.0,
            ended_at=finite(s["ended_at"]),
            outcome=outcome,
        )
        for r in self.read(
            "SELECT * FROM turns WHERE tenant = ? AND session_id = ? ORDER BY seq", [s["tenant"], s["session_id"]]
        ):
            session.turns.append(self._turn(r))
        return session

    def sessions_named(self, given: str, tenant: str | None = None) -> list[dict[str, Any]]:
        """The sessions stored under an id as a host gave it: the id itself and each user's session of it
        (``<given>~u<16 hex>``, see ``metaclaw_plugin.requestpath.sessions``), most recent first."""
        where, args = (" AND tenant = ?", [tenant]) if tenant else ("", [])
        rows = self.read(
            f"SELECT * FROM sessions WHERE (session_id = ? OR (length(session_id) = ? AND substr(session_id, 1, ?) = ?))"
            f"{where} ORDER BY last_at DESC LIMIT 1000",
            [given, len(given) + 18, len(given) + 2, given + "~u", *args],
        )
        return [_session_dict(r) for r in rows]

    def open_sessions(self, before: float, limit: int = 500) -> list[dict[str, Any]]:
        """Sessions with no end whose last turn is older than ``before``, oldest first (the idle sweep of sessions
        an earlier process left open)."""
        rows = self.read(
            "SELECT * FROM sessions WHERE ended_at IS NULL AND last_at < ? ORDER BY last_at LIMIT ?",
            [before, int(limit)],
        )
        return [_session_dict(r) for r in rows]

    def fingerprinted_sessions(self, limit: int = 200_000) -> list[str]:
        """The most recent session ids made for conversations that named none (``fp-...``), newest first."""
        rows = self.read(
            "SELECT session_id FROM sessions WHERE substr(session_id, 1, 3) = 'fp-' ORDER BY last_at DESC LIMIT ?",
            [int(limit)],
        )
        return [r["session_id"] for r in rows]

    def has_session(self, session_id: str, tenant: str | None = None) -> bool:
        where, args = (" AND tenant = ?", [tenant]) if tenant else ("", [])
        return bool(self.read(f"SELECT 1 FROM sessions WHERE session_id = ?{where} LIMIT 1", [session_id, *args]))

    def get_turn(self, turn_id: str) -> Turn | None:
        """One turn with its messages as sent (the injected skill block in place), for building samples."""
        rows = self.read("SELECT * FROM turns WHERE turn_id = ?", [turn_id])
        return self._turn(rows[0]) if rows else None

    def placed_turn(self, turn_id: str) -> PlacedTurn | None:
        """A turn with what judging or evolving it reads around it: the session's next main turn (the user's
        reply) and, when it is the session's last main turn in an ended session, the session's outcome. Reads
        those rows only, never the whole session: the judge places every turn, and a session may hold thousands."""
        rows = self.read("SELECT * FROM turns WHERE turn_id = ?", [turn_id])
        if not rows:
            return None
        r = rows[0]
        nxt = self.read(
            "SELECT * FROM turns WHERE tenant = ? AND session_id = ? AND seq > ? AND kind = 'main' ORDER BY seq LIMIT 1",
            [r["tenant"], r["session_id"], r["seq"]],
        )
        outcome = None
        if not nxt:
            srows = self.read(
                "SELECT ended_at, outcome FROM sessions WHERE tenant = ? AND session_id = ?",
                [r["tenant"], r["session_id"]],
            )
            if srows and finite(srows[0]["ended_at"]) is not None and srows[0]["outcome"]:
                outcome = _loads(srows[0]["outcome"])
        return PlacedTurn(self._turn(r), self._turn(nxt[0]) if nxt else None, outcome)

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
            latency_ms=finite(r["latency_ms"]),
            injected_skills=_loads(r["injected"]) if r["injected"] else [],
            skill_generation=r["generation"],
            error=r["error"],
            host=r["host"] or "unknown",
            user=r["user"],
            created_at=r["created_at"],
            seq=r["seq"],
        )

    def rewards(self, turn_id: str) -> list[dict[str, Any]]:
        return [dict(r) for r in self.read("SELECT * FROM rewards WHERE turn_id = ? ORDER BY id", [turn_id])]

    def counts(self) -> dict[str, int]:
        out = {}
        for table in ("sessions", "turns", "messages", "rewards"):
            rows = self.read(f"SELECT COUNT(*) AS n FROM {table}")
            out[table] = int(rows[0]["n"]) if rows else 0
        return out

    def prune(self, cutoff: float) -> int:
        """Delete sessions (and what only they referenced) whose last turn is older than ``cutoff``."""
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


def _session_dict(r: sqlite3.Row) -> dict[str, Any]:
    return {
        "session_id": r["session_id"],
        "tenant": r["tenant"],
        "host": r["host"],
        "started_at": finite(r["started_at"]),
        "last_at": finite(r["last_at"]),
        "ended_at": finite(r["ended_at"]),
        "end_reason": r["end_reason"],
        "outcome": _loads(r["outcome"]) if r["outcome"] else None,
        "turns": r["turn_count"],
    }
