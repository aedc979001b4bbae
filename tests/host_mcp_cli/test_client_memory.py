"""The next conversation remembers (issue 42): with each client's recipe exactly as written (docs/clients/, no extra
headers), a fact the user states in one conversation reaches the next conversation's upstream request, inside the
memory section, within 60 s (aider, qwen-code, Claude Code, Codex, opencode; the MCP recipe's memory is its own
tools', tests/host_mcp_cli/test_mcp_server.py). The real CLIs, headless, through ``metaclaw-plugin proxy`` in front
of a scripted upstream that speaks each client's API (chat completions, Anthropic messages, Responses)."""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agent_cli import run_cli
from litellm_support import close_readers, seed_home
from plugin_proxy import cli_proxy
from test_client_recipes import codex_config
from waiting import wait_for

from metaclaw_plugin.devtools.proxyrun import ProxyProcess
from metaclaw_plugin.devtools.upstream import Upstream
from metaclaw_plugin.skillbank.render import MEMORY_CLOSE, MEMORY_OPEN

pytestmark = pytest.mark.slow

REACH_WITHIN = 60.0  # the bound: the fact is recallable this soon after the first conversation
CLI_TIMEOUT = 240.0


def _answer(body: dict[str, Any]) -> str:
    return "Understood."  # plain text: every client takes it as the final answer


def _memory_sections(body: dict[str, Any]) -> list[str]:
    text = json.dumps(body, ensure_ascii=False)
    out = []
    while MEMORY_OPEN in text:
        start = text.index(MEMORY_OPEN)
        end = text.find(MEMORY_CLOSE, start)
        out.append(text[start : end if end > 0 else len(text)])
        text = text[start + len(MEMORY_OPEN) :]
    return out


def _passage_stored(home: Path, marker: str) -> bool | None:
    db = home / "metaclaw.db"
    if not db.exists():
        return None
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT 1 FROM passages WHERE text LIKE ? AND status = 'active'", (f"%{marker}%",))
        return bool(rows.fetchall()) or None
    except sqlite3.OperationalError:
        return None
    finally:
        conn.close()


Run = Callable[[ProxyProcess, Path, str], None]


def _aider(proxy: ProxyProcess, work: Path, prompt: str) -> None:
    r = run_cli(
        "aider",
        ["--model", "openai/gpt-4o", "--yes-always", "--no-git", "--no-show-model-warnings", "--no-pretty"]
        + ["--analytics-disable", "--no-check-update", "--message", prompt],
        workdir=work,
        env={"OPENAI_API_BASE": proxy.url, "OPENAI_API_KEY": proxy.master_key},
        timeout=CLI_TIMEOUT,
    )
    assert r.returncode == 0, r.tail()


def _qwen(proxy: ProxyProcess, work: Path, prompt: str) -> None:
    r = run_cli(
        "qwen",
        ["-p", prompt, "--auth-type", "openai"],
        workdir=work,
        env={"OPENAI_BASE_URL": proxy.url, "OPENAI_API_KEY": proxy.master_key, "OPENAI_MODEL": "qwen3-coder-plus"},
        timeout=CLI_TIMEOUT,
    )
    assert r.returncode == 0, r.tail()


def _claude(proxy: ProxyProcess, work: Path, prompt: str) -> None:
    r = run_cli(
        "claude",
        ["-p", prompt, "--output-format", "text"],
        workdir=work,
        env={
            "ANTHROPIC_BASE_URL": proxy.base_url,
            "ANTHROPIC_AUTH_TOKEN": proxy.master_key,
            "CLAUDE_CONFIG_DIR": str(work / ".home" / ".claude"),
        },
        timeout=CLI_TIMEOUT,
    )
    assert r.returncode == 0, r.tail()


def _codex(proxy: ProxyProcess, work: Path, prompt: str) -> None:
    codex_home = work / ".home" / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(codex_config(proxy.base_url, "gpt-stub"))
    r = run_cli(
        "codex",
        ["exec", "--skip-git-repo-check", prompt],
        workdir=work,
        env={"CODEX_HOME": str(codex_home), "METACLAW_PROXY_KEY": proxy.master_key},
        timeout=CLI_TIMEOUT,
    )
    assert r.returncode == 0, r.tail()


def opencode_config(proxy_url: str, key: str) -> dict[str, Any]:
    """The recipe's ``opencode.json`` (docs/clients/opencode.md): the proxy as an OpenAI-compatible provider."""
    return {
        "$schema": "https://opencode.ai/config.json",
        "provider": {
            "metaclaw": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "metaclaw-plugin proxy",
                "options": {"baseURL": proxy_url, "apiKey": key},
                "models": {"gpt-stub": {"name": "gpt-stub"}},
            }
        },
        "model": "metaclaw/gpt-stub",
        "autoupdate": False,
        "share": "disabled",
    }


def _opencode(proxy: ProxyProcess, work: Path, prompt: str) -> None:
    (work / "opencode.json").write_text(json.dumps(opencode_config(proxy.url, proxy.master_key)))
    r = run_cli("opencode", ["run", prompt], workdir=work, timeout=CLI_TIMEOUT)
    assert r.returncode == 0, r.tail()


CLIENTS: dict[str, tuple[Run, Callable[[str], list[str]]]] = {
    # the proxy's --model mapping as each recipe page gives it (the upstream URL filled in)
    "aider": (_aider, lambda up: ["--model", f"*=openai/*@{up}"]),
    "qwen-code": (_qwen, lambda up: ["--model", f"qwen3-coder-plus=openai/qwen3-coder-plus@{up}"]),
    "claude-code": (_claude, lambda up: ["--model", "claude-*=anthropic/stub-model", "--api-base", up[:-3]]),
    "codex": (_codex, lambda up: ["--model", "gpt-stub=openai/stub-model", "--api-base", up]),
    "opencode": (_opencode, lambda up: ["--model", f"gpt-stub=openai/stub-model@{up}"]),
}


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_a_fact_stated_in_one_conversation_reaches_the_next(tmp_path: Path, client: str) -> None:
    run, proxy_args = CLIENTS[client]
    marker = uuid.uuid4().hex[:6]
    fact = f"stagedb-{marker}"
    home = seed_home(tmp_path / "home")
    with Upstream(script=_answer) as up, cli_proxy(home, *proxy_args(up.url)) as proxy:
        try:
            work = tmp_path / "project"  # one user, one project, two runs of the client: two conversations
            work.mkdir()
            run(proxy, work, f"Remember that our staging database is called {fact}.")
            wait_for(lambda: _passage_stored(home, fact), REACH_WITHIN, f"the fact {fact} kept as a passage")
            asked = f"Which database do we use for staging? Ticket q{marker}."
            run(proxy, work, asked)
            with up._lock:
                bodies = [b for b in up.requests if f"q{marker}" in json.dumps(b)]
            assert bodies, "the second conversation reached the upstream"
            sections = [s for b in bodies for s in _memory_sections(b)]
            assert any(fact in s for s in sections), sections[:2]
        finally:
            close_readers()


def test_opencode_learns_through_the_proxy(tmp_path: Path) -> None:
    """opencode's recipe: its agent's calls carry the skills that fit and are stored with their reply; its title
    call is a side call (no skills, no memory)."""
    from litellm_support import reader

    from metaclaw_plugin.skillbank.render import OPEN

    marker = uuid.uuid4().hex[:6]
    task = f"I need to edit and overwrite the existing settings.json config file [{marker}]"
    home = seed_home(tmp_path / "home")
    with Upstream(script=_answer) as up, cli_proxy(home, "--model", f"gpt-stub=openai/stub-model@{up.url}") as proxy:
        try:
            work = tmp_path / "project"
            work.mkdir()
            _opencode(proxy, work, task)
            with up._lock:
                bodies = [b for b in up.requests if marker in json.dumps(b)]
            titles = [b for b in bodies if "title generator" in json.dumps(b["messages"][0])]
            main = [b for b in bodies if b not in titles]
            assert main and titles, len(bodies)
            assert all(OPEN in json.dumps(b["messages"][0]) for b in main)  # the skills reached the agent's call
            assert all(OPEN not in json.dumps(b) and MEMORY_OPEN not in json.dumps(b) for b in titles)

            def stored() -> list[Any] | None:
                store = reader(home)
                rows = store.queries.read("SELECT session_id FROM sessions", [])
                turns = [t for (sid,) in rows for t in (store.get_session(sid, None) or _none()).turns]
                found = [t for t in turns if marker in json.dumps(t.messages)]
                return found if len(found) >= len(bodies) else None

            turns = wait_for(stored, 30.0, "opencode's turns stored")
            assert {t.kind for t in turns} == {"main", "side"}
            assert all(t.response is not None for t in turns)
        finally:
            close_readers()


def _none() -> Any:
    from metaclaw_plugin.types import Session

    return Session("none", "none")
