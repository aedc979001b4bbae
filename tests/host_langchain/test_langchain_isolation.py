"""Who is who in a real ``create_agent`` loop (the model scripted; nothing of LangChain mocked).

A held-out red team's classes: a user's next thread remembers what they said; one thread id sent by two users, or
by one user of two tenants, is two sessions and shares nothing; a thread resumed after the idle timeout is still
its user's; on LangGraph's server the authenticated caller (``langgraph_auth_user_id``) is the user, whatever
``user_id`` a client puts in its config.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent
from langchain_support import make_plugin, model
from langgraph.checkpoint.memory import InMemorySaver

from metaclaw_langchain import MetaClawMiddleware
from metaclaw_plugin import MetaClawPlugin

FACT = "Please remember that my blood type is AB negative."
ASK = "Which blood type do I have?"


@pytest.fixture
def plugin(tmp_path: Path):
    p = make_plugin(tmp_path / "home")
    yield p
    p.stop()


def say(plugin: MetaClawPlugin, text: str, config: dict[str, Any], *, saver: Any = None, **mw: Any) -> str:
    """One invoke of a fresh agent (its own thread state unless ``saver``); returns the system text the model saw."""
    m = model("Noted.")
    agent = create_agent(m, [], middleware=[MetaClawMiddleware(plugin, **mw)], checkpointer=saver or InMemorySaver())
    agent.invoke({"messages": [{"role": "user", "content": text}]}, config=config)
    assert plugin.flush(30)
    plugin.refresh_memory()
    first = m.received[0][0]  # the agent's call (the memory extractor may call the host's model after it)
    return str(first.content) if first.type == "system" else ""


def cfg(thread: str, user: str | None = None, tenant: str | None = None, **configurable: Any) -> dict[str, Any]:
    conf: dict[str, Any] = {"thread_id": thread, **configurable}
    meta: dict[str, Any] = {}
    if user is not None:
        conf["user_id"] = user
    if tenant is not None:
        meta["tenant"] = tenant
    return {"configurable": conf, "metadata": meta}


def test_a_users_next_thread_remembers_and_nobody_elses_does(plugin: MetaClawPlugin) -> None:
    say(plugin, FACT, cfg("t-1", "ana"))
    assert "AB negative" in say(plugin, ASK, cfg("t-2", "ana"))
    assert "AB negative" not in say(plugin, ASK, cfg("t-3", "ben"))
    assert "AB negative" not in say(plugin, ASK, cfg("t-4"))  # a run that names no user
    assert "AB negative" not in say(plugin, ASK, cfg("t-5", "ana", tenant="globex"))


def test_one_thread_id_of_two_users_or_two_tenants_is_several_sessions(plugin: MetaClawPlugin) -> None:
    for who, tenant in (("ana", None), ("ben", None), ("ana", "globex"), (None, None)):
        say(plugin, "Summarise the night shift notes.", cfg("ward-7", who, tenant))
    rows = plugin.store.list_sessions(100)
    sessions = [plugin.store.get_session(r["session_id"], r["tenant"]) for r in rows]
    assert len(sessions) == 4
    assert len({(s.tenant, s.turns[0].user) for s in sessions if s is not None}) == 4


def test_a_thread_resumed_after_the_idle_timeout_is_still_its_users(plugin: MetaClawPlugin) -> None:
    saver = InMemorySaver()  # an app that leaves its threads open: the idle sweep ends them
    say(plugin, FACT, cfg("long", "ana"), saver=saver, end_sessions=False)
    assert plugin.sweep_sessions(now=time.time() + plugin.settings.sessions.session_idle_timeout + 5) == 1
    assert plugin.flush(30)  # what the end learned, by the time the user is back
    plugin.refresh_memory()
    assert "AB negative" in say(plugin, ASK, cfg("long", "ana"), saver=saver, end_sessions=False)
    assert "AB negative" not in say(plugin, ASK, cfg("long", "ben"), saver=saver, end_sessions=False)
    s = plugin.read_session("long", user="ana")
    assert s is not None and {t.user for t in s.turns} == {"ana"} and len(s.turns) == 2


def test_langgraph_servers_authenticated_caller_is_the_user_whatever_the_config_says(plugin: MetaClawPlugin) -> None:
    """Fails before: a client of a LangGraph server that put ``user_id: ana`` in its config was Ana (the config's
    ``user_id`` was read before the server's ``langgraph_auth_user_id``), and read Ana's memories."""
    say(plugin, FACT, cfg("t-a", langgraph_auth_user_id="ana"))
    assert "AB negative" in say(plugin, ASK, cfg("t-b", langgraph_auth_user_id="ana"))
    spoofed = cfg("t-c", "ana", langgraph_auth_user_id="mallory")
    spoofed["metadata"]["user_id"] = "ana"
    assert "AB negative" not in say(plugin, ASK, spoofed)
    s = plugin.read_session("t-c", user="mallory")
    assert s is not None and {t.user for t in s.turns} == {"mallory"}
