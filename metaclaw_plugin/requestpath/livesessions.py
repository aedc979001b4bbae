"""The sessions of this process: opened by their first turn, ended by the host, after ``session_idle_timeout``, or
by their user's new conversation (see :mod:`.sessions` for whose session a turn is), and what callers ask about a
session, live here or stored.

The table is in memory and read on the request path (a turn touches its session under one lock); ends go to the
store's journal and out as :class:`~metaclaw_plugin.requestpath.events.SessionEnd` events. What reads the store (the sweep of
sessions earlier processes left open, the sidecar's and the dashboard's questions) never runs on the request path.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ..config import Settings
from ..infra.worker import BackgroundWorker
from ..store.trajectories import TrajectoryStore
from ..types import DEFAULT_TENANT, Session, TurnContext
from .boundary import Boundary
from .bounds import REASON_MAX, json_value
from .events import Events, SessionEnd, SessionState
from .sessions import Conversations, given_of, namespaced, stored_session

SEEN_MAX = 100_000  # sessions remembered as opened in this process (a return to one ends nothing)
STORED_SWEEP_GRACE = 60.0  # beyond the idle timeout: a live owner in another process has ended it by then
STORED_SWEEP_BATCH = 500


class LiveSessions:
    def __init__(
        self,
        settings: Settings,
        boundary: Boundary,
        store: TrajectoryStore,
        events: Events,
        worker: BackgroundWorker,
        ensure_started: Callable[[], None],
    ):
        self.settings = settings
        self.boundary = boundary
        self.store = store
        self.events = events
        self.worker = worker
        self._ensure_started = ensure_started
        self._sessions: dict[tuple[str, str], SessionState] = {}
        # the live sessions by the id the host gave (an end or feedback that names no user reaches each user's part)
        # and by user and host (a user's new conversation ends that user's earlier ones): see sessions.py
        self._by_given: dict[tuple[str, str], set[str]] = {}
        self._by_user: dict[tuple[str, str, str], set[str]] = {}
        self._seen: OrderedDict[tuple[str, str], None] = OrderedDict()  # sessions opened here (bounded)
        self._lock = threading.Lock()
        self.conversations = Conversations()  # the sessions of clients that name none

    # A turn's session -------------------------------------------------------------------------------
    def touch(self, ctx: TurnContext, now: float) -> None:
        """A turn's request keeps its session live (made on its first turn)."""
        with self._lock:
            self._touch(ctx, now)

    def record(self, ctx: TurnContext, turn_id: str, now: float) -> SessionState:
        """The live session of a recorded turn, with the turn counted in it."""
        with self._lock:
            state = self._touch(ctx, now)
            state.turn_ids.append(turn_id)
            if ctx.kind == "main":
                state.main_turns += 1
                state.last_main = turn_id
        return state

    def scored(self, c: TurnContext) -> tuple[SessionState | None, bool, str | None]:
        """What a feedback scores among the live sessions: the session (the one holding the turn it names, else the
        latest of those it names), whether the turn named is one of its turns, and its latest main turn."""
        with self._lock:
            if c.user is None and not namespaced(c.session_id):  # the host's id: any user's part of it
                live = [self._sessions[(c.tenant, s)] for s in self._by_given.get((c.tenant, c.session_id), ())]
            else:
                one = self._sessions.get((c.tenant, c.session_id))
                live = [one] if one is not None else []
            state = next((st for st in live if c.request_id in st.turn_ids), None)
            if state is None and live:
                state = max(live, key=lambda st: st.last_at)
            named = state is not None and c.request_id in state.turn_ids
            main = state.last_main if state is not None else None
        return state, named, main

    def _touch(self, ctx: TurnContext, now: float) -> SessionState:
        """The live session of a turn (made on its first turn); under ``self._lock``. A session seen here for the
        first time ends, at its first main turn, the same user's earlier sessions on this host: a user who starts a
        new conversation has left the old one, whatever the client said (the ends run in the worker)."""
        key = (ctx.tenant, ctx.session_id)
        state = self._sessions.get(key)
        if state is None:
            fresh = key not in self._seen
            if fresh:
                self._seen[key] = None
                if len(self._seen) > SEEN_MAX:
                    self._seen.popitem(last=False)
            state = self._sessions[key] = SessionState(
                ctx.tenant, ctx.session_id, ctx.host, now, now, user=ctx.user, given=given_of(ctx.session_id)
            )
            state.fresh = fresh
            self._by_given.setdefault((ctx.tenant, state.given), set()).add(ctx.session_id)
            if ctx.user is not None:
                self._by_user.setdefault((ctx.tenant, ctx.user, ctx.host), set()).add(ctx.session_id)
        if state.fresh and ctx.kind == "main":
            state.fresh = False
            if state.user is not None and self.settings.sessions.new_conversation_ends_earlier:
                self._supersede(state)
        state.last_at = now
        return state

    def _supersede(self, state: SessionState) -> None:
        """End the other live sessions of ``state``'s user on its host (under ``self._lock``; ended by the worker)."""
        others = self._by_user.get((state.tenant, state.user or "", state.host), set()) - {state.session_id}
        for sid in sorted(others):
            old = self._pop_state((state.tenant, sid))
            if old is not None:
                self.worker.submit(
                    "sessions.supersede", self._end, old.tenant, old.session_id, old.host, old, None, "superseded"
                )

    def _pop_state(self, key: tuple[str, str]) -> SessionState | None:
        """Forget a live session (under ``self._lock``)."""
        state = self._sessions.pop(key, None)
        if state is not None:
            given = self._by_given.get((state.tenant, state.given))
            if given is not None:
                given.discard(state.session_id)
                if not given:
                    del self._by_given[(state.tenant, state.given)]
            ukey = (state.tenant, state.user or "", state.host)
            mine = self._by_user.get(ukey)
            if mine is not None:
                mine.discard(state.session_id)
                if not mine:
                    del self._by_user[ukey]
        return state

    # Ends -------------------------------------------------------------------------------------------
    def on_session_end(
        self, ctx: TurnContext, outcome: dict[str, Any] | None = None, *, reason: str = "host", every_user: bool = True
    ) -> None:
        """End a session: persist the outcome and hand it to the background loops.

        A session belongs to one user (see :mod:`.sessions`). With ``ctx.user`` set, that user's session ends. With
        none, the session the host knows by ``ctx.session_id`` ends, each user's part of it that is live here
        (``every_user=False``: only the part of turns that named no user, as a proxy request without a user
        ends only its own)."""
        b = self.boundary
        try:
            self._ensure_started()
            c = b.context(ctx, session=False)
            why = b.ids.label(reason, REASON_MAX, "reason")
            if why is None:
                b.note("reason", "not text; recorded as host")
                why = "host"
            with self._lock:
                if c.user is None and every_user and not namespaced(c.session_id):
                    sids = sorted(self._by_given.get((c.tenant, c.session_id), ()))
                    ended = [(sid, self._pop_state((c.tenant, sid))) for sid in sids]
                else:
                    ended = []
                if not ended:
                    ended = [(c.session_id, self._pop_state((c.tenant, c.session_id)))]
            for sid, state in ended:
                self._end(c.tenant, sid, state.host if state else c.host, state, outcome, why)
        except Exception as e:
            b.fail("on_session_end", e)

    def _end(
        self, tenant: str, session_id: str, host: str, state: SessionState | None, outcome: Any, reason: str
    ) -> None:
        clean = json_value(outcome, self.boundary.ids.text)
        if clean != outcome:
            self.boundary.note("outcome", "values out of bounds or holding a secret; coerced")
        clean = clean if isinstance(clean, dict) else ({"value": clean} if clean is not None else None)
        self.store.end_session(tenant, session_id, clean, reason)
        self.events.publish(SessionEnd(tenant, session_id, host, clean, reason, list(state.turn_ids) if state else []))

    def sweep_idle(self, now: float | None = None) -> int:
        """End sessions idle longer than ``sessions.session_idle_timeout``."""
        now = time.time() if now is None else now
        timeout = self.settings.sessions.session_idle_timeout
        with self._lock:
            idle = [k for k, s in self._sessions.items() if now - s.last_at >= timeout]
            states = [st for st in (self._pop_state(k) for k in idle) if st is not None]
        for st in states:
            self._end(st.tenant, st.session_id, st.host, st, None, "idle")
        return len(states)

    def sweep_stored(self, now: float | None = None) -> int:
        """End the stored sessions that no process ended (one that stopped or crashed with them open): no end, no
        turn for longer than the idle timeout (and a minute's grace, so that a live owner elsewhere ends its own),
        not live here. The memory learner reads what their turns said that was not extracted yet
        (``SessionEnd.stored_turns``)."""
        now = time.time() if now is None else now
        cutoff = now - self.settings.sessions.session_idle_timeout - STORED_SWEEP_GRACE
        self.store.flush(5.0)
        rows = self.store.open_sessions(cutoff, STORED_SWEEP_BATCH)
        with self._lock:
            rows = [r for r in rows if (r["tenant"], r["session_id"]) not in self._sessions]
        for r in rows:
            tenant, sid = r["tenant"], r["session_id"]
            stored = self.store.get_session(sid, tenant=tenant) if self.events.wanted(SessionEnd) else None
            turns = stored.turns if stored is not None else None
            self.store.end_session(tenant, sid, None, "idle")
            ids = [t.turn_id for t in turns or ()]
            self.events.publish(SessionEnd(tenant, sid, r["host"] or "unknown", None, "idle", ids, turns))
        return len(rows)

    def end_named_session(
        self, session_id: str, tenant: str | None = None, outcome: dict[str, Any] | None = None, reason: str = "host"
    ) -> list[str]:
        """End a session as the host knows it, each user's part of it, live or stored (the sidecar's
        ``/v1/sessions/<id>/end``: OpenClaw's ``session_end`` names no user). Reads the store: not for the request
        path. Returns the stored ids ended."""
        ids = self.boundary.ids
        sid = ids.session(session_id)
        if sid is None:
            return []
        t = ids.joinable(tenant) if tenant else DEFAULT_TENANT
        with self._lock:
            live = set() if namespaced(sid) else set(self._by_given.get((t or DEFAULT_TENANT, sid), ()))
        self.store.flush(2.0)
        stored = (
            {r["session_id"] for r in self.store.sessions_named(sid, t) if r["ended_at"] is None}
            if not namespaced(sid)
            else set()
        )
        targets = sorted(live | stored) or [sid]
        for target in targets:
            self.on_session_end(
                TurnContext(session_id=target, tenant=tenant or DEFAULT_TENANT),
                outcome,
                reason=reason,
                every_user=False,
            )
        return targets

    # Questions about a session -----------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._sessions)

    def active(self) -> list[SessionState]:
        with self._lock:
            return list(self._sessions.values())

    def load_taken(self) -> None:
        """The conversation ids earlier processes stored: a new conversation here never takes one (the worker)."""
        self.store.flush(5.0)
        self.conversations.taken(self.store.fingerprinted_sessions())

    def conversation_session(self, messages: Any, tenant: Any = None, user: Any = None) -> str | None:
        """The session of a conversation whose client names none (see :class:`.sessions.Conversations`): an id
        from the tenant, the user and the conversation's opening; a continuation of a conversation seen here keeps
        its id. None when no user message has words. In memory, cheap; fails open. The turn's context says
        ``metadata["session_source"] = "fingerprint"``: a client that names an id of this form gets another."""
        try:
            ids = self.boundary.ids
            t = (
                DEFAULT_TENANT
                if tenant is None or (isinstance(tenant, str) and not tenant.strip())
                else ids.joinable(tenant)
            )
            if t is None:
                return None
            u = ids.joinable(user) if user is not None else None
            return self.conversations.session_of(messages, t, u)
        except Exception:
            self.boundary.fail("conversation_session")
            return None

    def stored_ids(self, session_id: str, tenant: str | None) -> list[str]:
        """The stored sessions a session id names: itself when it is a user's (namespaced), else itself and every
        user's part of it, most recent first. Reads the store: not for the request path."""
        if namespaced(session_id):
            return [session_id]
        rows = self.store.sessions_named(session_id, tenant)
        found = [r["session_id"] for r in rows]
        return found or [session_id]

    def _session_key(self, session_id: Any, user: Any) -> str | None:
        ids = self.boundary.ids
        sid = ids.session(session_id)
        if sid is None or user is None:
            return sid
        u = ids.joinable(user)
        return stored_session(ids, sid, u, turn=False) if u is not None else sid

    def read_session(self, session_id: str, tenant: str | None = None, user: str | None = None) -> Session | None:
        """A session with its turns, for people and tests (the API, the dashboard): waits up to 2 s for the
        write-behind queue first, so what was just captured shows. Never called on the request path.

        ``session_id`` as the host knows it or as stored; with ``user``, that user's session of that id; without,
        the session of turns that named no user, else the most recent user's session of that id."""
        sid = self._session_key(session_id, user)  # the id as the hooks stored it
        if sid is None:
            return None
        self.store.flush(2.0)
        t = self.boundary.ids.joinable(tenant) if tenant else None
        found = self.store.get_session(sid, tenant=t)
        if found is None and user is None and not namespaced(sid):
            rows = self.store.sessions_named(sid, t)
            if rows:
                found = self.store.get_session(rows[0]["session_id"], tenant=rows[0]["tenant"])
        return found

    def knows_session(self, session_id: str, tenant: str | None = None, user: str | None = None) -> bool:
        """Whether a session is live here or stored (the sidecar ends only those); without ``user``, any user's
        session of that id. Reads the store: not for the request path."""
        sid = self._session_key(session_id, user)
        if sid is None:
            return False
        t = self.boundary.ids.joinable(tenant) if tenant else None
        any_user = user is None and not namespaced(sid)
        with self._lock:
            if any(k[1] == sid and (t is None or k[0] == t) for k in self._sessions):
                return True
            if any_user and any(k[1] == sid and (t is None or k[0] == t) for k in self._by_given):
                return True
        self.store.flush(2.0)
        if self.store.has_session(sid, t):
            return True
        return any_user and bool(self.store.sessions_named(sid, t))

    def latest_main_turn(self, session_id: str, tenant: str | None = None, user: str | None = None) -> str | None:
        """The latest main turn of a session (live here, else stored), or None: what feedback that names no turn
        scores. Reads the store when the session is not live here: not for the request path."""
        sid = self._session_key(session_id, user)
        if sid is None:
            return None
        t = (self.boundary.ids.joinable(tenant) if tenant else None) or DEFAULT_TENANT
        with self._lock:
            state = self._sessions.get((t, sid))
            if state is not None and state.last_main is not None:
                return state.last_main
        self.store.flush(2.0)
        stored = self.store.get_session(sid, tenant=t)
        mains = [x for x in stored.turns if x.kind == "main"] if stored is not None else []
        return mains[-1].turn_id if mains else None
