"""The LiteLLM adapter in the SDK (``litellm.acompletion`` / ``completion``), in-process, against the
local upstream; plus the adapter's translation rules and the ``proxy`` CLI's config, which need no
proxy process."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import uuid
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm
from click.testing import CliRunner
from litellm_support import only_callback as _callbacks
from waiting import async_wait_for, wait_for

from metaclaw_litellm import MetaClawCallback
from metaclaw_litellm.translate import (
    already_injected,
    assemble_stream,
    key_user,
    response_message,
    tenant_from_key,
)
from metaclaw_plugin import MetaClawPlugin, Settings
from metaclaw_plugin.cli import main as cli_main
from metaclaw_plugin.devtools.proxyrun import ModelSpec, percentile, unsafe_key_reason
from metaclaw_plugin.devtools.upstream import Upstream
from metaclaw_plugin.integration import conversation_fingerprint
from metaclaw_plugin.skillbank.files import SkillStore
from metaclaw_plugin.skillbank.render import OPEN
from metaclaw_plugin.types import Session, Skill, TurnContext

MATCHING = "I need to edit and overwrite the existing settings.json config file; update two keys in it."
MODEL = "openai/stub-model"
READ_FILE = {
    "type": "function",
    "function": {"name": "read_file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}},
}


def _script(body: dict[str, Any]) -> dict[str, Any] | str:
    text = json.dumps(body.get("messages", ""))
    if "FAIL-500" in text:
        return {"status": 500, "error": "upstream exploded (FAIL-500)"}
    if "CALL-A-TOOL" in text:
        return {"content": None, "tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]}
    return "sdk reply"


@pytest.fixture(scope="module")
def loop():
    """One event loop for the module: LiteLLM's logging worker binds to the first loop it sees."""
    lp = asyncio.new_event_loop()
    yield lp
    lp.run_until_complete(lp.shutdown_asyncgens())
    lp.close()


@pytest.fixture(scope="module")
def upstream():
    up = Upstream(script=_script).start()
    yield up
    up.stop()


@pytest.fixture
def sdk(plugin: MetaClawPlugin, upstream: Upstream):
    cb = MetaClawCallback(plugin)
    with _callbacks(cb):
        upstream.clear()
        yield cb


def _kw(upstream: Upstream, **extra: Any) -> dict[str, Any]:
    return {"model": MODEL, "api_base": upstream.url, "api_key": "not-needed", "num_retries": 0, **extra}


def _session(plugin: MetaClawPlugin, sid: str, turns: int, tenant: str | None = None, timeout: float = 15.0) -> Session:
    def recorded() -> Session | None:
        plugin.flush()
        s = plugin.store.get_session(sid, tenant)
        return s if s is not None and len(s.turns) >= turns else None

    return wait_for(recorded, timeout, f"session {sid} with {turns} turns")


async def _await_turns(plugin: MetaClawPlugin, sid: str, turns: int, timeout: float = 15.0) -> None:
    def recorded() -> bool:
        plugin.flush()
        s = plugin.store.get_session(sid)
        return s is not None and len(s.turns) >= turns

    await async_wait_for(recorded, timeout, f"session {sid} with {turns} turns")


def _bodies(upstream: Upstream, tag: str) -> list[dict[str, Any]]:
    return [b for b in upstream.requests if tag in json.dumps(b.get("messages", ""))]


# acompletion --------------------------------------------------------------------------------------------
def test_acompletion_injects_and_records_the_injected_messages(loop, sdk, plugin, upstream):
    sid, tag = f"sdk-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex[:8]

    async def go():
        return await litellm.acompletion(
            messages=[{"role": "user", "content": f"{MATCHING} [{tag}]"}], metadata={"session_id": sid}, **_kw(upstream)
        )

    resp = loop.run_until_complete(go())
    assert resp.choices[0].message.content == "sdk reply"
    (body,) = _bodies(upstream, tag)
    assert json.dumps(body["messages"]).count(OPEN) == 1
    assert "### backup-before-modify" in body["messages"][0]["content"]
    # recorded before acompletion returned (the success deployment hook), with the injected messages
    assert plugin.store.flush()
    (turn,) = plugin.store.get_session(sid).turns
    assert turn.host == "litellm-sdk" and turn.kind == "main"
    assert turn.messages[0]["role"] == "system" and OPEN in turn.messages[0]["content"]
    assert "backup-before-modify" in turn.injected_skills
    assert turn.response == {"role": "assistant", "content": "sdk reply"}
    assert turn.usage and turn.usage["total_tokens"] > 0


def test_acompletion_stream_is_assembled(loop, sdk, plugin, upstream):
    sid, tag = f"sdk-stream-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex[:8]

    async def go() -> str:
        resp = await litellm.acompletion(
            messages=[{"role": "user", "content": f"{MATCHING} [{tag}]"}],
            metadata={"session_id": sid, "session_done": True},
            stream=True,
            stream_options={"include_usage": True},
            **_kw(upstream),
        )
        parts = []
        async for chunk in resp:
            if chunk.choices and chunk.choices[0].delta.content:
                parts.append(chunk.choices[0].delta.content)
        # The SDK logs a stream after its last chunk, in a background task: keep the loop alive for it.
        await _await_turns(plugin, sid, 1)
        return "".join(parts)

    assert loop.run_until_complete(go()) == "sdk reply"
    (body,) = _bodies(upstream, tag)
    assert json.dumps(body["messages"]).count(OPEN) == 1
    s = _session(plugin, sid, 1)
    (turn,) = s.turns
    assert turn.response == {"role": "assistant", "content": "sdk reply"}
    assert OPEN in turn.messages[0]["content"]
    assert s.ended_at is not None  # metadata.session_done


def test_acompletion_tool_calls_side_turns_and_tenant(loop, sdk, plugin, upstream):
    sid = f"sdk-tools-{uuid.uuid4().hex[:8]}"

    async def go():
        r1 = await litellm.acompletion(
            messages=[{"role": "user", "content": "CALL-A-TOOL"}],
            metadata={"session_id": sid, "tenant": "acme"},
            tools=[READ_FILE],
            **_kw(upstream),
        )
        r2 = await litellm.acompletion(
            messages=[{"role": "user", "content": f"{MATCHING} side"}],
            metadata={"session_id": sid, "tenant": "acme", "turn_type": "side"},
            **_kw(upstream),
        )
        return r1, r2

    r1, _ = loop.run_until_complete(go())
    assert r1.choices[0].message.tool_calls[0].function.name == "read_file"
    s = _session(plugin, sid, 2, tenant="acme")
    assert s.tenant == "acme"
    assert s.turns[0].tool_calls[0]["function"]["name"] == "read_file"
    assert s.turns[0].tools == [READ_FILE]  # the request's tools, captured with the turn
    assert s.turns[1].kind == "side" and s.turns[1].injected_skills == [] and s.turns[1].tools is None
    side_body = [b for b in upstream.requests if "side" in json.dumps(b["messages"])][-1]
    assert OPEN not in json.dumps(side_body["messages"])


def test_acompletion_failure_is_recorded_and_raised_unchanged(loop, sdk, plugin, upstream):
    sid = f"sdk-fail-{uuid.uuid4().hex[:8]}"

    async def go():
        try:
            await litellm.acompletion(
                messages=[{"role": "user", "content": "FAIL-500"}], metadata={"session_id": sid}, **_kw(upstream)
            )
        finally:
            await _await_turns(plugin, sid, 1)  # failures are logged in a background task

    with pytest.raises(litellm.InternalServerError, match="FAIL-500"):
        loop.run_until_complete(go())
    (turn,) = _session(plugin, sid, 1).turns
    assert turn.response is None and "upstream exploded (FAIL-500)" in turn.error


def test_sync_completion_is_captured_but_not_injected(sdk, plugin, upstream):
    sid, tag = f"sdk-sync-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex[:8]
    resp = litellm.completion(
        messages=[{"role": "user", "content": f"{MATCHING} [{tag}]"}],
        metadata={"session_id": sid},
        tools=[READ_FILE],
        **_kw(upstream),
    )
    assert resp.choices[0].message.content == "sdk reply"
    (body,) = _bodies(upstream, tag)
    assert OPEN not in json.dumps(body["messages"])  # LiteLLM has no modifying hook for sync calls
    (turn,) = _session(plugin, sid, 1).turns
    assert turn.messages == [{"role": "user", "content": f"{MATCHING} [{tag}]"}]
    assert turn.response["content"] == "sdk reply" and turn.injected_skills == []
    assert turn.tools == [READ_FILE]  # from the log event's call details


# Fail open ---------------------------------------------------------------------------------------------
def test_plugin_exceptions_never_reach_the_caller(loop, sdk, plugin, upstream, monkeypatch):
    def boom(*a: Any, **k: Any) -> Any:
        raise RuntimeError("deliberate")

    monkeypatch.setattr(plugin, "prepare_turn", boom)
    monkeypatch.setattr(plugin, "complete_turn", boom)
    tag = uuid.uuid4().hex[:8]
    msgs = [{"role": "user", "content": f"{MATCHING} [{tag}]"}]

    async def go():
        return await litellm.acompletion(messages=msgs, **_kw(upstream))

    assert loop.run_until_complete(go()).choices[0].message.content == "sdk reply"
    (body,) = _bodies(upstream, tag)
    assert body["messages"] == msgs
    assert sdk.errors["async_pre_call_deployment_hook"] >= 1


def test_broken_skill_store_passes_requests_through(loop, tmp_path: Path, upstream):
    not_a_dir = tmp_path / "skills"
    not_a_dir.write_text("a file where the skills folder should be")
    cb = MetaClawCallback(settings=Settings(home=tmp_path, skills_dir=not_a_dir))
    with _callbacks(cb):
        tag = uuid.uuid4().hex[:8]
        msgs = [{"role": "user", "content": f"{MATCHING} [{tag}]"}]

        async def go():
            return await litellm.acompletion(messages=msgs, **_kw(upstream))

        assert loop.run_until_complete(go()).choices[0].message.content == "sdk reply"
        (body,) = _bodies(upstream, tag)
        assert body["messages"] == msgs
        assert cb.plugin is None and cb.plugin_error


# The proxy hooks, called directly (the full proxy runs in test_litellm_proxy.py) -----------------------------
class _Key:
    def __init__(self, **kw: Any):
        self.api_key = kw.pop("api_key", None)
        self.team_id = kw.pop("team_id", None)
        self.key_alias = kw.pop("key_alias", None)
        self.token = kw.pop("token", None)
        self.user_id = kw.pop("user_id", None)


def _data(messages: Any, **kw: Any) -> dict[str, Any]:
    return {
        "model": "m",
        "messages": messages,
        "litellm_call_id": uuid.uuid4().hex,
        "metadata": kw.pop("metadata", {}),
        "proxy_server_request": {"headers": kw.pop("headers", {})},
        **kw,
    }


def test_proxy_pre_call_hook_rules(loop, plugin):
    cb = MetaClawCallback(plugin)
    run = loop.run_until_complete
    # generated session ids (missing_session_id: generate) are ignored in favour of the fingerprint
    d = _data(
        [{"role": "user", "content": "hello there"}],
        litellm_session_id="gen-1",
        metadata={"litellm_session_id_generated": True, "session_id": "gen-1"},
    )
    d["metadata"].pop("session_id")
    run(cb.async_pre_call_hook(_Key(), None, d, "acompletion"))
    assert cb._inflight.get(d["litellm_call_id"]).ctx.session_id.startswith("fp-")
    # header beats metadata; X-Turn-Type side; X-Session-Done
    d = _data(
        [{"role": "user", "content": MATCHING}],
        litellm_session_id="hdr",
        metadata={"session_id": "hdr"},
        headers={"x-turn-type": "side", "x-session-done": "true"},
    )
    out = run(cb.async_pre_call_hook(_Key(team_id="t1"), None, d, "acompletion"))
    inf = cb._inflight.get(d["litellm_call_id"])
    assert (inf.ctx.session_id, inf.ctx.kind, inf.done, inf.ctx.tenant) == ("hdr", "side", True, "team:t1")
    assert OPEN not in json.dumps(out["messages"])
    # other call types and malformed bodies pass through untouched
    for call_type, data in (
        ("aembedding", {"input": "x"}),
        ("acompletion", {"model": "m"}),
        ("acompletion", {"messages": "nope"}),
        ("acompletion", {"messages": None}),
    ):
        before = json.dumps(data)
        assert run(cb.async_pre_call_hook(_Key(), None, data, call_type)) is data
        assert json.dumps(data) == before
    # a block already present (a retry) is not injected twice
    d = _data(
        [{"role": "system", "content": f"x {OPEN}\nold\n</metaclaw-skills>"}, {"role": "user", "content": MATCHING}]
    )
    out = run(cb.async_pre_call_hook(_Key(), None, d, "acompletion"))
    assert json.dumps(out["messages"]).count(OPEN) == 1


def test_log_events_do_not_record_a_turn_twice(loop, plugin):
    cb = MetaClawCallback(plugin)
    d = _data([{"role": "user", "content": "hi"}], litellm_session_id="twice", metadata={"session_id": "twice"})
    loop.run_until_complete(cb.async_pre_call_hook(_Key(), None, d, "acompletion"))
    resp = litellm.ModelResponse(choices=[{"message": {"role": "assistant", "content": "yo"}}])
    loop.run_until_complete(cb.async_post_call_success_hook(d, _Key(), resp))
    kwargs = {"litellm_call_id": d["litellm_call_id"], "call_type": "acompletion", "messages": d["messages"]}
    loop.run_until_complete(cb.async_log_success_event(kwargs, resp, None, None))
    loop.run_until_complete(cb.async_log_failure_event({**kwargs, "exception": RuntimeError("late")}, None, None, None))
    assert [t.response for t in _session(plugin, "twice", 1).turns] == [{"role": "assistant", "content": "yo"}]
    assert len(cb._inflight) == 0


# Translation rules -----------------------------------------------------------------------------------------------
def test_tenant_never_contains_the_raw_key():
    raw = "sk-verysecret0123456789abcdef"
    assert tenant_from_key(_Key(api_key=raw, team_id="blue")) == "team:blue"
    assert tenant_from_key(_Key(api_key=raw, key_alias="ci-bot")) == "key:ci-bot"
    t = tenant_from_key(_Key(api_key=raw, token="hashed-token-value"))
    assert t.startswith("key:") and raw not in t and "hashed-token-value" not in t
    assert tenant_from_key(_Key(api_key=raw, token="litellm_proxy_master_key")) == "default"
    assert tenant_from_key(_Key(api_key=raw, key_alias="x"), mode="team") == "default"
    assert tenant_from_key(_Key(team_id="blue"), mode="none") == "default"
    assert tenant_from_key(None) == "default"


def test_a_request_naming_no_user_is_its_keys_owners_and_the_master_keys_is_nobodys():
    assert key_user(_Key(token="hashed", user_id="ana"), "team:blue") == "ana"
    # two keys of one team with no owner: each key is a user of its own
    assert key_user(_Key(token="t1"), "team:blue") != key_user(_Key(token="t2"), "team:blue")
    assert key_user(_Key(token="t1"), tenant_from_key(_Key(token="t1"))) is None  # the key is the tenant
    # the master key's calls carry the proxy's admin name as their user: no one's, as an unnamed user's
    assert key_user(_Key(api_key="litellm_proxy_master_key", user_id="default_user_id"), "default") is None
    assert key_user(_Key(token="litellm_proxy_master_key", user_id="someone"), "default") is None
    # a key the admin made owns no user by that: it is its own tenant's, or (in a shared tenant) a user of its own
    assert key_user(_Key(token="hashed", user_id="default_user_id"), tenant_from_key(_Key(token="hashed"))) is None
    assert key_user(_Key(token="hashed", user_id="default_user_id"), "default") == tenant_from_key(_Key(token="hashed"))
    assert key_user(None, "default") is None


def test_long_tenants_and_users_that_share_a_prefix_stay_apart(home: Path):
    """Fails before: team ids, key aliases, SDK ``metadata.tenant`` and user ids were cut to 128/256 characters, so
    two long names with a common start were one tenant (one user): each saw the other's rules and memories. The core
    keys a long id by its keyed hash, whole."""
    a, b = "customer-portal-" * 16 + "alpha", "customer-portal-" * 16 + "beta"
    for make in (lambda n: _Key(team_id=n), lambda n: _Key(key_alias=n)):
        assert tenant_from_key(make(a)) != tenant_from_key(make(b))
    cb = MetaClawCallback()

    def sdk(md: dict[str, Any]) -> Any:
        return cb._sdk_context({"litellm_params": {"metadata": md}}, "call-1", []).ctx

    assert sdk({"tenant": a}).tenant != sdk({"tenant": b}).tenant
    assert sdk({"user_id": a}).user != sdk({"user_id": b}).user
    rule = Skill(
        name="metric-units",
        description="Standing rule: always answer in metric units",
        body="- Always answer in metric units.",
        origin="evolved",
        tenant=tenant_from_key(_Key(team_id=a)),
        kind="convention",
    )
    SkillStore(home / "skills").add_batch([rule], actor="test")
    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        p.skills.refresh(force=True)
        for team, want in ((a, ["metric-units"]), (b, [])):
            for ctx in (
                TurnContext("s", tenant=tenant_from_key(_Key(team_id=team))),
                sdk({"tenant": tenant_from_key(_Key(team_id=team))}),
            ):
                assert p.prepare_turn(ctx, [], record=False).block.names == want, team[-5:]
    finally:
        p.stop()


def test_fingerprint_follows_the_conversation(home):
    p = MetaClawPlugin(Settings(home=home))

    def fp(messages):
        return conversation_fingerprint(p, messages, "acme", "ana")

    a = [{"role": "system", "content": "S"}, {"role": "user", "content": "first"}]
    grown = a + [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "second"}]
    injected = [{"role": "system", "content": f"S\n\n{OPEN}\nx\n</metaclaw-skills>"}] + a[1:]
    first = fp(a)
    assert first is not None and fp(injected) == first  # a retry that carries its block
    assert fp(grown) == first  # the next request: the history resent
    assert conversation_fingerprint(p, a, "acme", "ben") != fp(a)  # another user's conversation
    assert fp([]) is None and fp("x") is None
    assert fp([{"role": "user", "content": None}]) is None  # no words: the adapter's per-call id
    assert already_injected(injected) and not already_injected(a)


def test_assemble_stream_and_response_message():
    chunks = [
        {"choices": [{"delta": {"role": "assistant", "content": "Hel"}}]},
        {"choices": [{"delta": {"content": "lo"}}]},
        {
            "choices": [
                {"delta": {"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "f", "arguments": '{"a"'}}]}}
            ]
        },
        {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}}]}}]},
        {"choices": [{"delta": {}, "finish_reason": "tool_calls"}]},
        {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}},
    ]
    msg, usage = assemble_stream(chunks)
    assert msg == {
        "role": "assistant",
        "content": "Hello",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}],
    }
    assert usage == {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    assert assemble_stream([]) == ({"role": "assistant", "content": ""}, None)
    assert assemble_stream(chunks[:2])[1] is None  # no usage anywhere: none invented
    msg, usage = response_message(litellm.ModelResponse(choices=[{"message": {"role": "assistant", "content": "x"}}]))
    assert msg == {"role": "assistant", "content": "x"}


def test_litellm_chunk_objects_are_read_like_dicts():
    """LiteLLM's stream chunks are pydantic models that keep most values as extras; the fast reader must
    see fields, extras, absent names (default) and class attributes exactly as getattr does."""
    from litellm.types.utils import ModelResponseStream, Usage

    from metaclaw_litellm.translate import get

    text = ModelResponseStream(id="x", choices=[{"index": 0, "delta": {"role": "assistant", "content": "Hel"}}])
    more = ModelResponseStream(
        id="x",
        choices=[
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {"index": 0, "id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                    ]
                },
            }
        ],
    )
    last = ModelResponseStream(id="x", choices=[{"index": 0, "delta": {"content": "lo"}, "finish_reason": "stop"}])
    last.usage = Usage(prompt_tokens=3, completion_tokens=2, total_tokens=5)  # set the way LiteLLM sets it
    msg, usage = assemble_stream([text, more, last])
    assert msg == {
        "role": "assistant",
        "content": "Hello",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
    }
    assert usage == {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    # Without include_usage LiteLLM strips usage from the chunks and keeps it in the last one's hidden params.
    bare = ModelResponseStream(id="x", choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}])
    bare._hidden_params["usage"] = Usage(prompt_tokens=4, completion_tokens=1, total_tokens=5)
    assert assemble_stream([text, bare]) == (
        {"role": "assistant", "content": "Hel"},
        {"prompt_tokens": 4, "completion_tokens": 1, "total_tokens": 5},
    )
    for obj in (text, text.choices[0], text.choices[0].delta, last):
        for name in ("id", "choices", "delta", "content", "usage", "finish_reason", "nothing_here", "model_dump"):
            expect = getattr(obj, name, None)
            assert get(obj, name) is expect or get(obj, name) == expect, (type(obj).__name__, name)


def test_proxy_stream_chunks_take_the_fast_reader_and_read_the_same():
    """Inside the proxy, chunks carry the upstream's top-level keys as extras (``service_tier``... as
    None) and the usage chunk keeps its usage there. Those must take the cheap reader, and it must read
    exactly what the general one reads."""
    from litellm.types.utils import ModelResponseStream, Usage

    from metaclaw_litellm.translate import _assemble_any, _plain_litellm_text

    top = {
        "id": "c",
        "created": 1,
        "model": "m",
        "object": "chat.completion.chunk",
        "service_tier": None,
        "citations": None,
        "obfuscation": None,
    }
    pieces = ["", "Done. I read ", "the file — ", "naïve \u2028 ok", None]
    stream = [
        ModelResponseStream(
            **top, choices=[{"index": 0, "delta": {"role": "assistant" if i == 0 else None, "content": p}}]
        )
        for i, p in enumerate(pieces)
    ]
    usage_chunk = ModelResponseStream(
        id="c", choices=[{"index": 0, "delta": {}}], usage=Usage(prompt_tokens=7, completion_tokens=3, total_tokens=10)
    )
    hidden = ModelResponseStream(**top, choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}])
    hidden._hidden_params["usage"] = Usage(prompt_tokens=4, completion_tokens=1, total_tokens=5)
    for chunks, usage in (
        (stream + [usage_chunk], {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}),
        (stream + [hidden], {"prompt_tokens": 4, "completion_tokens": 1, "total_tokens": 5}),
        (stream, None),
    ):
        assert _plain_litellm_text(chunks) is not None
        want = ({"role": "assistant", "content": "Done. I read the file — naïve \u2028 ok"}, usage)
        assert assemble_stream(chunks) == _assemble_any(chunks) == want
    tool = ModelResponseStream(
        **top,
        choices=[
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {"index": 0, "id": "t1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                    ]
                },
            }
        ],
    )
    assert _plain_litellm_text(stream + [tool]) is None  # tool calls: the general reader
    assert assemble_stream(stream + [tool]) == _assemble_any(stream + [tool])


# proxyrun and the `proxy` command's config --------------------------------------------------------------------------
def test_master_key_rules():
    for bad in (
        "sk-1234",
        "sk-12345678901234567890123",
        "1234567890abcdefghijklmnop",
        "sk-short",
        "sk-aaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "",
    ):
        assert unsafe_key_reason(bad), bad
    assert unsafe_key_reason("sk-" + uuid.uuid4().hex) is None
    assert ModelSpec.parse("fast=openai/gpt-4o-mini").entry() == {
        "model_name": "fast",
        "litellm_params": {"model": "openai/gpt-4o-mini"},
    }
    assert percentile([1, 2, 3, 4], 50) == 2.5 and percentile(list(range(1, 101)), 99) == pytest.approx(99.01)


def test_proxy_command_dry_run_writes_a_private_config(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("METACLAW_HOME", str(tmp_path))
    monkeypatch.delenv("LITELLM_MASTER_KEY", raising=False)
    res = CliRunner().invoke(
        cli_main,
        [
            "proxy",
            "--model",
            "openai/gpt-4o-mini",
            "--model",
            "local=ollama/llama3",
            "--api-base",
            "http://127.0.0.1:9/v1",
            "--port",
            "4999",
            "--dry-run",
        ],
    )
    assert res.exit_code == 0, res.output
    key = next(ln.split()[-1] for ln in res.output.splitlines() if ln.startswith("master key"))
    assert unsafe_key_reason(key) is None and res.output.count(key) == 1
    cfg = tmp_path / "litellm-proxy.yaml"
    assert stat.S_IMODE(cfg.stat().st_mode) == 0o600
    text = cfg.read_text()
    assert key not in text and "os.environ/LITELLM_MASTER_KEY" in text and "metaclaw_litellm.callback" in text
    assert "--host 127.0.0.1 --port 4999" in res.output
    import yaml

    data = yaml.safe_load(text)
    assert [m["model_name"] for m in data["model_list"]] == ["openai/gpt-4o-mini", "local"]
    res = CliRunner().invoke(cli_main, ["proxy", "--model", "x", "--master-key", "sk-1234", "--dry-run"])
    assert res.exit_code == 2


# The host's own model (learning.model: host) ---------------------------------------------------------------
def test_the_sdk_callers_model_serves_the_plugin_and_its_calls_are_not_turns(loop, upstream, home, monkeypatch):
    """The first SDK call offers its model, endpoint and key; the plugin's own call through it reaches the same
    upstream with the plugin's tag, runs through the callback unrecorded, and is charged to the host's budget."""
    from metaclaw_plugin.learning.llm import HOST, Budget, LLMClient
    from metaclaw_plugin.store import open_database

    monkeypatch.delenv("METACLAW_LEARNING__MODEL", raising=False)
    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        with _callbacks(MetaClawCallback(p)):
            sid = f"sdk-host-{uuid.uuid4().hex[:8]}"

            async def go() -> Any:
                return await litellm.acompletion(
                    messages=[{"role": "user", "content": "hello there"}], metadata={"session_id": sid}, **_kw(upstream)
                )

            loop.run_until_complete(go())
            hm = p.host_models.get()
            assert hm is not None and hm.name == MODEL and "SDK" in hm.via and hm.local
            db = open_database(p.settings)
            client = LLMClient("judge", model=None, host=p.host_models, budget=Budget(db, {HOST: (5, 0)}))
            res = client.complete([{"role": "system", "content": "plugin-own-call"}, {"role": "user", "content": "x"}])
            assert res.text == "sdk reply"
            (body,) = _bodies(upstream, "plugin-own-call")
            assert body["model"] == "stub-model"
            assert client.budget is not None and client.budget.used(HOST)[0] == 1
            db.close()
        p.flush()
        sessions = [row["session_id"] for row in p.store.list_sessions(limit=50)]
        assert sessions == [sid]  # the plugin's own call is no session of the host's
    finally:
        p.stop()
