"""MetaClawCallbackHandler (capture only) and with_skills (LCEL injection), with real LangChain runs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import SystemMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda
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
)
from langgraph.checkpoint.memory import InMemorySaver

from metaclaw_langchain import MetaClawCallbackHandler, MetaClawMiddleware, with_skills
from metaclaw_plugin import MetaClawPlugin

SKILL = "backup-before-modify"


@pytest.fixture
def plugin(tmp_path: Path):
    p = make_plugin(tmp_path / "home")
    yield p
    p.stop()


def prompt() -> ChatPromptTemplate:
    return ChatPromptTemplate.from_messages([("system", SYSTEM_PROMPT), ("human", "{task}")])


def session(plugin: MetaClawPlugin, sid: str):
    assert plugin.flush(10)
    s = plugin.store.get_session(sid)
    assert s is not None, f"no session {sid!r}; have {plugin.store.list_sessions()}"
    return s


def tool_names(turn: Any) -> list[str]:
    return [tc["function"]["name"] for tc in turn.tool_calls]


# ---------------------------------------------------------------------------------------------------
# The callback handler
# ---------------------------------------------------------------------------------------------------
def test_handler_cannot_inject_and_says_so() -> None:
    assert issubclass(MetaClawCallbackHandler, BaseCallbackHandler)
    assert "cannot inject" in (MetaClawCallbackHandler.__doc__ or "")
    assert "with_skills" in (MetaClawCallbackHandler.__doc__ or "")


@pytest.mark.parametrize("how", ["invoke", "ainvoke", "stream"])
def test_handler_on_an_lcel_chain(plugin: MetaClawPlugin, how: str) -> None:
    m = model("Copy settings.ini to settings.ini.bak first.")
    chain = prompt() | m | StrOutputParser()
    handler = MetaClawCallbackHandler(plugin)
    cfg = {"callbacks": [handler], "metadata": {"session_id": f"lcel-{how}"}}
    if how == "invoke":
        out = chain.invoke({"task": EDIT_TASK}, config=cfg)
    elif how == "ainvoke":
        out = asyncio.run(chain.ainvoke({"task": EDIT_TASK}, config=cfg))
    else:
        out = "".join(chain.stream({"task": EDIT_TASK}, config=cfg))
    assert out == "Copy settings.ini to settings.ini.bak first."
    assert m.system_texts() == [SYSTEM_PROMPT]  # capture only: nothing injected
    s = session(plugin, f"lcel-{how}")
    (turn,) = s.turns
    assert turn.messages == [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": EDIT_TASK}]
    assert turn.response["role"] == "assistant" and turn.response["content"] == out
    assert turn.host == "langchain" and turn.model and turn.error is None
    assert s.ended_at is not None
    assert s.outcome["success"] is True and s.outcome["final_answer"] == out and s.outcome["model_calls"] == 1
    assert hook_errors(plugin) == {}
    assert not handler._roots and not handler._root_of and not handler._models  # nothing left behind


def test_handler_without_a_session_id_uses_the_root_run(plugin: MetaClawPlugin) -> None:
    handler = MetaClawCallbackHandler(plugin)
    chain = prompt() | model("a", "b") | StrOutputParser()
    chain.invoke({"task": "one"}, config={"callbacks": [handler]})
    chain.invoke({"task": "two"}, config={"callbacks": [handler]})
    assert plugin.flush(10)
    sessions = plugin.store.list_sessions()
    assert len(sessions) == 2 and all(s["session_id"].startswith("lc-") and s["turns"] == 1 for s in sessions)


def test_handler_on_the_agent(plugin: MetaClawPlugin) -> None:
    handler = MetaClawCallbackHandler(plugin)
    m = model(*edit_script())
    agent = create_agent(m, FakeFiles().tools(), system_prompt=SYSTEM_PROMPT, checkpointer=InMemorySaver())
    out = agent.invoke(
        {"messages": [{"role": "user", "content": EDIT_TASK}]},
        config={"callbacks": [handler], "configurable": {"thread_id": "cb-agent"}},
    )
    assert out["messages"][-1].content.startswith("Done")
    s = session(plugin, "cb-agent")  # LangGraph puts thread_id in the callbacks' metadata
    assert [tool_names(t) for t in s.turns] == [["read_file"], ["write_file"], []]
    assert roles(s.turns[2].messages) == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert s.turns[2].messages[3]["tool_call_id"] == "read"
    assert s.outcome["success"] is True and s.outcome["final_answer"].startswith("Done")
    assert (s.outcome["model_calls"], s.outcome["tool_calls"]) == (3, 2)


def test_handler_on_the_agent_async_with_a_failing_tool(plugin: MetaClawPlugin) -> None:
    handler = MetaClawCallbackHandler(plugin)
    m = model(call("read_file", {"path": "nope.ini"}, "r1"), call("explode", {"reason": "bad"}, "x1"), "never")
    agent = create_agent(m, [*FakeFiles().tools(), explode])

    async def go() -> None:
        await agent.ainvoke(
            {"messages": [{"role": "user", "content": "go"}]},
            config={"callbacks": [handler], "metadata": {"session_id": "cb-fail"}},
        )

    with pytest.raises(RuntimeError, match="tool exploded"):
        asyncio.run(go())
    s = session(plugin, "cb-fail")
    assert [tool_names(t) for t in s.turns] == [["read_file"], ["explode"]]
    assert s.outcome["success"] is False and "tool exploded: bad" in s.outcome["error"]
    errs = s.outcome["tool_errors"]
    assert [e["tool"] for e in errs] == ["read_file", "explode"] and "no such file" in errs[0]["error"]


def test_handler_records_a_model_error(plugin: MetaClawPlugin) -> None:
    handler = MetaClawCallbackHandler(plugin)
    chain = prompt() | model(TimeoutError("slow provider"))
    with pytest.raises(TimeoutError):
        chain.invoke({"task": "x"}, config={"callbacks": [handler], "metadata": {"session_id": "cb-model-err"}})
    s = session(plugin, "cb-model-err")
    assert s.turns[0].response is None and "TimeoutError: slow provider" in s.turns[0].error
    assert s.outcome["success"] is False


def test_handler_with_a_bare_model_call(plugin: MetaClawPlugin) -> None:
    handler = MetaClawCallbackHandler(plugin, session_id="bare")
    model("hi").invoke("hello", config={"callbacks": [handler]})
    s = session(plugin, "bare")
    assert s.turns[0].messages == [{"role": "user", "content": "hello"}] and s.outcome["final_answer"] == "hi"


def test_handler_concurrent_chains_never_mix(plugin: MetaClawPlugin) -> None:
    handler = MetaClawCallbackHandler(plugin)  # one handler shared by every run
    sids = [f"c{i}" for i in range(8)]

    async def one(sid: str) -> None:
        chain = prompt() | model(f"answer {sid}", delay=0.01) | StrOutputParser()
        await chain.ainvoke({"task": f"task {sid}"}, config={"callbacks": [handler], "metadata": {"session_id": sid}})

    async def go() -> None:
        await asyncio.gather(*(one(sid) for sid in sids))

    asyncio.run(go())
    assert plugin.flush(10)
    for sid in sids:
        (turn,) = plugin.store.get_session(sid).turns
        assert turn.messages[-1] == {"role": "user", "content": f"task {sid}"}
        assert turn.response["content"] == f"answer {sid}"


def test_handler_with_a_broken_plugin_never_breaks_the_chain(
    plugin: MetaClawPlugin, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*a: Any, **k: Any) -> Any:
        raise OSError("disk full")

    monkeypatch.setattr(plugin.store, "append_turn", broken)
    monkeypatch.setattr(plugin.store, "end_session", broken)
    monkeypatch.setattr(plugin, "prepare_turn", broken)  # even a core call that does not fail open
    handler = MetaClawCallbackHandler(plugin)
    chain = prompt() | model("fine") | StrOutputParser()
    assert chain.invoke({"task": "x"}, config={"callbacks": [handler]}) == "fine"
    errors = plugin.status()["errors"]
    assert errors["langchain.on_chat_model_start"] == 1 and errors["on_session_end"] == 1


# ---------------------------------------------------------------------------------------------------
# with_skills
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("how", ["invoke", "ainvoke", "stream", "astream"])
def test_with_skills_injects_in_an_lcel_chain(plugin: MetaClawPlugin, how: str) -> None:
    m = model("I will back up settings.ini first.")
    chain = prompt() | with_skills(m, plugin) | StrOutputParser()
    cfg = {"metadata": {"session_id": f"ws-{how}"}}
    if how == "invoke":
        out = chain.invoke({"task": EDIT_TASK}, config=cfg)
    elif how == "ainvoke":
        out = asyncio.run(chain.ainvoke({"task": EDIT_TASK}, config=cfg))
    elif how == "stream":
        out = "".join(chain.stream({"task": EDIT_TASK}, config=cfg))
    else:

        async def go() -> str:
            return "".join([c async for c in chain.astream({"task": EDIT_TASK}, config=cfg)])

        out = asyncio.run(go())
    assert out == "I will back up settings.ini first."
    (system,) = m.system_texts()
    assert system.startswith(SYSTEM_PROMPT) and BLOCK_OPEN in system and f"### {SKILL}" in system
    s = session(plugin, f"ws-{how}")
    (turn,) = s.turns
    assert SKILL in turn.injected_skills and BLOCK_OPEN in turn.messages[0]["content"]
    assert turn.response == {"role": "assistant", "content": out}
    assert s.ended_at is None  # a named session is the caller's to end (or the idle timeout's)


def test_with_skills_and_the_handler_record_each_call_once(plugin: MetaClawPlugin) -> None:
    m = model("ok")
    handler = MetaClawCallbackHandler(plugin)
    chain = prompt() | with_skills(m, plugin) | StrOutputParser()
    chain.invoke({"task": EDIT_TASK}, config={"callbacks": [handler], "metadata": {"session_id": "both"}})
    s = session(plugin, "both")
    assert len(s.turns) == 1 and s.turns[0].injected_skills  # recorded by with_skills, skipped by the handler
    assert s.outcome["final_answer"] == "ok"  # the handler still ends the chain's session


def test_with_skills_without_a_session_is_a_one_turn_session(plugin: MetaClawPlugin) -> None:
    wrapped = with_skills(model("hi"), plugin)
    msg = wrapped.invoke([SystemMessage(content="Be brief."), ("human", "edit the config file settings.ini")])
    assert msg.content == "hi"
    assert plugin.flush(10)
    (s,) = plugin.store.list_sessions()
    assert s["session_id"].startswith("lc-") and s["ended_at"] and s["outcome"]["success"] is True


def test_with_skills_bind_tools_keeps_injecting(plugin: MetaClawPlugin) -> None:
    m = model(call("read_file", {"path": "settings.ini"}, "r1"))
    bound = with_skills(m, plugin).bind_tools(FakeFiles().tools())
    msg = bound.invoke(EDIT_TASK, config={"configurable": {"thread_id": "bt"}})
    assert msg.tool_calls[0]["name"] == "read_file"
    assert BLOCK_OPEN in m.system_texts()[0]
    (turn,) = session(plugin, "bt").turns
    assert tool_names(turn) == ["read_file"] and json.loads(turn.tool_calls[0]["function"]["arguments"]) == {
        "path": "settings.ini"
    }


def test_with_skills_fails_open(plugin: MetaClawPlugin, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*a: Any, **k: Any) -> Any:
        raise OSError("skill store unreadable")

    monkeypatch.setattr(plugin.skills, "injection", broken)
    m = model("still fine")
    chain = prompt() | with_skills(m, plugin) | StrOutputParser()
    assert chain.invoke({"task": EDIT_TASK}, config={"metadata": {"session_id": "ws-broken"}}) == "still fine"
    assert m.system_texts() == [SYSTEM_PROMPT]
    assert len(session(plugin, "ws-broken").turns) == 1
    assert plugin.status()["errors"]["inject"] == 1


def test_with_skills_passes_model_errors_through(plugin: MetaClawPlugin) -> None:
    chain = prompt() | with_skills(model(ValueError("bad request")), plugin)
    with pytest.raises(ValueError, match="bad request"):
        chain.invoke({"task": "x"}, config={"metadata": {"session_id": "ws-err"}})
    (turn,) = session(plugin, "ws-err").turns
    assert turn.response is None and "ValueError: bad request" in turn.error


def test_middleware_and_lambda_chain_together(plugin: MetaClawPlugin) -> None:
    """An agent inside an LCEL chain: the middleware injects and records, under the chain's session id."""
    m = model(*edit_script())
    agent = create_agent(m, FakeFiles().tools(), system_prompt=SYSTEM_PROMPT, middleware=[MetaClawMiddleware(plugin)])
    chain = RunnableLambda(lambda task: {"messages": [{"role": "user", "content": task}]}) | agent
    chain.invoke(EDIT_TASK, config={"metadata": {"session_id": "chain-agent"}})
    s = session(plugin, "chain-agent")
    assert len(s.turns) == 3 and s.outcome["success"] is True and BLOCK_OPEN in m.system_texts()[0]


def test_with_skills_batch(plugin: MetaClawPlugin) -> None:
    m = model("one", "two")
    outs = with_skills(m, plugin).batch([EDIT_TASK, EDIT_TASK], config={"max_concurrency": 1})
    assert sorted(o.content for o in outs) == ["one", "two"]
    assert all(BLOCK_OPEN in s for s in m.system_texts())
    assert plugin.flush(10) and len(plugin.store.list_sessions()) == 2
