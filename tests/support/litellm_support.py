"""Helpers for the LiteLLM adapter tests: a real proxy process, started the way a user starts it.

- :func:`write_proxy_dir` writes a folder holding ``config.yaml`` with
  ``litellm_settings: {callbacks: ["metaclaw_litellm.callback"]}`` and, optionally, a ``custom_auth``
  module that maps test keys to teams and owners (LiteLLM's documented hook for own auth; there is no database
  here, so no virtual keys), so that tenant isolation is tested through the proxy's own auth path.
- :func:`seed_home` prepares a ``METACLAW_HOME``: the starter skills, plus skills scoped to a tenant.
- The proxy itself comes from :mod:`metaclaw_plugin.devtools.proxyrun` (``litellm --config ... --host
  127.0.0.1``, ``LITELLM_LOCAL_MODEL_COST_MAP=True``, a random master key).
- Reading what the proxy recorded: :func:`journal_turns` (the durable journal, what is on disk the moment
  the client has its response) and :func:`wait_session` (SQLite, after the write-behind queue).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before anything imports litellm

import httpx
from waiting import wait_for

from metaclaw_plugin.devtools.proxyrun import ModelSpec, ProxyProcess, launch_proxy, proxy_config, write_config
from metaclaw_plugin.devtools.upstream import Upstream
from metaclaw_plugin.skillbank.bank import bundled_skills_dir
from metaclaw_plugin.skillbank.files import SkillStore
from metaclaw_plugin.skillbank.render import OPEN
from metaclaw_plugin.store.trajectories import TrajectoryStore
from metaclaw_plugin.types import Session, Skill

MODEL = "stub-model"
EXTRACT_AT_ONCE = {"METACLAW_MEMORY__EXTRACT_EVERY": "1"}  # memory extracted from every turn, not every few

CUSTOM_AUTH = '''\
"""Test-only auth for the LiteLLM proxy: keys from $MC_TEST_KEYS (key -> team id or null, or {"team", "user"}: the
key's team and its owner, LiteLLM's user_id of the key)."""
import hashlib
import contextlib
import json
import os

from fastapi import HTTPException
from litellm.proxy._types import UserAPIKeyAuth

KEYS = json.loads(os.environ["MC_TEST_KEYS"])
MASTER = os.environ["LITELLM_MASTER_KEY"]


async def user_api_key_auth(request, api_key: str) -> UserAPIKeyAuth:
    key = api_key.removeprefix("Bearer ").strip()
    if key == MASTER:
        # what LiteLLM's own master-key check returns: the key replaced by its alias
        return UserAPIKeyAuth(api_key="litellm_proxy_master_key", user_role="proxy_admin")
    if key in KEYS:
        v = KEYS[key] if isinstance(KEYS[key], dict) else {"team": KEYS[key]}
        token = hashlib.sha256(key.encode()).hexdigest()
        return UserAPIKeyAuth(api_key=key, token=token, team_id=v.get("team"), user_id=v.get("user"))
    raise HTTPException(status_code=401, detail="unknown key")
'''


_CALLBACK_LISTS = (
    "callbacks",
    "success_callback",
    "failure_callback",
    "_async_success_callback",
    "_async_failure_callback",
    "input_callback",
    "service_callback",
)


@contextlib.contextmanager
def only_callback(cb: Any) -> Iterator[Any]:
    """Install ``cb`` as the only LiteLLM callback (SDK tests), and put every callback list back afterwards
    (LiteLLM copies ``litellm.callbacks`` into its other lists on the first call)."""
    import litellm

    saved = {name: list(getattr(litellm, name, []) or []) for name in _CALLBACK_LISTS}
    litellm.callbacks = [cb]
    try:
        yield cb
    finally:
        for name, items in saved.items():
            setattr(litellm, name, items)


def random_key(label: str = "") -> str:
    return f"sk-{label}{secrets.token_hex(16)}"


def write_proxy_dir(
    folder: Path,
    upstream_url: str,
    *,
    callbacks: bool = True,
    custom_auth: bool = False,
    general: dict[str, Any] | None = None,
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    gs = dict(general or {})
    if custom_auth:
        (folder / "mc_test_auth.py").write_text(CUSTOM_AUTH)
        gs["custom_auth"] = "mc_test_auth.user_api_key_auth"
    cfg = proxy_config(
        [ModelSpec(f"openai/{MODEL}", name=MODEL, api_base=upstream_url, api_key="not-needed")],
        callbacks=None if not callbacks else ("metaclaw_litellm.callback",),
        general_settings=gs,
        litellm_settings={"num_retries": 0, "request_timeout": 30},
    )
    return write_config(folder / "config.yaml", cfg)


@contextlib.contextmanager
def started_proxy(cfg: Path, home: Path, log_path: Path, cwd: Path, **env: str) -> Iterator[ProxyProcess]:
    """``litellm --config cfg`` with ``$METACLAW_HOME`` at ``home`` (and ``env``), ready; stopped afterwards."""
    full = dict(os.environ)
    full.pop("METACLAW_CONFIG", None)
    full.update(METACLAW_HOME=str(home), **env)
    proxy = launch_proxy(cfg, env=full, log_path=log_path, cwd=cwd)
    try:
        proxy.wait_ready(240)
        yield proxy
    finally:
        proxy.stop()


def seed_home(home: Path, tenant_skills: Iterable[Skill] = ()) -> Path:
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    store = SkillStore(home / "skills")
    store.seed_from(bundled_skills_dir(), actor="test")
    extra = list(tenant_skills)
    if extra:
        store.add_batch(extra, actor="test", bump=False)
    return home


def tenant_skill(name: str, tenant: str, description: str, body: str) -> Skill:
    return Skill(
        name=name,
        description=description,
        body=body,
        category="testing",
        origin="evolved",
        status="active",
        tenant=tenant,
    )


# Client side --------------------------------------------------------------------------------------
def chat(
    base_url: str,
    key: str,
    messages: Any = None,
    *,
    headers: dict[str, str] | None = None,
    stream: bool = False,
    body: dict[str, Any] | None = None,
    raw: bytes | None = None,
    timeout: float = 60.0,
) -> httpx.Response:
    """POST /v1/chat/completions; the whole body (SSE included) is read before this returns."""
    hdrs = {"Authorization": f"Bearer {key}", "Content-Type": "application/json", **(headers or {})}
    if raw is None:
        payload: dict[str, Any] = {"model": MODEL, **(body or {})}
        if messages is not None:
            payload["messages"] = messages
        if stream:
            payload["stream"] = True
        raw = json.dumps(payload).encode()
    return httpx.post(f"{base_url}/v1/chat/completions", content=raw, headers=hdrs, timeout=timeout)


def sse_text(resp: httpx.Response) -> str:
    out = []
    for line in resp.text.splitlines():
        if line.startswith("data: ") and line.strip() != "data: [DONE]":
            d = json.loads(line[6:])
            for ch in d.get("choices") or []:
                out.append((ch.get("delta") or {}).get("content") or "")
    return "".join(out)


def upstream_request(up: Upstream, marker: str) -> list[dict[str, Any]]:
    """The bodies the upstream got whose messages mention ``marker``."""
    with up._lock:
        reqs = list(up.requests)
    return [r for r in reqs if marker in json.dumps(r.get("messages", ""), ensure_ascii=False)]


def block_count(body: dict[str, Any]) -> int:
    return json.dumps(body.get("messages", ""), ensure_ascii=False).count(OPEN)


# Store side ------------------------------------------------------------------------------------------
def journal_records(home: Path) -> list[dict[str, Any]]:
    out = []
    for seg in sorted((home / "journal").glob("*.jsonl")):
        for line in seg.read_text("utf-8", "replace").splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def journal_turns(home: Path) -> dict[str, dict[str, Any]]:
    return {r["turn_id"]: r for r in journal_records(home) if r.get("t") == "turn"}


_READERS: dict[Path, TrajectoryStore] = {}


def reader(home: Path) -> TrajectoryStore:
    """A read-only view of the proxy's store (WAL: each query sees the latest commit)."""
    db = home / "metaclaw.db"
    store = _READERS.get(db)
    if store is None:
        store = _READERS[db] = TrajectoryStore(db)
    return store


def close_readers() -> None:
    for store in _READERS.values():
        store.close()  # never opened: closes its reader only
    _READERS.clear()


def durable_turn(home: Path, turn_id: str) -> dict[str, Any] | None:
    """The turn's record if it is on disk: in a journal segment, or already in SQLite."""
    rec = journal_turns(home).get(turn_id)
    if rec is not None:
        return rec
    rows = reader(home).queries.read("SELECT * FROM turns WHERE turn_id = ?", [turn_id])
    return dict(rows[0]) if rows else None


def wait_session(
    home: Path,
    session_id: str,
    tenant: str | None = None,
    *,
    turns: int | None = None,
    ended: bool | None = None,
    timeout: float = 20.0,
) -> Session:
    """Poll SQLite (the proxy's write-behind queue runs in the background) until the session has
    ``turns`` turns (and is ended, when asked). ``session_id`` as the client named it: stored as it is, or (a turn
    with a user) as that user's session of it, the most recent one."""
    seen: list[Session | None] = [None]

    def as_expected() -> Session | None:
        store = reader(home)
        last = store.get_session(session_id, tenant)
        if last is None:
            named = store.sessions_named(session_id, tenant)
            last = store.get_session(named[0]["session_id"], named[0]["tenant"]) if named else None
        seen[0] = last
        ok = (
            last is not None
            and (turns is None or len(last.turns) >= turns)
            and (ended is None or (last.ended_at is not None) == ended)
        )
        return last if ok else None

    def got() -> str:
        last = seen[0]
        return f"session {session_id!r} (tenant {tenant}): {None if last is None else (len(last.turns), last.ended_at)}"

    return wait_for(as_expected, timeout, got)


def user_texts(session: Session) -> list[str]:
    out = []
    for t in session.turns:
        users = [m for m in t.messages if m.get("role") == "user"]
        out.append(users[-1]["content"] if users else "")
    return out
