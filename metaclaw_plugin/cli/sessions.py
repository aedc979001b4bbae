"""``sessions list|show``."""

from __future__ import annotations

from typing import Any

import click

from ..requestpath.bounds import home_identifiers
from ..requestpath.sessions import stored_session
from ..store.backend import postgres_of
from ..store.trajectories import TrajectoryStore, turn_dict
from ..text import local_time
from .common import console, emit_json, fail, json_option, load_settings, table


def _store(ctx: click.Context) -> TrajectoryStore:
    s = load_settings(ctx)
    return TrajectoryStore(s.db_file, database=postgres_of(s))


def _stored_id(ctx: click.Context, value: str | None) -> str | None:
    """An id as the hooks stored it (one that holds a secret was stored as its keyed hash)."""
    if not value:
        return None
    return home_identifiers(load_settings(ctx)).joinable(value) or value


def _stored_session(ctx: click.Context, value: str, user: str | None) -> str:
    """A session id as the hooks stored it: with ``user``, that user's session of the id (see
    ``metaclaw_plugin.requestpath.sessions``)."""
    ids = home_identifiers(load_settings(ctx))
    sid = ids.session(value) or value
    u = ids.joinable(user) if user else None
    return stored_session(ids, sid, u, turn=False) if u else sid


@click.group()
def sessions() -> None:
    """Inspect captured sessions."""


@sessions.command("list")
@click.option("--limit", default=50, show_default=True)
@click.option("--tenant", default=None)
@json_option
@click.pass_context
def list_(ctx: click.Context, limit: int, tenant: str | None, as_json: bool) -> None:
    """Most recent sessions first."""
    store = _store(ctx)
    try:
        rows = store.list_sessions(limit, _stored_id(ctx, tenant))
    finally:
        store.close()
    if as_json:
        emit_json(rows)
        return
    table(
        f"{len(rows)} sessions",
        ["session", "tenant", "host", "turns", "last turn", "ended", "outcome"],
        [
            [
                r["session_id"],
                r["tenant"],
                r["host"],
                r["turns"],
                local_time(r["last_at"]),
                r["end_reason"] or "",
                r["outcome"] or "",
            ]
            for r in rows
        ],
    )


@sessions.command()
@click.argument("session_id")
@click.option("--tenant", default=None)
@click.option("--user", default=None, help="That user's session of the id (each user's turns are a session).")
@json_option
@click.pass_context
def show(ctx: click.Context, session_id: str, tenant: str | None, user: str | None, as_json: bool) -> None:
    """One session with every turn: messages as sent, response, tool calls, skills, reward. SESSION_ID as stored,
    or as the host gave it: then the session of turns that named no user, else the latest user's session of it
    (``--user`` picks one)."""
    store = _store(ctx)
    try:
        sid, stored_tenant = _stored_session(ctx, session_id, user), _stored_id(ctx, tenant)
        s = store.get_session(sid, stored_tenant)
        if s is None and user is None:
            named = store.sessions_named(sid, stored_tenant)
            s = store.get_session(named[0]["session_id"], named[0]["tenant"]) if named else None
        turns = [turn_dict(t, store.rewards(t.turn_id)) for t in s.turns] if s is not None else []
    finally:
        store.close()
    if s is None:
        fail(f"no session {session_id!r}")
    if as_json:
        emit_json(
            {
                "session_id": s.session_id,
                "tenant": s.tenant,
                "host": s.host,
                "started_at": s.started_at,
                "last_at": s.last_at,
                "ended_at": s.ended_at,
                "outcome": s.outcome,
                "turns": turns,
            }
        )
        return
    console.print(f"[bold]{s.session_id}[/] tenant={s.tenant} host={s.host} turns={len(turns)} outcome={s.outcome}")
    for t in turns:
        last_user: dict[str, Any] = next((m for m in reversed(t["messages"]) if m.get("role") == "user"), {})
        resp = (t["response"] or {}).get("content") or ""
        console.print(
            f"\n[cyan]#{t['seq']}[/] {t['kind']} model={t['model']} {t['latency_ms']} ms "
            f"skills={t['injected_skills']} reward={[r['score'] for r in t['reward']]}",
            highlight=False,
        )
        console.print(f"  user: {str(last_user.get('content'))[:300]}", highlight=False, markup=False)
        console.print(f"  assistant: {str(resp)[:300]}", highlight=False, markup=False)
        if t["tool_calls"]:
            console.print(f"  tool calls: {t['tool_calls']}", highlight=False, markup=False)
        if t["error"]:
            console.print(f"  error: {t['error']}", highlight=False, markup=False)


def register(main: click.Group) -> None:
    for command in (sessions,):
        main.add_command(command)
