"""What each user said, kept whole as recallable passages (``passages``), beside the distilled memories.

A passage is one main user turn of a (tenant, user): redacted, its credential statements removed and screened
before it is written here (by the memory learner, off the request path), dated by when the turn happened (its
``TurnContext.started_at``, so a replay or an import keeps the real date). ``kind`` is ``turn``, or ``digest``: the
oldest sessions of a user past the bound, compacted to one passage each. Every change takes the next number of the
memory counter (``memory_rev``) inside its transaction, so a reader that follows that counter (the request path's
view) sees new memories and new passages alike with one number. Never called on the request path.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from .backend import AnyDatabase, Query

_COLS = "id, tenant, user_id, session_id, turn_id, kind, text, at, status, screen, created_at, rev"


@dataclass
class Passage:
    id: str
    tenant: str
    user: str
    session_id: str
    text: str
    at: float  # when it was said
    turn_id: str | None = None
    kind: str = "turn"  # turn | digest
    status: str = "active"  # active | quarantined | superseded | forgotten
    screen: dict[str, Any] | None = None
    created_at: float = field(default_factory=time.time)
    rev: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def next_rev(tx: Any) -> int:
    """The next number of the memory counter, inside ``tx`` (its row lock orders writers on PostgreSQL)."""
    tx.execute("INSERT OR IGNORE INTO memory_rev(id, rev) VALUES (1, 0)")
    tx.execute("UPDATE memory_rev SET rev = rev + 1 WHERE id = 1")
    return int(tx.execute("SELECT rev FROM memory_rev WHERE id = 1").fetchone()[0])


def filters(
    tenant: str | None, user: str | None, statuses: Sequence[str] | None = None, kinds: Sequence[str] | None = None
) -> tuple[list[str], list[Any]]:
    """The conditions (and their arguments) that keep one (tenant, user) bucket's rows of the given statuses and
    kinds, for memories and passages alike; None or empty keeps all."""
    where: list[str] = []
    args: list[Any] = []
    for col, v in (("tenant", tenant), ("user_id", user)):
        if v is not None:
            where.append(f"{col} = ?")
            args.append(v)
    for col, values in (("status", statuses), ("kind", kinds)):
        if values:
            where.append(f"{col} IN ({', '.join('?' * len(values))})")
            args.extend(values)
    return where, args


def _row(r: Any) -> Passage | None:
    """A passage from a row, or None for a row too damaged to read (skipped, never raised: one bad row must not
    stop the rest of anyone's memory)."""
    try:
        at = float(r["at"])
        screen = json.loads(r["screen"]) if r["screen"] else None
        p = Passage(
            id=str(r["id"]),
            tenant=str(r["tenant"]),
            user=str(r["user_id"]),
            session_id=str(r["session_id"]),
            text=str(r["text"] or ""),
            at=at if math.isfinite(at) else 0.0,
            turn_id=r["turn_id"],
            kind=str(r["kind"]),
            status=str(r["status"]),
            screen=screen if isinstance(screen, dict) else None,
            created_at=float(r["created_at"]),
            rev=int(r["rev"]),
        )
    except (TypeError, ValueError, KeyError, IndexError):
        return None
    return p


class PassageStore:
    def __init__(self, db: AnyDatabase):
        self.db = db

    # Writes -----------------------------------------------------------------------------------------------------
    def add(self, passages: Sequence[Passage]) -> list[Passage]:
        """Insert passages (one id once: a turn replayed twice is one passage). Returns those inserted."""
        out: list[Passage] = []
        if not passages:
            return out
        with self.db.transaction() as tx:
            rev = next_rev(tx)
            for p in passages:
                p.rev = rev
                cur = tx.execute(
                    f"INSERT OR IGNORE INTO passages({_COLS}) VALUES ({', '.join('?' * 12)})",
                    (
                        p.id,
                        p.tenant,
                        p.user,
                        p.session_id,
                        p.turn_id,
                        p.kind,
                        p.text,
                        p.at,
                        p.status,
                        json.dumps(p.screen) if p.screen else None,
                        p.created_at,
                        p.rev,
                    ),
                )
                if cur.rowcount == 1:
                    out.append(p)
        return out

    def close(self, tenant: str, user: str, ids: Sequence[str], status: str) -> int:
        """Take passages out of recall, only ``user``'s own of ``tenant``: ``superseded`` (a later statement replaced
        what it says; kept) or ``forgotten`` (the user asked: the text goes)."""
        if status not in ("superseded", "forgotten"):  # the view appends what else changes (changed_since)
            raise ValueError(f"a passage is closed as superseded or forgotten, not {status!r}")
        if not ids:
            return 0
        n = 0
        with self.db.transaction() as tx:
            rev = next_rev(tx)
            for pid in ids:
                n += tx.execute(
                    "UPDATE passages SET status = ?, text = CASE WHEN ? = 'forgotten' THEN '' ELSE text END, rev = ? "
                    "WHERE id = ? AND tenant = ? AND user_id = ? AND status IN ('active', 'superseded')",
                    (status, status, rev, pid, tenant, user),
                ).rowcount
        return n

    def compact(self, tenant: str, user: str, keep: int, digest: Any) -> int:
        """Past ``keep`` active passages, the user's oldest sessions become one digest passage each
        (``digest(session_id, passages) -> text``). Returns the passages folded."""
        rows = self.db.query(
            "SELECT COUNT(*) FROM passages WHERE tenant = ? AND user_id = ? AND status = 'active' AND kind = 'turn'",
            (tenant, user),
        )
        over = int(rows[0][0]) - keep if rows else 0
        if over <= 0:
            return 0
        oldest = self.find(tenant, user, kinds=("turn",), limit=over, oldest_first=True)
        by_session: dict[str, list[Passage]] = {}
        for p in oldest:
            by_session.setdefault(p.session_id, []).append(p)
        folded = 0
        with self.db.transaction() as tx:
            rev = next_rev(tx)
            for sid, ps in by_session.items():
                text = digest(sid, ps)
                if text:
                    tx.execute(
                        f"INSERT OR IGNORE INTO passages({_COLS}) VALUES ({', '.join('?' * 12)})",
                        (
                            f"digest-{ps[0].id}",
                            tenant,
                            user,
                            sid,
                            None,
                            "digest",
                            text,
                            ps[0].at,
                            "active",
                            None,
                            time.time(),
                            rev,
                        ),
                    )
                for p in ps:
                    tx.execute("DELETE FROM passages WHERE id = ?", (p.id,))
                    folded += 1
        return folded

    # Reads ------------------------------------------------------------------------------------------------------
    def find(
        self,
        tenant: str | None = None,
        user: str | None = None,
        *,
        statuses: Sequence[str] | None = ("active",),
        kinds: Sequence[str] | None = None,
        since_rev: int | None = None,
        until_rev: int | None = None,
        limit: int = 0,
        oldest_first: bool = False,
    ) -> list[Passage]:
        where, args = filters(tenant, user, statuses, kinds)
        for cond, rev in (("rev > ?", since_rev), ("rev <= ?", until_rev)):
            if rev is not None:
                where.append(cond)
                args.append(rev)
        sql = f"SELECT {_COLS} FROM passages" + (f" WHERE {' AND '.join(where)}" if where else "")
        sql += " ORDER BY at, id" if oldest_first else " ORDER BY at DESC, id DESC"
        sql += f" LIMIT {int(limit)}" if limit > 0 else ""
        return [p for p in map(_row, self.db.query(sql, args)) if p is not None]

    def changed_since(self, rev: int, until: int) -> dict[tuple[str, str], bool]:
        """The (tenant, user) buckets with a passage change after ``rev`` (up to ``until``): True where only new
        turns came (the view appends the active ones), False where one was superseded, forgotten or folded (it
        rebuilds). A quarantined passage is one written so (no update ever quarantines): it was never in the view,
        so there is nothing to take out, and it costs no rebuild (one in 60 of a chat's turns rebuilt its user's
        whole index, five times the work of appending them all)."""
        out: dict[tuple[str, str], bool] = {}
        for r in self.db.query(
            "SELECT tenant, user_id, "
            "MIN(CASE WHEN status IN ('active', 'quarantined') AND kind = 'turn' THEN 1 ELSE 0 END) "
            "FROM passages WHERE rev > ? AND rev <= ? GROUP BY tenant, user_id",
            (rev, until),
        ):
            out[(str(r[0]), str(r[1]))] = bool(r[2])
        return out

    def counts(self, tenant: str | None = None) -> dict[str, int]:
        sql = "SELECT status, COUNT(*) FROM passages" + (" WHERE tenant = ?" if tenant else "") + " GROUP BY status"
        return {str(r[0]): int(r[1]) for r in self.db.query(sql, (tenant,) if tenant else ())}


def per_user(query: Query) -> list[Any]:
    """(tenant, user_id, status, n): how many passages each user has per status, for a person to look at."""
    return query(
        "SELECT tenant, user_id, status, COUNT(*) AS n FROM passages GROUP BY tenant, user_id, status "
        "ORDER BY tenant, user_id"
    )


def said_by(query: Query, tenant: str, user: str, limit: int) -> list[Any]:
    """What one user said (id, session_id, kind, text, at, status), the latest first; never a forgotten passage."""
    return query(
        "SELECT id, session_id, kind, text, at, status FROM passages WHERE tenant = ? AND user_id = ? "
        "AND status != 'forgotten' ORDER BY at DESC LIMIT ?",
        (tenant, user, limit),
    )
