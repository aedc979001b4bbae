"""Issue 42 through a real LiteLLM proxy (the plugin's callback in it, a scripted upstream behind it).

Honest clients that name no session: two users whose conversations open alike under one system prompt never share a
session or a memory. A session id named by another user (``user:<name>``, or an explicit ``X-Session-Id``) moves
nobody's turns or memories. Anthropic ``/v1/messages`` reads the user from ``metadata.user_id`` (Claude Code's JSON
form: its account, not its per-session value), and an ``X-Session-Id`` the user configured wins over Claude Code's
own ``x-claude-code-session-id``. opencode's ``ses_...`` ids are stored as they are, and its prompt in quotes is read.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from litellm_support import EXTRACT_AT_ONCE, MODEL, chat, close_readers, reader, seed_home, started_proxy
from waiting import wait_for

from metaclaw_plugin.devtools.proxyrun import ModelSpec, proxy_config, write_config
from metaclaw_plugin.devtools.upstream import Upstream
from metaclaw_plugin.memory.store import MemoryStore
from metaclaw_plugin.store import Database
from metaclaw_plugin.types import Session

pytestmark = pytest.mark.slow

CLAUDE = "claude-stub"
SYSTEM = {"role": "system", "content": "You are a friendly assistant for the staff of a small clinic."}
OPENING = "Hi! Can you help me with a few things today?"


class Stack:
    def __init__(self, upstream: Upstream, url: str, key: str, home: Path):
        self.upstream, self.url, self.key, self.home = upstream, url, key, home

    def chat(self, messages: list[dict[str, Any]], **kw: Any) -> httpx.Response:
        r = chat(self.url, self.key, messages, **kw)
        assert r.status_code == 200, r.text[:2000]
        return r

    def messages(self, text: str, metadata: dict[str, Any], headers: dict[str, str] | None = None) -> httpx.Response:
        body = {
            "model": CLAUDE,
            "max_tokens": 256,
            "system": [{"type": "text", "text": "You are Claude Code."}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
            "metadata": metadata,
        }
        r = httpx.post(
            self.url + "/v1/messages", json=body, headers={"x-api-key": self.key, **(headers or {})}, timeout=60
        )
        assert r.status_code == 200, r.text[:2000]
        return r

    def sessions_of(self, user: str) -> list[Session]:
        """Every stored session that holds a turn of ``user``."""
        store = reader(self.home)
        out = []
        for row in store.list_sessions(1000):
            s = store.get_session(row["session_id"], row["tenant"])
            if s is not None and any(t.user == user for t in s.turns):
                out.append(s)
        return out

    def memories(self, user: str) -> list[str]:
        db = Database(self.home / "metaclaw.db")
        try:
            return [m.text for m in MemoryStore(db).find("default", user)]
        finally:
            db.close()

    def upstream_saw(self, marker: str) -> str:
        with self.upstream._lock:
            seen = [json.dumps(b) for b in self.upstream.requests if marker in json.dumps(b)]
        assert len(seen) == 1, len(seen)
        return seen[0]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("session-identity")
    up = Upstream(script=lambda body: "Noted.").start()
    home = seed_home(root / "home")
    base = f"http://{up.host}:{up.port}"
    specs = [
        ModelSpec(f"openai/{MODEL}", name=MODEL, api_base=base + "/v1", api_key="not-needed"),
        ModelSpec("anthropic/stub-model", name=CLAUDE, api_base=base, api_key="not-needed"),
    ]
    cfg = write_config(root / "config.yaml", proxy_config(specs, litellm_settings={"num_retries": 0}))
    try:
        with started_proxy(cfg, home, root / "proxy.log", root, **EXTRACT_AT_ONCE) as proxy:
            yield Stack(up, proxy.base_url, proxy.master_key, home)
    finally:
        up.stop()
        close_readers()


def _user(tag: str, name: str) -> str:
    return f"{name}-{tag}"


def test_two_users_whose_conversations_open_alike_never_share_a_session_or_a_memory(stack: Stack) -> None:
    tag = uuid.uuid4().hex[:8]
    ana, ben = _user(tag, "ana"), _user(tag, "ben")
    who = {ana: {"headers": {"X-User-Id": ana}}, ben: {"body": {"metadata": {"user_id": ben}}}}
    convs: dict[str, list[dict[str, Any]]] = {u: [SYSTEM, {"role": "user", "content": OPENING}] for u in who}
    second = {ana: "Please remember that I am allergic to penicillin.", ben: "What should I pack for a day hike?"}
    for step in (None, second):
        for u, how in who.items():
            if step is not None:
                convs[u] = [*convs[u], {"role": "assistant", "content": "Noted."}, {"role": "user", "content": step[u]}]
            stack.chat(convs[u], **how)
    mine = {u: wait_for(lambda u=u: [s for s in stack.sessions_of(u) if len(s.turns) == 2], 20, u) for u in who}
    assert mine[ana][0].session_id != mine[ben][0].session_id
    for u in who:
        assert len(mine[u]) == 1 and {t.user for t in mine[u][0].turns} == {u}
    wait_for(lambda: any("penicillin" in m for m in stack.memories(ana)), 30, "Ana's memory")
    assert not any("penicillin" in m for m in stack.memories(ben))
    marker = f"m-{tag}"
    stack.chat([SYSTEM, {"role": "user", "content": f"Which medicines am I allergic to? ({marker})"}], **who[ben])
    assert "penicillin" not in stack.upstream_saw(marker)


def test_a_session_id_named_by_another_user_moves_no_turn_or_memory(stack: Stack) -> None:
    tag = uuid.uuid4().hex[:8]
    carol, mallory = _user(tag, "carol"), _user(tag, "mallory")
    # Mallory names first both the id Carol's OpenAI `user` field once made and the id Carol's client sends.
    for sid in (f"user:{carol}", f"carol-chat-{tag}"):
        stack.chat([{"role": "user", "content": "hello there"}], headers={"X-User-Id": mallory, "X-Session-Id": sid})
    stack.chat([{"role": "user", "content": "Please remember that my office is room 4417."}], body={"user": carol})
    stack.chat(
        [{"role": "user", "content": "Please remember that my manager is Dana Whitfield."}],
        headers={"X-User-Id": carol, "X-Session-Id": f"carol-chat-{tag}"},
    )
    said = ("4417", "Dana Whitfield")
    wait_for(lambda: all(any(x in m for m in stack.memories(carol)) for x in said), 30, "Carol's memories")
    # the proxy records a turn after it answers, on its own thread: Mallory's two sessions are waited for, not
    # assumed written by the time Carol's memories are (they were not, now and then)
    wait_for(lambda: len(stack.sessions_of(mallory)) == 2, 30, "Mallory's two sessions")
    assert not any(x in m for m in stack.memories(mallory) for x in said), stack.memories(mallory)
    assert all({t.user for t in s.turns} == {mallory} for s in stack.sessions_of(mallory))
    assert all({t.user for t in s.turns} == {carol} for s in stack.sessions_of(carol))


def test_anthropic_metadata_user_id_names_the_user_and_x_session_id_wins(stack: Stack) -> None:
    tag = uuid.uuid4().hex[:8]
    account, other = str(uuid.uuid4()), str(uuid.uuid4())

    def claude_md(acct: str, session: str) -> dict[str, Any]:
        return {"user_id": json.dumps({"device_id": "d" * 64, "account_uuid": acct, "session_id": session})}

    named = f"named-{tag}"
    stack.messages(
        f"Please remember that the release branch is rel-{tag}.",
        claude_md(account, str(uuid.uuid4())),
        headers={"X-Session-Id": named, "x-claude-code-session-id": str(uuid.uuid4())},
    )
    [s] = wait_for(lambda: stack.sessions_of(account), 20, "the Claude Code session")
    assert s.session_id.startswith(named + "~u"), s.session_id  # the user's X-Session-Id, not Claude Code's own
    wait_for(lambda: any(f"rel-{tag}" in m for m in stack.memories(account)), 30, "the account's memory")
    # another Claude Code session of the same account gets it; another account's does not
    stack.messages(f"Which branch do we release from? (a-{tag})", claude_md(account, str(uuid.uuid4())))
    assert f"rel-{tag}" in stack.upstream_saw(f"a-{tag}")
    stack.messages(f"Which branch do we release from? (b-{tag})", claude_md(other, str(uuid.uuid4())))
    assert f"rel-{tag}" not in stack.upstream_saw(f"b-{tag}")


def test_opencode_session_ids_and_quoted_prompts(stack: Stack) -> None:
    tag = uuid.uuid4().hex[:8]
    user, sid = _user(tag, "olga"), "ses_01JH8ZK3QWNAB4XT7R2CDE5FGH"
    stack.chat(
        [{"role": "user", "content": f'"Please remember that my team channel is #ops-{tag}."'}],
        headers={"X-Session-Id": sid, "X-User-Id": user},
    )
    [s] = wait_for(lambda: stack.sessions_of(user), 20, "opencode's session")
    assert s.session_id.startswith(sid + "~u")
    wait_for(lambda: any(f"#ops-{tag}" in m for m in stack.memories(user)), 30, "the quoted statement's memory")
