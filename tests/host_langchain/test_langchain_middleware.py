"""MetaClawMiddleware in a real create_agent loop (no mocks of LangChain)."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langchain_support import (
    BLOCK_OPEN,
    EDIT_TASK,
    SYSTEM_PROMPT,
    FakeFiles,
    call,
    edit_script,
    explode,
    hook_errors,
    make_plugin,
    model,
    roles,
    seed_skills,
)
from langgraph.checkpoint.memory import InMemorySaver

from metaclaw_langchain import (
    MetaClawMiddleware,
    PolicyNotAvailableError,
    policy_chat_model,
)
from metaclaw_langchain._common import with_block
from metaclaw_plugin import MetaClawPlugin, SessionEnd

SKILL = "backup-before-modify"


@pytest.fixture
def plugin(tmp_path: Path):
    p = make_plugin(tmp_path / "home")
    yield p
    p.stop()


def user(text: str = EDIT_TASK) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def run_agent(agent: Any, inputs: dict[str, Any], config: dict[str, Any], how: str) -> dict[str, Any]:
    """Run one agent turn through invoke / ainvoke / stream / astream; return the final state's messages."""
    if how == "invoke":
        return agent.invoke(inputs, config=config)
    if how == "ainvoke":
        return asyncio.run(agent.ainvoke(inputs, config=config))
    if how == "stream":
        for _ in agent.stream(inputs, config=config, stream_mode="values"):
            pass
        return agent.get_state(config).values
    if how == "astream":

        async def go() -> None:
            async for _ in agent.astream(inputs, config=config, stream_mode=["updates", "messages"]):
                pass

        asyncio.run(go())
        return agent.get_state(config).values
    raise AssertionError(how)


def session(plugin: MetaClawPlugin, sid: str):
    assert plugin.flush(10)
    s = plugin.store.get_session(sid)
    assert s is not None, f"no session {sid!r}; have {plugin.store.list_sessions()}"
    return s


def tool_names(turn: Any) -> list[str]:
    return [tc["function"]["name"] for tc in turn.tool_calls]


# ---------------------------------------------------------------------------------------------------
# The main path, through every way of running an agent
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("how", ["invoke", "ainvoke", "stream", "astream"])
def test_injects_and_records_the_whole_run(plugin: MetaClawPlugin, how: str) -> None:
    m = model(*edit_script())
    files = FakeFiles()
    agent = create_agent(
        m,
        files.tools(),
        system_prompt=SYSTEM_PROMPT,
        middleware=[MetaClawMiddleware(plugin)],
        checkpointer=InMemorySaver(),
    )
    cfg = {"configurable": {"thread_id": f"thread-{how}"}}

    state = run_agent(agent, user(), cfg, how)

    assert state["messages"][-1].content.startswith("Done")
    assert "metaclaw" not in state or how in ("stream", "astream")  # private key: not in invoke's output
    assert files.files["settings.ini"] == "port=8080"
    # Every model call got the original system prompt first, then the skill block.
    assert len(m.received) == 3
    for system in m.system_texts():
        assert system.startswith(SYSTEM_PROMPT)
        assert BLOCK_OPEN in system and f"### {SKILL}" in system
    # The store holds the session with its model turns and the tool calls, in order.
    s = session(plugin, f"thread-{how}")
    assert [t.seq for t in s.turns] == [1, 2, 3]
    assert [tool_names(t) for t in s.turns] == [["read_file"], ["write_file"], []]
    t1, t2, t3 = s.turns
    assert t1.response["tool_calls"][0]["id"] == "read"
    assert json.loads(t2.response["tool_calls"][0]["function"]["arguments"]) == {
        "path": "settings.ini",
        "content": "port=8080",
    }
    assert t3.response == {"role": "assistant", "content": "Done: port set to 8080, backup kept."}
    # Messages as sent: the system message with the block, then the conversation with the tool results.
    assert roles(t3.messages) == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert BLOCK_OPEN in t3.messages[0]["content"] and t3.messages[0]["content"].startswith(SYSTEM_PROMPT)
    assert {k: t3.messages[3][k] for k in ("role", "tool_call_id", "content")} == {
        "role": "tool",
        "tool_call_id": "read",
        "content": "port=80\n",
    }
    assert t3.messages[5]["tool_call_id"] == "write"
    assert all(t.injected_skills and SKILL in t.injected_skills and t.error is None for t in s.turns)
    assert all(t.host == "langchain" and t.latency_ms is not None for t in s.turns)
    # after_agent ended the session with the outcome.
    assert s.ended_at is not None
    assert s.outcome["success"] is True and s.outcome["status"] == "completed"
    assert s.outcome["final_answer"] == "Done: port set to 8080, backup kept."
    assert (s.outcome["model_calls"], s.outcome["tool_calls"]) == (3, 2)
    assert hook_errors(plugin) == {}


def test_no_system_prompt_gets_a_system_message_with_the_block(plugin: MetaClawPlugin) -> None:
    m = model(*edit_script())
    agent = create_agent(m, FakeFiles().tools(), middleware=[MetaClawMiddleware(plugin)])
    agent.invoke(user(), config={"metadata": {"session_id": "no-system"}})
    first = m.received[0]
    assert isinstance(first[0], SystemMessage) and str(first[0].text).startswith(BLOCK_OPEN)
    assert isinstance(first[1], HumanMessage)
    s = session(plugin, "no-system")
    assert roles(s.turns[0].messages) == ["system", "user"]


def test_irrelevant_task_is_not_injected_but_still_recorded(plugin: MetaClawPlugin) -> None:
    m = model("Paris.")
    agent = create_agent(m, [], system_prompt=SYSTEM_PROMPT, middleware=[MetaClawMiddleware(plugin)])
    agent.invoke(user("zzqx vrrp"), config={"metadata": {"session_id": "plain"}})
    assert m.system_texts() == [SYSTEM_PROMPT]
    (turn,) = session(plugin, "plain").turns
    assert turn.injected_skills == [] and turn.messages[0] == {"role": "system", "content": SYSTEM_PROMPT}


def test_injection_disabled_only_captures(tmp_path: Path) -> None:
    plugin = make_plugin(tmp_path / "home", injection={"enabled": False})
    try:
        m = model(*edit_script())
        agent = create_agent(
            m, FakeFiles().tools(), system_prompt=SYSTEM_PROMPT, middleware=[MetaClawMiddleware(plugin)]
        )
        agent.invoke(user(), config={"metadata": {"session_id": "off"}})
        assert m.system_texts() == [SYSTEM_PROMPT] * 3
        assert len(session(plugin, "off").turns) == 3
    finally:
        plugin.stop()


def test_with_block_appends_to_list_content() -> None:
    sys_msg = SystemMessage(content=[{"type": "text", "text": "base"}])
    out = with_block(sys_msg, "<metaclaw-skills>x</metaclaw-skills>")
    assert out.content == [
        {"type": "text", "text": "base"},
        {"type": "text", "text": "<metaclaw-skills>x</metaclaw-skills>"},
    ]
    assert sys_msg.content == [{"type": "text", "text": "base"}]  # the original is untouched
    assert with_block(SystemMessage(content="a"), "b").content == "a\n\nb"
    assert with_block(None, "b").content == "b"


# ---------------------------------------------------------------------------------------------------
# Session ids and the thread/session semantics
# ---------------------------------------------------------------------------------------------------
def test_session_id_sources(plugin: MetaClawPlugin) -> None:
    mw = MetaClawMiddleware(plugin)
    # metadata.session_id wins over thread_id
    agent = create_agent(model("a"), [], middleware=[mw], checkpointer=InMemorySaver())
    agent.invoke(user("hi"), config={"configurable": {"thread_id": "th"}, "metadata": {"session_id": "explicit"}})
    assert len(session(plugin, "explicit").turns) == 1
    assert plugin.store.get_session("th") is None
    # neither: each run is its own generated session, ended
    agent2 = create_agent(model("b", "c"), [], middleware=[mw])
    agent2.invoke(user("one"))
    agent2.invoke(user("two"))
    assert plugin.flush(10)
    generated = [s for s in plugin.store.list_sessions() if s["session_id"].startswith("lc-")]
    assert len(generated) == 2 and all(s["ended_at"] and s["turns"] == 1 for s in generated)


def test_tenant_and_user_from_metadata(plugin: MetaClawPlugin) -> None:
    agent = create_agent(model("ok"), [], middleware=[MetaClawMiddleware(plugin)])
    agent.invoke(user("hi"), config={"metadata": {"session_id": "ten", "tenant": "acme", "user_id": "u7"}})
    assert plugin.flush(10)
    s = plugin.read_session("ten", tenant="acme", user="u7")  # each user's turns are a session of their own
    assert s is not None and s.turns[0].user == "u7"


def test_a_tool_loop_keeps_the_users_request_as_one_passage(plugin: MetaClawPlugin) -> None:
    """Each of the agent's model calls sends the user's request again: memory keeps it once, not once a call."""
    files = FakeFiles()
    agent = create_agent(model(*edit_script()), files.tools(), middleware=[MetaClawMiddleware(plugin)])
    meta = {"session_id": "loop", "tenant": "acme", "user_id": "ana"}
    agent.invoke(user(), config={"metadata": meta})
    assert plugin.flush(10)
    s = plugin.read_session("loop", tenant="acme", user="ana")
    assert s is not None and len(s.turns) == 3  # three model calls, each with the same user message
    kept = plugin.passages.find("acme", "ana")  # type: ignore[union-attr]
    assert [k.text for k in kept] == [EDIT_TASK]


def test_user_from_langgraph_auth(plugin: MetaClawPlugin) -> None:
    """LangGraph's server names the caller in ``configurable.langgraph_auth_user_id``."""
    agent = create_agent(model("ok"), [], middleware=[MetaClawMiddleware(plugin)])
    agent.invoke(user("hi"), config={"configurable": {"thread_id": "t-lg", "langgraph_auth_user_id": "lg-user"}})
    assert plugin.flush(10)
    s = plugin.read_session("t-lg", user="lg-user")
    assert s is not None and s.turns[0].user == "lg-user"


def test_a_thread_spans_several_invokes_each_one_an_episode(plugin: MetaClawPlugin) -> None:
    ends: list[Any] = []
    plugin.events.subscribe(SessionEnd, ends.append)
    m = model(*edit_script(tag="-1"), "Second answer.")
    agent = create_agent(
        m,
        FakeFiles().tools(),
        system_prompt=SYSTEM_PROMPT,
        middleware=[MetaClawMiddleware(plugin)],
        checkpointer=InMemorySaver(),
    )
    cfg = {"configurable": {"thread_id": "long-thread"}}
    agent.invoke(user(), config=cfg)
    agent.invoke(user("And what port was it before?"), config=cfg)

    s = session(plugin, "long-thread")
    assert len(s.turns) == 4
    # The second invoke's model call saw the whole thread (checkpointer) plus a fresh block.
    assert roles(s.turns[3].messages) == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert s.outcome["final_answer"] == "Second answer."  # the latest episode's outcome
    # One session-end event per invoke, each with that invoke's turns only.
    assert [(e.session_id, len(e.turn_ids), e.reason) for e in ends] == [
        ("long-thread", 3, "after_agent"),
        ("long-thread", 1, "after_agent"),
    ]


def test_end_sessions_false_leaves_the_session_open(plugin: MetaClawPlugin) -> None:
    agent = create_agent(model("ok"), [], middleware=[MetaClawMiddleware(plugin, end_sessions=False)])
    agent.invoke(user("hi"), config={"metadata": {"session_id": "open"}})
    s = session(plugin, "open")
    assert s.ended_at is None and len(s.turns) == 1
    assert [a.session_id for a in plugin.active_sessions()] == ["open"]


def test_outcome_fn_is_merged(plugin: MetaClawPlugin) -> None:
    def judge(state: Any) -> dict[str, Any]:
        return {"success": "8080" in state["messages"][-1].content, "feedback": "checked port"}

    agent = create_agent(model("port is 80"), [], middleware=[MetaClawMiddleware(plugin, outcome=judge)])
    agent.invoke(user("hi"), config={"metadata": {"session_id": "judged"}})
    out = session(plugin, "judged").outcome
    assert out["success"] is False and out["feedback"] == "checked port" and out["final_answer"] == "port is 80"


# ---------------------------------------------------------------------------------------------------
# Concurrency
# ---------------------------------------------------------------------------------------------------
def _check_isolated(plugin: MetaClawPlugin, sids: list[str]) -> None:
    assert plugin.flush(10)
    for sid in sids:
        s = plugin.store.get_session(sid)
        assert s is not None and len(s.turns) == 3, sid
        for t in s.turns:
            users = [m["content"] for m in t.messages if m["role"] == "user"]
            assert users == [f"{EDIT_TASK} [{sid}]"], (sid, users)
            for m in t.messages:
                if m["role"] == "tool":
                    assert m["tool_call_id"].endswith(sid), (sid, m)
            for tc in t.tool_calls:
                assert json.loads(tc["function"]["arguments"])["path"] == f"{sid}.ini"
        assert s.outcome["final_answer"] == f"done {sid}"


def test_concurrent_threads_never_mix(plugin: MetaClawPlugin) -> None:
    mw = MetaClawMiddleware(plugin)  # one middleware shared by every agent, as in a server
    sids = [f"s{i}" for i in range(6)]
    files = FakeFiles({f"{sid}.ini": "port=80" for sid in sids})
    barrier = threading.Barrier(len(sids))
    errors: list[BaseException] = []

    def worker(sid: str) -> None:
        try:
            m = model(*edit_script(path=f"{sid}.ini", answer=f"done {sid}", tag=f"-{sid}"), delay=0.01)
            agent = create_agent(
                m, files.tools(), system_prompt=SYSTEM_PROMPT, middleware=[mw], checkpointer=InMemorySaver()
            )
            barrier.wait(5)
            agent.invoke(user(f"{EDIT_TASK} [{sid}]"), config={"configurable": {"thread_id": sid}})
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(sid,)) for sid in sids]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors
    _check_isolated(plugin, sids)


def test_concurrent_async_sessions_never_mix(plugin: MetaClawPlugin) -> None:
    mw = MetaClawMiddleware(plugin)
    sids = [f"a{i}" for i in range(6)]
    files = FakeFiles({f"{sid}.ini": "port=80" for sid in sids})
    agents = {
        sid: create_agent(
            model(*edit_script(path=f"{sid}.ini", answer=f"done {sid}", tag=f"-{sid}"), delay=0.01),
            files.tools(),
            system_prompt=SYSTEM_PROMPT,
            middleware=[mw],
        )
        for sid in sids
    }

    async def go() -> None:
        await asyncio.gather(
            *(
                agents[sid].ainvoke(user(f"{EDIT_TASK} [{sid}]"), config={"configurable": {"thread_id": sid}})
                for sid in sids
            )
        )

    asyncio.run(go())
    _check_isolated(plugin, sids)


# ---------------------------------------------------------------------------------------------------
# Failures: the agent's own, and the plugin's
# ---------------------------------------------------------------------------------------------------
def test_handled_tool_error_is_recorded_and_the_agent_goes_on(plugin: MetaClawPlugin) -> None:
    m = model(call("read_file", {"path": "missing.ini"}, "r1"), "That file does not exist.")
    agent = create_agent(m, FakeFiles().tools(), middleware=[MetaClawMiddleware(plugin)])
    out = agent.invoke(user(), config={"metadata": {"session_id": "handled"}})
    assert out["messages"][-1].content == "That file does not exist."
    assert isinstance(out["messages"][2], ToolMessage) and out["messages"][2].status == "error"
    s = session(plugin, "handled")
    assert [tool_names(t) for t in s.turns] == [["read_file"], []]
    assert s.turns[1].messages[-1]["role"] == "tool" and "no such file" in s.turns[1].messages[-1]["content"]
    assert s.outcome["success"] is True
    (err,) = s.outcome["tool_errors"]
    assert err["tool"] == "read_file" and err["tool_call_id"] == "r1" and "no such file" in err["error"]


@pytest.mark.parametrize("how", ["invoke", "ainvoke"])
def test_tool_that_raises_fails_the_run_as_without_middleware(plugin: MetaClawPlugin, how: str) -> None:
    # Without the middleware the run raises too: the middleware must not change that, only record it.
    bare = create_agent(model(call("explode", {"reason": "boom"}, "x1"), "never"), [explode])
    with pytest.raises(RuntimeError, match="tool exploded"):
        run_agent(bare, user("go"), {}, how)

    agent = create_agent(
        model(call("explode", {"reason": "boom"}, "x1"), "never"), [explode], middleware=[MetaClawMiddleware(plugin)]
    )
    with pytest.raises(RuntimeError, match="tool exploded: boom"):
        run_agent(agent, user("go"), {"metadata": {"session_id": f"tool-raises-{how}"}}, how)
    s = session(plugin, f"tool-raises-{how}")
    assert [tool_names(t) for t in s.turns] == [["explode"]]
    assert s.ended_at is not None
    assert s.outcome["success"] is False and s.outcome["stage"] == "tool" and s.outcome["tool"] == "explode"
    assert "tool exploded: boom" in s.outcome["error"]
    assert s.outcome["tool_errors"][0]["tool_call_id"] == "x1"


@pytest.mark.parametrize("how", ["invoke", "ainvoke"])
def test_model_error_fails_the_run_and_is_recorded(plugin: MetaClawPlugin, how: str) -> None:
    m = model(call("read_file", {"path": "settings.ini"}, "r1"), ConnectionError("provider down"))
    agent = create_agent(m, FakeFiles().tools(), middleware=[MetaClawMiddleware(plugin)])
    with pytest.raises(ConnectionError, match="provider down"):
        run_agent(agent, user(), {"metadata": {"session_id": f"model-err-{how}"}}, how)
    s = session(plugin, f"model-err-{how}")
    assert len(s.turns) == 2
    assert s.turns[1].response is None and "ConnectionError: provider down" in s.turns[1].error
    assert roles(s.turns[1].messages)[-1] == "tool"  # the failed call's request was kept
    assert s.outcome == {**s.outcome, "success": False, "stage": "model", "status": "error"}


def test_broken_skill_bank_still_runs_and_records(plugin: MetaClawPlugin, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*a: Any, **k: Any) -> Any:
        raise OSError("skill store unreadable")

    monkeypatch.setattr(plugin.skills, "injection", broken)
    m = model(*edit_script())
    agent = create_agent(m, FakeFiles().tools(), system_prompt=SYSTEM_PROMPT, middleware=[MetaClawMiddleware(plugin)])
    out = agent.invoke(user(), config={"metadata": {"session_id": "broken-bank"}})
    assert out["messages"][-1].content.startswith("Done")
    assert m.system_texts() == [SYSTEM_PROMPT] * 3  # nothing injected, nothing lost
    s = session(plugin, "broken-bank")
    assert len(s.turns) == 3 and all(t.injected_skills == [] for t in s.turns)
    assert s.outcome["success"] is True
    assert plugin.status()["errors"]["inject"] == 3


def test_broken_trajectory_store_still_runs(plugin: MetaClawPlugin, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*a: Any, **k: Any) -> Any:
        raise OSError("disk full")

    monkeypatch.setattr(plugin.store, "append_turn", broken)
    monkeypatch.setattr(plugin.store, "end_session", broken)
    m = model(*edit_script())
    agent = create_agent(m, FakeFiles().tools(), system_prompt=SYSTEM_PROMPT, middleware=[MetaClawMiddleware(plugin)])
    out = agent.invoke(user(), config={"metadata": {"session_id": "broken-store"}})
    assert out["messages"][-1].content.startswith("Done")
    assert BLOCK_OPEN in m.system_texts()[0]
    errors = plugin.status()["errors"]
    assert errors["langchain.model_response"] == 3 and errors["on_session_end"] == 1


@pytest.mark.parametrize("how", ["invoke", "astream"])
def test_every_plugin_hook_raising_never_breaks_the_agent(
    plugin: MetaClawPlugin, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """Even hooks that do not fail open themselves (a future core bug) cannot reach the agent."""

    def broken(*a: Any, **k: Any) -> Any:
        raise RuntimeError("plugin bug")

    for hook in ("prepare_turn", "complete_turn", "on_session_end", "start"):
        monkeypatch.setattr(plugin, hook, broken)
    m = model(*edit_script())
    agent = create_agent(
        m,
        FakeFiles().tools(),
        system_prompt=SYSTEM_PROMPT,
        middleware=[MetaClawMiddleware(plugin)],
        checkpointer=InMemorySaver(),
    )
    state = run_agent(agent, user(), {"configurable": {"thread_id": f"all-broken-{how}"}}, how)
    assert state["messages"][-1].content.startswith("Done")
    assert m.system_texts() == [SYSTEM_PROMPT] * 3
    errors = hook_errors(plugin)
    assert errors["langchain.prepare_turn"] == 3 and errors["langchain.after_agent"] == 1
    assert "langchain.model_response" not in errors  # a turn that was never prepared is not completed


def test_unreadable_skills_dir_still_runs(tmp_path: Path) -> None:
    bad = tmp_path / "not-a-dir"
    bad.write_text("this is a file, not a skills folder")
    plugin = MetaClawPlugin(make_settings(tmp_path / "home", skills_dir=bad))
    m = model(*edit_script())
    agent = create_agent(m, FakeFiles().tools(), system_prompt=SYSTEM_PROMPT, middleware=[MetaClawMiddleware(plugin)])
    out = agent.invoke(user(), config={"metadata": {"session_id": "bad-dir"}})
    assert out["messages"][-1].content.startswith("Done")
    assert m.system_texts() == [SYSTEM_PROMPT] * 3
    errors = plugin.status()["errors"]  # every failure is counted, none reached the agent
    assert errors["langchain.before_agent"] == 1 and errors["langchain.prepare_turn"] == 3
    assert errors["on_session_end"] == 1
    plugin.stop()


def test_plugin_that_cannot_start_is_a_pass_through(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "config.yaml"
    cfg.write_text("no_such_key: 1\n")
    monkeypatch.setenv("METACLAW_CONFIG", str(cfg))
    monkeypatch.setenv("METACLAW_HOME", str(tmp_path / "home"))
    mw = MetaClawMiddleware()
    m = model(*edit_script())
    agent = create_agent(m, FakeFiles().tools(), system_prompt=SYSTEM_PROMPT, middleware=[mw])
    out = agent.invoke(user())
    assert out["messages"][-1].content.startswith("Done")
    assert m.system_texts() == [SYSTEM_PROMPT] * 3 and mw.plugin is None


def test_no_arguments_uses_the_default_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("METACLAW_CONFIG", raising=False)
    monkeypatch.setenv("METACLAW_HOME", str(seed_skills(tmp_path / "default-home")))
    mw = MetaClawMiddleware()
    m = model(*edit_script())
    agent = create_agent(m, FakeFiles().tools(), system_prompt=SYSTEM_PROMPT, middleware=[mw])
    agent.invoke(user(), config={"configurable": {"thread_id": "dflt"}})
    plugin = mw.plugin
    assert plugin is not None and plugin.settings.home_dir == tmp_path / "default-home"
    assert BLOCK_OPEN in m.system_texts()[0]
    assert len(session(plugin, "dflt").turns) == 3
    assert MetaClawMiddleware().plugin is plugin  # one default plugin per process and config
    plugin.stop()


def test_nested_agent_does_not_end_the_parent_session(plugin: MetaClawPlugin) -> None:
    mw = MetaClawMiddleware(plugin)
    inner = create_agent(model("inner answer"), [], middleware=[mw])

    @tool
    def ask_helper(question: str) -> str:
        """Ask a helper agent."""
        return inner.invoke({"messages": [{"role": "user", "content": question}]})["messages"][-1].content

    outer = create_agent(
        model(call("ask_helper", {"question": "what?"}, "h1"), "outer answer"), [ask_helper], middleware=[mw]
    )
    ends: list[Any] = []
    plugin.events.subscribe(SessionEnd, ends.append)
    outer.invoke(user("delegate this"), config={"configurable": {"thread_id": "parent"}})
    s = session(plugin, "parent")
    # outer call 1, the helper's call, outer call 2: all in the parent's session, in order
    assert [t.response["content"] for t in s.turns] == ["", "inner answer", "outer answer"]
    assert [e.reason for e in ends] == ["after_agent"] and s.outcome["final_answer"] == "outer answer"


def test_policy_chat_model_without_a_base_model_says_why(plugin: MetaClawPlugin) -> None:
    # the answering model is covered in test_langchain_policy.py
    with pytest.raises(PolicyNotAvailableError, match=r"training\.base_model is not set"):
        policy_chat_model(plugin)
    with pytest.raises(PolicyNotAvailableError, match=r"training\.base_model is not set"):
        policy_chat_model()


def make_settings(home: Path, **kw: Any):
    from metaclaw_plugin import Settings

    return Settings(home=home, **kw)
