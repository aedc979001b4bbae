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

from metaclaw_langchain import MetaClawMiddleware, PolicyChatModel, policy_chat_model
from metaclaw_plugin import MetaClawPlugin, Settings
from metaclaw_plugin.store import Database
from metaclaw_plugin.training import tokens


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
