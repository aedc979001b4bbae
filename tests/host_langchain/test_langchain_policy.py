"""``policy_chat_model()`` (metaclaw_langchain/policy.py): a LangChain chat model answered by the served policy,
in a real ``create_agent`` loop with ``MetaClawMiddleware``; the captured turn finds the policy's token record."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from policy_support import TOOL_TEXT, force_output
from transformers import AutoTokenizer

from metaclaw_langchain import (
    MetaClawCallbackHandler,
    MetaClawMiddleware,
    PolicyChatModel,
    policy_chat_model,
    with_skills,
)
from metaclaw_plugin import MetaClawPlugin, Settings
from metaclaw_plugin.store import Database
from metaclaw_plugin.training import tokens
from metaclaw_plugin.training.samples import build_sample
from metaclaw_plugin.types import Sample


@pytest.fixture()
def rl_plugin(home: Path, policy_base: Path):
    s = Settings(
        home=home,
        mode="rl",
        training={"base_model": str(policy_base)},
        serving={"max_new_tokens": 10, "poll_interval": 0.5},
        injection={"max_injected_tokens": 120, "convention_tokens": 0},  # the tiny model's context is short
    )
    p = MetaClawPlugin(s).start()
    yield p
    p.stop()


@pytest.fixture()
def chat(rl_plugin: MetaClawPlugin):
    m = policy_chat_model(rl_plugin, seed=2)
    yield m
    m.policy.close()


def test_invoke_stream_and_ainvoke_answer_from_the_policy(chat: PolicyChatModel, rl_plugin: MetaClawPlugin) -> None:
    assert isinstance(chat, PolicyChatModel) and chat.policy.model_name == "metaclaw/policy"
    msg = chat.invoke([HumanMessage("Write the release notes")])
    assert msg.response_metadata["metaclaw_weights"] == "base" and msg.usage_metadata["output_tokens"] > 0
    streamed = "".join(c.content for c in chat.stream([HumanMessage("Write the release notes")]))
    assert streamed == msg.content  # same seed, same weights
    again = asyncio.run(chat.ainvoke([HumanMessage("Write the release notes")]))
    assert again.content == msg.content
    rec = tokens.lookup(Database(rl_plugin.settings.db_file), tokens.response_key(msg.content))
    assert rec is not None and rec.model == "metaclaw/policy"


def test_bound_tools_come_back_as_tool_calls(chat: PolicyChatModel) -> None:
    @tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return "sunny"

    force_output(chat.policy, TOOL_TEXT)
    msg = chat.bind_tools([get_weather], max_tokens=200).invoke([HumanMessage("Weather in Paris?")])
    assert msg.content == "Let me check."
    assert [(c["name"], c["args"]) for c in msg.tool_calls] == [("get_weather", {"city": "Paris"})]


def test_in_an_agent_the_captured_turn_finds_the_policy_tokens(
    chat: PolicyChatModel, rl_plugin: MetaClawPlugin
) -> None:
    agent = create_agent(chat, [], middleware=[MetaClawMiddleware(rl_plugin)])
    out = agent.invoke(
        {"messages": [{"role": "user", "content": "Plan the deploy"}]}, {"configurable": {"thread_id": "t1"}}
    )
    answer = out["messages"][-1].content
    assert rl_plugin.flush(10)
    s = rl_plugin.store.get_session("t1")
    assert s is not None and [t.response["content"] for t in s.turns] == [answer]
    rec = tokens.lookup(Database(rl_plugin.settings.db_file), tokens.response_key(s.turns[0].response["content"]))
    assert rec is not None and rec.weights == "base"


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return "sunny"


def _trains_with_the_policy_logprobs(plugin: MetaClawPlugin, thread: str) -> None:
    """The thread's turn was captured with the bound tools, and its sample has the prompt the policy sampled from
    (tools rendered) and the policy's logprobs."""
    assert plugin.flush(10)
    (turn,) = plugin.store.get_session(thread).turns
    assert turn.tools is not None and [t["function"]["name"] for t in turn.tools] == ["get_weather"]
    db = Database(plugin.settings.db_file)
    tok = AutoTokenizer.from_pretrained(plugin.settings.training.base_model)
    sample = build_sample(turn, Sample(turn.turn_id, thread, "default", 0, 1.0), tok, db)
    rec = tokens.lookup(db, tokens.response_key(turn.response.get("content"), turn.response.get("tool_calls")))
    assert rec is not None and sample.logprobs is not None and sample.logprobs == rec.logprobs
    assert sample.prompt_ids == rec.prompt_ids and '"name": "get_weather"' in tok.decode(sample.prompt_ids)


def test_an_agents_tools_are_captured_and_its_answer_trains_with_the_policy_logprobs(
    chat: PolicyChatModel, rl_plugin: MetaClawPlugin
) -> None:
    """The agent binds its tools to the policy model; the middleware captures them with the turn."""
    agent = create_agent(chat, [get_weather], middleware=[MetaClawMiddleware(rl_plugin)])
    agent.invoke({"messages": [{"role": "user", "content": "Plan the deploy"}]}, {"configurable": {"thread_id": "t2"}})
    _trains_with_the_policy_logprobs(rl_plugin, "t2")


@pytest.mark.parametrize("how", ["handler", "with_skills"])
def test_bound_tools_are_captured_by_the_handler_and_with_skills(
    chat: PolicyChatModel, rl_plugin: MetaClawPlugin, how: str
) -> None:
    """``bind_tools`` on the policy model: the callback handler (from the call's parameters) and ``with_skills``
    (from the binding) capture the tools with the turn."""
    config = {"metadata": {"session_id": how}, "configurable": {"thread_id": how}}
    if how == "handler":
        chat.bind_tools([get_weather]).invoke(
            "Plan the deploy", {**config, "callbacks": [MetaClawCallbackHandler(rl_plugin)]}
        )
    else:
        with_skills(chat, rl_plugin).bind_tools([get_weather]).invoke("Plan the deploy", config)
    _trains_with_the_policy_logprobs(rl_plugin, how)
