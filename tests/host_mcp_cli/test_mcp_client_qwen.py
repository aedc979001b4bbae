"""A real MCP client: qwen-code (``qwen -p``, headless) launches ``metaclaw-plugin mcp`` from its settings.json
``mcpServers`` and talks chat completions to the scripted upstream, which plays a model that calls the metaclaw
tools. The tools must be called, and their results must reach the model's next request.

The CLI runs through tests/support/agent_cli.py (Node 24 first on PATH, a HOME of its own, no telemetry).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agent_cli import run_cli
from cli_support import cli_command
from test_mcp_server import TASK, seed_library, server_env

from metaclaw_plugin import MetaClawPlugin, Settings, user_memory
from metaclaw_plugin.devtools.upstream import Upstream

PREFERENCE = "I prefer blue-green rollouts for the billing service"

pytestmark = pytest.mark.slow


def qwen_settings(mhome: Path, session: str) -> dict[str, Any]:
    cmd = cli_command()
    return {
        "mcpServers": {
            "metaclaw": {
                "command": cmd[0],
                "args": [*cmd[1:], "mcp", "--tenant", "acme", "--session", session],
                "env": server_env(mhome),
                "trust": True,  # its tools run without a confirmation prompt (headless has no one to ask)
                "alwaysLoadTools": True,  # declared to the model up front, not deferred behind tool_search
            }
        },
        "telemetry": {"enabled": False},
        "privacy": {"usageStatisticsEnabled": False},
    }


def play_model(body: dict[str, Any]) -> dict[str, Any] | str:
    """A model that searches the skills for its task, stores the user's preference, then answers."""
    tools = [t["function"]["name"] for t in body.get("tools") or []]
    done = [m for m in body["messages"] if m.get("role") == "tool"]

    def tool(suffix: str) -> str | None:
        return next((t for t in tools if t.endswith("__" + suffix)), None)

    if not done and tool("skills_search"):
        return {"content": None, "tool_calls": [{"name": tool("skills_search"), "arguments": {"task": TASK}}]}
    if len(done) == 1 and tool("memory_store"):
        return {"content": None, "tool_calls": [{"name": tool("memory_store"), "arguments": {"text": PREFERENCE}}]}
    return "Rolled out blue-green."


def text_of(content: Any) -> str:
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content or "")


def test_qwen_code_calls_the_metaclaw_tools_and_reads_their_results(tmp_path: Path, home: Path) -> None:
    seed_library(home)
    work = tmp_path / "work"
    (work / ".home" / ".qwen").mkdir(parents=True)  # run_cli's HOME for this workdir
    (work / ".home" / ".qwen" / "settings.json").write_text(json.dumps(qwen_settings(home, "qwen-task")))
    with Upstream(script=play_model) as up:
        r = run_cli(
            "qwen",
            ["-p", TASK, "--auth-type", "openai"],
            workdir=work,
            env={"OPENAI_API_KEY": "sk-test-not-a-real-key", "OPENAI_BASE_URL": up.url, "OPENAI_MODEL": up.model},
            timeout=240,
        )
        requests = list(up.requests)
    assert r.returncode == 0, r.tail()
    assert "Rolled out blue-green." in r.stdout

    declared = [t["function"]["name"] for t in requests[0].get("tools") or []]
    assert "mcp__metaclaw__skills_search" in declared, declared
    # Each tool's result reaches the model's next request, as the tool message answering its call.
    results: dict[str, str] = {}
    for body in requests:
        calls = {
            c["id"]: c["function"]["name"]
            for m in body["messages"]
            if m.get("role") == "assistant"
            for c in m.get("tool_calls") or []
        }
        for m in body["messages"]:
            if m.get("role") == "tool" and m.get("tool_call_id") in calls:
                results[calls[m["tool_call_id"]]] = text_of(m.get("content"))
    assert set(results) == {"mcp__metaclaw__skills_search", "mcp__metaclaw__memory_store"}, results
    found = results["mcp__metaclaw__skills_search"]
    assert "acme-deploy" in found and "drain the blue pool" in found and "globex-deploy" not in found
    assert PREFERENCE in results["mcp__metaclaw__memory_store"]

    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        with user_memory(p, "acme") as mem:
            # (the session's end also filed its summary, as for a host's session: the main turn carried the task)
            assert PREFERENCE in [m["text"] for m in mem.search("blue-green rollouts billing")]
        s = p.read_session("qwen-task", "acme")
        assert s is not None and s.host == "mcp"
        main = [t for t in s.turns if t.kind == "main"]
        assert len(main) == 1 and "acme-deploy" in main[0].injected_skills
    finally:
        p.stop()
