"""The Claude Code and Codex recipes (docs/clients/), run as a user runs them: the real CLIs, headless, through
``metaclaw-plugin proxy`` in front of the scripted upstream, which speaks each client's own API (Anthropic
``/v1/messages``, OpenAI ``/v1/responses``), streamed, as the clients always ask.

The upstream plays a two-step task: it first calls the client's own file-reading tool (Claude Code's ``Read``,
Codex's ``exec_command``), then answers. Each test asserts that the client ran and exited 0 with the answer, that
the skill block reached the upstream in the request's own system field (``system`` / ``instructions``) on every
main call, and that every main turn is stored with its reply (text or tool call) and its usage.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_cli import run_cli
from litellm_support import close_readers, reader, seed_home
from plugin_proxy import cli_proxy
from waiting import wait_for

from metaclaw_plugin.devtools.proxyrun import ProxyProcess
from metaclaw_plugin.devtools.upstream import Upstream
from metaclaw_plugin.skillbank.render import OPEN

pytestmark = pytest.mark.slow

TASK = "I need to edit and overwrite the existing settings.json config file; first read notes.txt and tell me its word."
NOTE = "pelican"
ANSWER = f"The word in notes.txt is {NOTE}."
READY_TIMEOUT = 240.0
CLI_TIMEOUT = 240.0


def _has_tool_result(body: dict[str, Any]) -> bool:
    for m in body.get("messages") or []:  # Anthropic: a tool_result block in a user message
        content = m.get("content") if isinstance(m, dict) else None
        if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return True
    items = body.get("input")  # Responses: a function_call_output item
    return isinstance(items, list) and any(
        isinstance(i, dict) and i.get("type") == "function_call_output" for i in items
    )


def _tool_names(body: dict[str, Any]) -> set[str]:
    return {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}


def task_script(workdir: Path) -> Callable[[dict[str, Any]], dict[str, Any] | str]:
    """The upstream's side of the task: read the note with the client's own tool, then answer."""

    def script(body: dict[str, Any]) -> dict[str, Any] | str:
        if TASK[:40] not in json.dumps(body) or _has_tool_result(body):
            return ANSWER  # the answer, and whatever side call the client makes
        tools = _tool_names(body)
        if "Read" in tools:
            return {
                "content": "Reading it.",
                "tool_calls": [{"name": "Read", "arguments": {"file_path": str(workdir / "notes.txt")}}],
            }
        if "exec_command" in tools:
            return {"content": None, "tool_calls": [{"name": "exec_command", "arguments": {"cmd": "cat notes.txt"}}]}
        return ANSWER

    return script


class Stack:
    def __init__(self, upstream: Upstream, proxy: ProxyProcess, home: Path, workdir: Path):
        self.upstream, self.proxy, self.home, self.workdir = upstream, proxy, home, workdir


@contextlib.contextmanager
def proxy_cli(root: Path, upstream: Upstream, models: list[str], api_base: str) -> Iterator[Stack]:
    """``metaclaw-plugin proxy --model ... --api-base ...`` as the recipe page runs it, with its own home."""
    home = seed_home(root / "home")
    workdir = root / "work"
    workdir.mkdir()
    (workdir / "notes.txt").write_text(f"{NOTE}\n")
    upstream.script = task_script(workdir)
    args = [*(a for m in models for a in ("--model", m)), "--api-base", api_base]
    try:
        with cli_proxy(home, *args) as proxy:
            yield Stack(upstream, proxy, home, workdir)
    finally:
        close_readers()


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    up = Upstream().start()
    yield up
    up.stop()


def _main_calls(up: Upstream, route: str) -> list[dict[str, Any]]:
    """The upstream calls of the task (the client's side calls, if any, carry other text)."""
    with up._lock:
        return [b for p, b in zip(up.paths, up.requests, strict=True) if p == route and TASK[:40] in json.dumps(b)]


def _stored_turns(home: Path, expected: int) -> list[Any]:
    def turns() -> list[Any] | None:
        store = reader(home)
        sessions = [
            store.get_session(sid, None) for (sid,) in store.queries.read("SELECT session_id FROM sessions", [])
        ]
        found = [
            t
            for s in sessions
            if s is not None
            for t in s.turns
            if t.kind == "main" and TASK[:40] in json.dumps(t.messages)
        ]
        return found if len(found) >= expected else None

    return wait_for(turns, 30.0, f"{expected} main turns of the task in the store")


def _assert_every_turn_captured(turns: list[Any]) -> None:
    for t in turns:
        assert t.response is not None and (t.response.get("content") or t.tool_calls), t
        usage = t.usage or {}
        assert usage.get("prompt_tokens", 0) > 0 and usage.get("completion_tokens", 0) > 0, usage
        assert t.injected_skills, t.turn_id
        assert OPEN in json.dumps(t.messages[0]), "the record shows the block in the system message"
    assert len({t.session_id for t in turns}) == 1, "one client session is one stored session"
    assert any(t.tool_calls for t in turns), "the tool-calling turn kept its tool call"
    assert any(t.response.get("content") == ANSWER for t in turns), "the final answer is stored"


def test_claude_code_learns_through_the_proxy(tmp_path: Path, upstream: Upstream):
    api_base = f"http://{upstream.host}:{upstream.port}"  # LiteLLM's anthropic/ route adds /v1/messages
    with proxy_cli(tmp_path, upstream, ["claude-*=anthropic/stub-model"], api_base) as stack:
        run = run_cli(
            "claude",
            ["-p", TASK, "--output-format", "text", "--allowedTools", "Read"],
            workdir=stack.workdir,
            env={
                "ANTHROPIC_BASE_URL": stack.proxy.base_url,
                "ANTHROPIC_AUTH_TOKEN": stack.proxy.master_key,
                "CLAUDE_CONFIG_DIR": str(stack.workdir / ".home" / ".claude"),
            },
            timeout=CLI_TIMEOUT,
        )
        assert run.returncode == 0, run.tail()
        assert ANSWER in run.stdout, run.tail()
        calls = _main_calls(upstream, "messages")
        assert len(calls) >= 2, f"{len(calls)} task calls reached the upstream"
        for body in calls:
            assert body.get("stream") is True
            assert json.dumps(body.get("system")).count(OPEN) == 1, "the block is in the request's own system field"
        _assert_every_turn_captured(_stored_turns(stack.home, len(calls)))


def test_codex_learns_through_the_proxy(tmp_path: Path, upstream: Upstream):
    with proxy_cli(tmp_path, upstream, ["gpt-stub=openai/stub-model"], upstream.url) as stack:
        codex_home = stack.workdir / ".home" / ".codex"
        codex_home.mkdir(parents=True)
        (codex_home / "config.toml").write_text(codex_config(stack.proxy.base_url, "gpt-stub"))
        run = run_cli(
            "codex",
            ["exec", "--skip-git-repo-check", "--sandbox", "danger-full-access", TASK],
            workdir=stack.workdir,
            env={"CODEX_HOME": str(codex_home), "METACLAW_PROXY_KEY": stack.proxy.master_key},
            timeout=CLI_TIMEOUT,
        )
        assert run.returncode == 0, run.tail()
        assert ANSWER in run.stdout, run.tail()
        calls = _main_calls(upstream, "responses")
        assert len(calls) >= 2, f"{len(calls)} task calls reached the upstream"
        for body in calls:
            assert body.get("stream") is True
            assert str(body.get("instructions")).count(OPEN) == 1, "the block is in the request's instructions"
        _assert_every_turn_captured(_stored_turns(stack.home, len(calls)))


def codex_config(proxy_url: str, model: str) -> str:
    """The recipe's ``~/.codex/config.toml`` (docs/clients/codex.md): a provider at the proxy's /v1 that speaks
    the Responses API, keyed by an environment variable; nothing else leaves the machine."""
    return f"""model = "{model}"
model_provider = "metaclaw"
check_for_update_on_startup = false

[model_providers.metaclaw]
name = "metaclaw-plugin proxy"
base_url = "{proxy_url}/v1"
env_key = "METACLAW_PROXY_KEY"
wire_api = "responses"

[analytics]
enabled = false

[feedback]
enabled = false
"""
