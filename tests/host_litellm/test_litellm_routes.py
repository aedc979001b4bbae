"""Every LiteLLM route learns alike: chat completions, Anthropic ``/v1/messages`` and OpenAI ``/v1/responses``,
each on its native provider route (``anthropic/...``, ``openai/...``) and through LiteLLM's chat-completions bridge
(``hosted_vllm/...``, ``openai/chat_completions/...``), streamed and not, in a real proxy and in the SDK.

For every route x stream the skill block reaches the upstream in the request's own system field, and the turn is
stored with its reply (text and tool calls) and its usage: no streamed turn on any route is stored without its
reply (issue 29).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from litellm_support import close_readers, durable_turn, only_callback, seed_home, wait_session
from waiting import async_wait_for

from metaclaw_plugin.devtools.proxyrun import ModelSpec, launch_proxy, proxy_config, write_config
from metaclaw_plugin.devtools.upstream import Upstream
from metaclaw_plugin.skillbank.render import OPEN

pytestmark = pytest.mark.slow

MATCHING = "I need to edit and overwrite the existing settings.json config file; update two keys in it."
STUB = "stub-model"
READY_TIMEOUT = 240.0

# name the client asks for -> (route the client speaks, LiteLLM model string, base URL suffix, upstream route)
PROXY_MODELS: dict[str, tuple[str, str, str, str]] = {
    "chat": ("chat", f"openai/{STUB}", "/v1", "chat"),
    "claude-native": ("messages", f"anthropic/{STUB}", "", "messages"),
    "claude-bridge": ("messages", f"hosted_vllm/{STUB}", "/v1", "chat"),
    "codex-native": ("responses", f"openai/{STUB}", "/v1", "responses"),
    "codex-bridge": ("responses", f"openai/chat_completions/{STUB}", "/v1", "chat"),
}


def _script(body: dict[str, Any]) -> dict[str, Any] | str:
    # the request's own words: the memory section may recall an earlier request's words (its marker, its CALL-A-TOOL)
    text = re.sub(r"<metaclaw-memory>.*?</metaclaw-memory>", "", json.dumps(body, ensure_ascii=False))
    marker = text.split("MARK-", 1)[1][:8] if "MARK-" in text else "none"
    if "FAIL-500" in text:
        return {"status": 500, "error": f"upstream exploded for {marker}"}
    if "CALL-A-TOOL" in text:
        return {"content": None, "tool_calls": [{"name": "read_file", "arguments": {"path": f"{marker}.txt"}}]}
    return f"reply for {marker}: done, with a sentence long enough to span several stream chunks."


def _reply_text(marker: str) -> str:
    return f"reply for {marker}: done, with a sentence long enough to span several stream chunks."


# The three request formats -------------------------------------------------------------------------------------
def request_body(route: str, model: str, text: str, stream: bool) -> tuple[str, dict[str, Any]]:
    """(path, body) of one user turn, with a system prompt of the route's own kind and one tool."""
    if route == "chat":
        return "/v1/chat/completions", {
            "model": model,
            "stream": stream,
            "messages": [{"role": "system", "content": "You are terse."}, {"role": "user", "content": text}],
            "tools": [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}],
        }
    if route == "messages":
        return "/v1/messages", {
            "model": model,
            "stream": stream,
            "max_tokens": 256,
            # a list of blocks, as Claude Code sends it (the block goes in as one more block)
            "system": [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
            "tools": [{"name": "read_file", "description": "Read a file", "input_schema": {"type": "object"}}],
        }
    return "/v1/responses", {
        "model": model,
        "stream": stream,
        "instructions": "You are terse.",
        "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}],
        "tools": [{"type": "function", "name": "read_file", "parameters": {"type": "object"}}],
    }


def upstream_system(route: str, body: dict[str, Any]) -> str:
    """The system field of a request as the upstream got it."""
    if route == "messages":
        return json.dumps(body.get("system"), ensure_ascii=False)
    if route == "responses":
        return str(body.get("instructions") or "")
    first = (body.get("messages") or [{}])[0]
    return json.dumps(first.get("content"), ensure_ascii=False) if first.get("role") == "system" else ""


def client_text(route: str, resp: httpx.Response, stream: bool) -> str:
    """The reply text the client got, from JSON or from the route's SSE events."""
    if not stream:
        d = resp.json()
        if route == "chat":
            return d["choices"][0]["message"].get("content") or ""
        if route == "messages":
            return "".join(b.get("text", "") for b in d["content"] if b["type"] == "text")
        return "".join(p["text"] for o in d["output"] if o["type"] == "message" for p in o["content"])
    out = []
    for line in resp.text.splitlines():
        if not line.startswith("data: ") or line.strip() == "data: [DONE]":
            continue
        d = json.loads(line[6:])
        if route == "chat":
            out += [(c.get("delta") or {}).get("content") or "" for c in d.get("choices") or []]
        elif route == "messages" and d.get("type") == "content_block_delta":
            out.append(d["delta"].get("text", ""))
        elif route == "responses" and d.get("type") == "response.output_text.delta":
            out.append(d["delta"])
    return "".join(out)


def assert_turn(turn: Any, *, marker: str, tool: bool) -> None:
    """A stored turn has its reply (text, or the tool call), its usage, its skills and the user's words."""
    assert turn.response is not None, turn
    if tool:
        assert [c["function"]["name"] for c in turn.tool_calls] == ["read_file"], turn.response
        assert json.loads(turn.tool_calls[0]["function"]["arguments"]) == {"path": f"{marker}.txt"}
    else:
        assert turn.response.get("content") == _reply_text(marker), turn.response
    usage = turn.usage or {}
    assert usage.get("prompt_tokens", 0) > 0 and usage.get("completion_tokens", 0) > 0, usage
    assert turn.injected_skills, "no skills injected"
    assert f"MARK-{marker}" in json.dumps(turn.messages), turn.messages
    assert OPEN in json.dumps(turn.messages[0]), "the record shows the block where it was sent"


# Proxy -------------------------------------------------------------------------------------------------------------
class Stack:
    def __init__(self, upstream: Upstream, url: str, key: str, home: Path):
        self.upstream, self.url, self.key, self.home = upstream, url, key, home


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("litellm-routes")
    up = Upstream(script=_script).start()
    home = seed_home(root / "home")
    base = f"http://{up.host}:{up.port}"
    specs = [
        ModelSpec(m, name=n, api_base=base + sfx, api_key="not-needed") for n, (_, m, sfx, _) in PROXY_MODELS.items()
    ]
    cfg = write_config(
        root / "config.yaml",
        proxy_config(specs, litellm_settings={"num_retries": 0, "request_timeout": 30}),
    )
    env = dict(os.environ)
    env.pop("METACLAW_CONFIG", None)
    env.update(METACLAW_HOME=str(home))
    proxy = launch_proxy(cfg, env=env, log_path=root / "proxy.log", cwd=root)
    try:
        proxy.wait_ready(READY_TIMEOUT)
        yield Stack(up, proxy.base_url, proxy.master_key, home)
    finally:
        proxy.stop()
        up.stop()
        close_readers()


def _upstream_body(up: Upstream, marker: str) -> tuple[str, dict[str, Any]]:
    with up._lock:
        seen = [(p, b) for p, b in zip(up.paths, up.requests, strict=True) if f"MARK-{marker}" in json.dumps(b)]
    assert len(seen) == 1, [p for p, _ in seen]
    return seen[0]


@pytest.mark.parametrize("tool", [False, True], ids=["text", "tool"])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("model", list(PROXY_MODELS))
def test_proxy_every_route_injects_in_its_system_field_and_stores_reply_and_usage(
    stack: Stack, model: str, stream: bool, tool: bool
):
    route, _, _, upstream_route = PROXY_MODELS[model]
    marker = uuid.uuid4().hex[:8]
    text = f"{MATCHING} MARK-{marker}" + (" CALL-A-TOOL" if tool else "")
    sid = f"routes-{model}-{marker}"
    path, body = request_body(route, model, text, stream)
    headers = {"Authorization": f"Bearer {stack.key}", "X-Session-Id": sid}
    resp = httpx.post(stack.url + path, json=body, headers=headers, timeout=60)
    assert resp.status_code == 200, resp.text[:2000]
    # durable the moment the client has the whole response (JSON, or the stream's last event): no waiting
    call_id = resp.headers.get("x-litellm-call-id")
    assert call_id, dict(resp.headers)
    rec = durable_turn(stack.home, call_id)
    assert rec is not None and rec.get("response_hash"), rec
    assert json.loads(rec["usage"]).get("completion_tokens", 0) > 0, rec
    if not tool:
        assert client_text(route, resp, stream) == _reply_text(marker)

    got_route, got = _upstream_body(stack.upstream, marker)
    assert got_route == upstream_route
    system = upstream_system(got_route, got)
    assert system.count(OPEN) == 1 and "You are terse." in system, system[:500]
    if route == "messages" and got_route == "messages":  # the client's own blocks are kept as they were
        assert got["system"][0] == body["system"][0]

    session = wait_session(stack.home, sid, turns=1)
    assert len(session.turns) == 1
    assert_turn(session.turns[0], marker=marker, tool=tool)
    assert session.turns[0].tools and session.turns[0].tools[0]["function"]["name"] == "read_file"


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("model", ["claude-native", "codex-native"])
def test_proxy_an_upstream_failure_is_a_failed_turn_and_the_client_gets_the_error(
    stack: Stack, model: str, stream: bool
):
    route = PROXY_MODELS[model][0]
    marker = uuid.uuid4().hex[:8]
    sid = f"routes-fail-{model}-{marker}"
    path, body = request_body(route, model, f"{MATCHING} MARK-{marker} FAIL-500", stream)
    resp = httpx.post(
        stack.url + path, json=body, headers={"Authorization": f"Bearer {stack.key}", "X-Session-Id": sid}, timeout=60
    )
    assert resp.status_code >= 500 or "error" in resp.text, resp.text[:1000]
    turn = wait_session(stack.home, sid, turns=1).turns[0]
    assert turn.response is None and turn.error and "upstream exploded" in turn.error, turn


def test_proxy_a_retry_that_carries_its_block_is_not_injected_twice(stack: Stack):
    marker = uuid.uuid4().hex[:8]
    path, body = request_body("messages", "claude-native", f"{MATCHING} MARK-{marker}", False)
    body["system"] = f"You are terse.\n\n{OPEN}\nold block\n</metaclaw-skills>"
    resp = httpx.post(stack.url + path, json=body, headers={"x-api-key": stack.key}, timeout=60)
    assert resp.status_code == 200, resp.text[:2000]
    _, got = _upstream_body(stack.upstream, marker)
    assert got["system"] == body["system"]


# SDK ---------------------------------------------------------------------------------------------------------------
SDK_CASES = {
    # id: (route, LiteLLM function, model, base URL suffix, upstream route)
    "messages-native": ("messages", "anthropic_messages", f"anthropic/{STUB}", "", "messages"),
    "messages-bridge": ("messages", "anthropic_messages", f"hosted_vllm/{STUB}", "/v1", "chat"),
    "responses-native": ("responses", "aresponses", f"openai/{STUB}", "/v1", "responses"),
    "responses-bridge": ("responses", "aresponses", f"openai/chat_completions/{STUB}", "/v1", "chat"),
    "responses-sync": ("responses", "responses", f"openai/{STUB}", "/v1", "responses"),
}


@pytest.fixture(scope="module")
def loop():
    """One event loop for the module, kept running between calls: LiteLLM's logging worker binds to the first
    loop it sees, and the log events (the SDK's stream path) run on it, as in an application's own loop."""
    lp = asyncio.new_event_loop()
    yield lp
    lp.run_until_complete(lp.shutdown_asyncgens())
    lp.close()


@pytest.fixture(scope="module")
def sdk_upstream():
    up = Upstream(script=_script).start()
    yield up
    up.stop()


async def _drain(result: Any) -> None:
    if hasattr(result, "__aiter__"):
        async for _ in result:
            pass
    elif hasattr(result, "__iter__") and not isinstance(result, (dict, str, bytes)):
        for _ in result:
            pass


@pytest.mark.parametrize("tool", [False, True], ids=["text", "tool"])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("case", list(SDK_CASES))
def test_sdk_every_route_injects_in_its_system_field_and_stores_reply_and_usage(
    loop: asyncio.AbstractEventLoop, plugin: Any, sdk_upstream: Upstream, case: str, stream: bool, tool: bool
):
    import litellm

    from metaclaw_litellm import MetaClawCallback

    route, fn, model, sfx, upstream_route = SDK_CASES[case]
    marker = uuid.uuid4().hex[:8]
    text = f"{MATCHING} MARK-{marker}" + (" CALL-A-TOOL" if tool else "")
    sid = f"sdk-{case}-{marker}"
    _, body = request_body(route, model, text, stream)
    md_key = "litellm_metadata" if route == "messages" else "metadata"
    kwargs = {**body, "api_base": f"http://{sdk_upstream.host}:{sdk_upstream.port}{sfx}", "api_key": "x"}
    kwargs[md_key] = {"session_id": sid}
    with only_callback(MetaClawCallback(plugin)):
        if fn == "responses":
            _drain_sync(litellm.responses(**kwargs))
        else:

            async def call() -> None:
                await _drain(await getattr(litellm, fn)(**kwargs))

            loop.run_until_complete(call())

        got_route, got = _upstream_body(sdk_upstream, marker)
        assert got_route == upstream_route
        assert upstream_system(got_route, got).count(OPEN) == 1

        def stored() -> Any:
            plugin.flush()
            s = plugin.store.get_session(sid)
            return s if s is not None and s.turns else None

        session = loop.run_until_complete(async_wait_for(stored, 20.0, f"session {sid}"))
        assert len(session.turns) == 1
        assert_turn(session.turns[0], marker=marker, tool=tool)


def _drain_sync(result: Any) -> None:
    if hasattr(result, "__iter__") and not isinstance(result, (dict, str, bytes)) and not hasattr(result, "output"):
        for _ in result:
            pass
