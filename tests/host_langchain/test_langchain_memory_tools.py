"""``metaclaw_langchain.memory_tools`` in a real create_agent loop: a fact stored in one run is found (and injected)
in a later run of the same user, never seen by another user, and forgotten on request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import ToolMessage
from langchain_support import call, make_plugin, model

from metaclaw_langchain import MetaClawMiddleware, memory_tools
from metaclaw_plugin import MetaClawPlugin

FACT = "We deploy the billing service with Helm, never with kubectl apply."


@pytest.fixture
def plugin(tmp_path: Path):
    p = make_plugin(tmp_path / "home")
    yield p
    p.stop()


def run(plugin: MetaClawPlugin, script: list[Any], ask: str, sid: str, user: str, tenant: str = "acme") -> Any:
    """One agent run; returns (tool messages, the scripted model)."""
    m = model(*script)
    agent = create_agent(m, memory_tools(plugin), system_prompt="You help.", middleware=[MetaClawMiddleware(plugin)])
    out = agent.invoke(
        {"messages": [{"role": "user", "content": ask}]},
        config={"metadata": {"session_id": sid, "tenant": tenant, "user_id": user}},
    )
    assert plugin.flush(10)  # the session's extraction and the view's refresh are done
    return [x for x in out["messages"] if isinstance(x, ToolMessage)], m


def test_stored_in_one_run_found_in_a_later_one_and_only_by_that_user(plugin: MetaClawPlugin) -> None:
    tools, _ = run(
        plugin, [call("memory_store", {"text": FACT}), "Noted."], "Please store the deployment fact.", "s1", "ana"
    )
    stored = json.loads(tools[0].content)
    assert tools[0].status == "success" and "Helm" in stored["text"]

    ask = "How do we deploy the billing service?"
    tools, m = run(plugin, [call("memory_search", {"query": "deploy billing service"}), "With Helm."], ask, "s2", "ana")
    found = json.loads(tools[0].content)
    assert found[0]["id"] == stored["id"]  # (the session summary of s1 may follow it)
    assert "Helm" in m.system_texts()[0]  # the middleware injects it into the later session too

    tools, m = run(plugin, [call("memory_search", {"query": "deploy billing service"}), "?"], ask, "s3", "bob")
    assert json.loads(tools[0].content) == [] and "Helm" not in m.system_texts()[0]
    tools, _ = run(plugin, [call("memory_search", {"query": "deploy billing"}), "?"], ask, "s4", "ana", "other")
    assert json.loads(tools[0].content) == []  # nor another tenant's user of the same name

    # Another user cannot forget it by id; the owner can, by words.
    tools, _ = run(plugin, [call("memory_forget", {"memory_id": stored["id"]}), "ok"], "forget it", "s5", "bob")
    assert tools[0].status == "error" and "no memory" in str(tools[0].content)
    tools, _ = run(plugin, [call("memory_forget", {"about": "billing Helm deploy"}), "ok"], "forget", "s6", "ana")
    assert stored["id"] in json.loads(tools[0].content)["forgotten"]
    tools, m = run(plugin, [call("memory_search", {"query": "deploy billing service"}), "?"], ask, "s7", "ana")
    assert stored["id"] not in [f["id"] for f in json.loads(tools[0].content)]
    assert "Helm" not in tools[0].content and "Helm" not in m.system_texts()[0]


def test_a_credential_or_an_empty_forget_is_a_tool_error_the_agent_reads(plugin: MetaClawPlugin) -> None:
    script = [
        call("memory_store", {"text": "my api key is sk-live-abcdefghijklmnop1234"}),
        call("memory_forget", {}),
        "ok",
    ]
    tools, _ = run(plugin, script, "Here is my key.", "k1", "ana")
    assert [t.status for t in tools] == ["error", "error"]
    assert "credential" in str(tools[0].content) and "sk-live" not in str(tools[0].content)
    with plugin_memory(plugin) as mem:
        kept = mem.ops.list_("acme", "ana", status="all")
    assert not [m for m in kept if "sk-live" in json.dumps(m)]


def plugin_memory(plugin: MetaClawPlugin) -> Any:
    from metaclaw_plugin import user_memory

    return user_memory(plugin, "acme", "ana")
