"""The route translations (metaclaw_litellm/routes.py) on their own: Anthropic Messages and OpenAI Responses
requests to neutral messages, the block into each route's system field, and replies (JSON and SSE, text and tool
calls) with usage. The wire forms come from the scripted upstream (devtools/wire.py), the same bytes the proxy
tests stream."""

from __future__ import annotations

import json

import pytest

from metaclaw_litellm.routes import (
    BY_CALL_TYPE,
    MESSAGES,
    RESPONSES,
    anthropic_inject,
    anthropic_messages,
    anthropic_stream_reply,
    any_reply,
    responses_inject,
    responses_messages,
)
from metaclaw_plugin.devtools.wire import render_messages, render_responses
from metaclaw_plugin.skillbank.render import OPEN

TOOL_REPLY = {"content": "Let me look.", "tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]}


def test_anthropic_request_becomes_neutral_messages_with_tool_calls_and_results():
    req = {
        "system": [{"type": "text", "text": "Be terse."}, {"type": "text", "text": "Use tools."}],
        "messages": [
            {"role": "user", "content": "read a.txt"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Reading."},
                    {"type": "tool_use", "id": "tu1", "name": "read_file", "input": {"path": "a.txt"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "tu1", "content": [{"type": "text", "text": "hello"}]},
                    {"type": "text", "text": "now summarise"},
                ],
            },
        ],
    }
    out = anthropic_messages(req)
    assert out[0] == {"role": "system", "content": "Be terse.\nUse tools."}
    assert out[1] == {"role": "user", "content": "read a.txt"}
    assert out[2]["content"] == "Reading." and out[2]["tool_calls"][0]["function"] == {
        "name": "read_file",
        "arguments": '{"path": "a.txt"}',
    }
    assert out[3] == {"role": "tool", "tool_call_id": "tu1", "content": "hello"}
    assert out[4] == {"role": "user", "content": "now summarise"}


def test_responses_request_becomes_neutral_messages():
    req = {
        "instructions": "Be terse.",
        "input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "env: linux"}]},
            {"role": "user", "content": "read a.txt"},
            {"type": "reasoning", "summary": []},
            {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": '{"cmd":"cat a.txt"}'},
            {"type": "function_call_output", "call_id": "c1", "output": "hello"},
        ],
    }
    out = responses_messages(req)
    assert [m["role"] for m in out] == ["system", "developer", "user", "assistant", "tool"]
    assert out[3]["tool_calls"][0]["id"] == "c1" and out[4] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "hello",
    }
    assert responses_messages({"input": "just text"}) == [{"role": "user", "content": "just text"}]


@pytest.mark.parametrize(
    "system, expected",
    [
        (None, "BLOCK"),
        ("", "BLOCK"),
        ("Be terse.", "Be terse.\n\nBLOCK"),
        (
            [{"type": "text", "text": "Be terse.", "cache_control": {"type": "ephemeral"}}],
            [
                {"type": "text", "text": "Be terse.", "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": "BLOCK"},
            ],
        ),
    ],
)
def test_the_block_goes_into_anthropic_system_of_any_shape(system, expected):
    req = {"messages": []} if system is None else {"system": system, "messages": []}
    anthropic_inject(req, "BLOCK")
    assert req["system"] == expected


def test_the_block_goes_into_responses_instructions():
    req: dict = {"input": "hi"}
    responses_inject(req, "BLOCK")
    assert req["instructions"] == "BLOCK"
    req = {"input": "hi", "instructions": "Be terse."}
    responses_inject(req, "BLOCK")
    assert req["instructions"] == "Be terse.\n\nBLOCK"
    assert RESPONSES.injected({"instructions": f"x {OPEN} y"}) and not RESPONSES.injected({"instructions": "x"})
    assert MESSAGES.injected({"system": [{"type": "text", "text": OPEN}]})


@pytest.mark.parametrize("reply", ["plain answer", TOOL_REPLY], ids=["text", "tool"])
def test_replies_of_both_routes_json_and_stream(reply):
    body = {"model": "m", "system": "s", "messages": [{"role": "user", "content": "hi"}], "input": "hi"}
    expected_text = reply if isinstance(reply, str) else reply["content"]
    reply_dict = {"content": reply} if isinstance(reply, str) else reply
    _, raw = render_messages(body, reply_dict, "m")
    msg, usage = any_reply(json.loads(raw))
    _, events = render_messages({**body, "stream": True}, reply_dict, "m", chunks=5)
    smsg, susage = anthropic_stream_reply(events)
    _, rraw = render_responses(body, reply_dict, "m")
    rmsg, rusage = any_reply(json.loads(rraw))
    for m, u in ((msg, usage), (smsg, susage), (rmsg, rusage)):
        assert m["content"] == expected_text
        assert (
            u["prompt_tokens"] > 0
            and u["completion_tokens"] > 0
            and u["total_tokens"] == u["prompt_tokens"] + u["completion_tokens"]
        )
        if not isinstance(reply, str):
            assert m["tool_calls"][0]["function"]["name"] == "read_file"
            assert json.loads(m["tool_calls"][0]["function"]["arguments"]) == {"path": "a.txt"}


def test_a_stream_cut_before_message_stop_is_not_a_reply():
    _, events = render_messages({"stream": True, "messages": []}, {"content": "abc"}, "m")
    assert anthropic_stream_reply(events[:-1]) is None


def test_anthropic_cached_prompt_tokens_count_as_prompt_tokens():
    resp = {
        "type": "message",
        "content": [{"type": "text", "text": "x"}],
        "usage": {
            "input_tokens": 3,
            "output_tokens": 2,
            "cache_read_input_tokens": 100,
            "cache_creation_input_tokens": 7,
        },
    }
    assert any_reply(resp)[1] == {"prompt_tokens": 110, "completion_tokens": 2, "total_tokens": 112}


def test_every_llm_call_type_of_the_three_routes_is_mapped():
    assert {k: v.name for k, v in BY_CALL_TYPE.items()} == {
        "completion": "chat",
        "acompletion": "chat",
        "anthropic_messages": "messages",
        "responses": "responses",
        "aresponses": "responses",
    }


def test_a_route_that_is_not_hooked_is_said_once_per_model_and_counted(plugin, caplog):
    import asyncio
    import logging

    from metaclaw_litellm import MetaClawCallback

    cb = MetaClawCallback(plugin)
    data = {"model": "legacy-model", "prompt": "complete this"}
    with caplog.at_level(logging.WARNING, logger="metaclaw_litellm"):
        for _ in range(3):
            out = asyncio.run(cb.async_pre_call_hook(None, None, dict(data), "atext_completion"))
            assert out == data  # passed through unchanged
    said = [r.getMessage() for r in caplog.records if "not hooked" in r.getMessage()]
    assert len(said) == 1 and "legacy-model" in said[0] and "/v1/chat/completions" in said[0], said
    assert cb.status()["unhooked"] == {"/v1/completions (legacy text completion) [legacy-model]": 3}


def test_doctor_says_what_a_proxy_config_learns_and_what_is_not_hooked(home, tmp_path, monkeypatch):
    import yaml
    from click.testing import CliRunner

    from metaclaw_plugin.cli import main

    def doctor() -> dict:
        res = CliRunner().invoke(main, ["doctor", "--json"], catch_exceptions=False)
        return {c["check"]: c for c in json.loads(res.stdout)["checks"] if c["check"].startswith("proxy routes")}

    assert doctor() == {}  # no proxy config: nothing to say
    monkeypatch.setenv("LITELLM_MASTER_KEY", "sk-" + "0a1b2c3d4e5f" * 3)
    res = CliRunner().invoke(
        main, ["proxy", "--model", "claude-*=anthropic/claude-x", "--api-base", "http://127.0.0.1:9", "--dry-run"]
    )
    assert res.exit_code == 0, res.output
    row = doctor()["proxy routes (litellm-proxy.yaml)"]
    assert row["ok"] and "claude-* (anthropic/claude-x)" in row["detail"] and "/v1/messages" in row["detail"]

    own = tmp_path / "litellm.yaml"
    cfg = {
        "model_list": [{"model_name": "gpt", "litellm_params": {"model": "openai/gpt-x"}}],
        "litellm_settings": {"callbacks": ["metaclaw_litellm.callback"]},
        "general_settings": {"pass_through_endpoints": [{"path": "/vendor", "target": "http://127.0.0.1:9"}]},
    }
    own.write_text(yaml.safe_dump(cfg))
    monkeypatch.setenv("CONFIG_FILE_PATH", str(own))
    row = doctor()["proxy routes (litellm.yaml)"]
    assert not row["ok"] and "NOT hooked" in row["detail"] and "/vendor" in row["detail"]
    assert "/v1/responses" in row["detail"]

    cfg["litellm_settings"] = {}
    own.write_text(yaml.safe_dump(cfg))
    row = doctor()["proxy routes (litellm.yaml)"]
    assert not row["ok"] and "nothing learns" in row["detail"]
