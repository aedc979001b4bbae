"""``metaclaw/<name>`` as a LiteLLM custom provider (metaclaw_litellm/policy.py): real litellm calls (completion,
streaming, acompletion, astreaming, tool calls), the default handler built from the config, and a real LiteLLM
proxy process that serves ``metaclaw/policy`` with the metaclaw callback capturing its turns."""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import litellm
import pytest
import yaml
from litellm_support import journal_turns
from policy_support import TOOL_TEXT, WEATHER_TOOL, force_output, make_adapter
from transformers import AutoTokenizer

import metaclaw_plugin
from metaclaw_litellm import MetaClawCallback
from metaclaw_litellm.policy import MetaClawPolicyLLM, register
from metaclaw_plugin import Settings
from metaclaw_plugin.devtools.proxyrun import ModelSpec, proxy_config, start_proxy, write_config
from metaclaw_plugin.serving import ServedPolicy
from metaclaw_plugin.store import Database
from metaclaw_plugin.store.trajectories import TrajectoryStore
from metaclaw_plugin.training import tokens
from metaclaw_plugin.training.samples import build_sample
from metaclaw_plugin.training.weights import store_latest
from metaclaw_plugin.types import Sample

MSGS = [{"role": "user", "content": "Summarise the meeting notes"}]


@pytest.fixture()
def provider_map():
    saved = list(litellm.custom_provider_map)
    yield
    litellm.custom_provider_map = saved


@pytest.fixture()
def policy(policy_base: Path, tmp_path: Path, provider_map):
    p = ServedPolicy(str(policy_base), db=Database(tmp_path / "m.db"), max_new_tokens=10, poll_interval=None)
    p.wait_ready(60)
    register(MetaClawPolicyLLM(p))
    yield p
    p.close()


def test_completion_and_streaming(policy: ServedPolicy) -> None:
    r = litellm.completion(model="metaclaw/policy", messages=MSGS, seed=3)
    g = policy.generate(MSGS, seed=3)
    assert r.choices[0].message.content == g.content and r.usage.completion_tokens == len(g.response_ids)
    assert r._hidden_params["metaclaw"] == {"weights": "base", "step": None}
    chunks = list(litellm.completion(model="metaclaw/policy", messages=MSGS, seed=3, stream=True))
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == g.content
    assert chunks[-1].choices[0].finish_reason == g.finish_reason
    rec = tokens.lookup(policy.db, tokens.response_key(g.content))
    assert rec is not None and rec.response_ids == g.response_ids


def test_async_and_tool_calls(policy: ServedPolicy) -> None:
    force_output(policy, TOOL_TEXT)

    async def main():
        r = await litellm.acompletion(model="metaclaw/policy", messages=MSGS, tools=[WEATHER_TOOL], max_tokens=200)
        s = await litellm.acompletion(
            model="metaclaw/policy", messages=MSGS, tools=[WEATHER_TOOL], max_tokens=200, stream=True
        )
        return r, [c async for c in s]

    r, chunks = asyncio.run(main())
    msg = r.choices[0].message
    assert r.choices[0].finish_reason == "tool_calls" and msg.content == "Let me check."
    assert [(c.function.name, json.loads(c.function.arguments)) for c in msg.tool_calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    calls = [tc for c in chunks for tc in (c.choices[0].delta.tool_calls or [])]
    assert [(tc.function.name, tc.function.arguments) for tc in calls] == [("get_weather", '{"city": "Paris"}')]
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
    s = litellm.completion(model="metaclaw/policy", messages=MSGS, tools=[WEATHER_TOOL], max_tokens=200, stream=True)
    assert [tc.function.name for c in s for tc in (c.choices[0].delta.tool_calls or [])] == ["get_weather"]


def test_each_tenant_is_answered_with_its_own_weights(
    policy_base: Path, tmp_path: Path, home: Path, provider_map
) -> None:
    """``training.scope: tenant``: the provider answers with the weights of the tenant the metaclaw callback derives
    for the request: an SDK call's ``metadata.tenant`` (completion, acompletion, streams), a proxy request's key
    (the proxy's pre-call hook, then the call under the same call id, as the proxy runs them)."""
    db = Database(tmp_path / "m.db")
    alpha = replace(make_adapter(policy_base, tmp_path / "alpha", seed=1, step=1), tenant="alpha")
    blue = replace(make_adapter(policy_base, tmp_path / "blue", seed=2, step=2), tenant="team:blue")
    for ref in (alpha, blue):
        store_latest(db, ref)
    p = ServedPolicy(str(policy_base), db=db, max_new_tokens=4, poll_interval=None, scope="tenant")
    p.wait_ready(60)
    register(MetaClawPolicyLLM(p))
    # the callback's hooks inject skills into async calls: short enough for the tiny model's context
    cb = MetaClawCallback(settings=Settings(home=home, injection={"max_injected_tokens": 120, "convention_tokens": 0}))
    saved, litellm.callbacks = litellm.callbacks, [cb]

    def weights(**kw: Any) -> str:
        return str(
            litellm.completion(model="metaclaw/policy", messages=MSGS, seed=1, **kw)._hidden_params["metaclaw"][
                "weights"
            ]
        )

    def streamed(chunks: list[Any]) -> str | None:
        rec = tokens.lookup(db, tokens.response_key("".join(c.choices[0].delta.content or "" for c in chunks)))
        return rec.weights if rec is not None else None

    async def sdk_async() -> tuple[str, str | None]:
        r = await litellm.acompletion(model="metaclaw/policy", messages=MSGS, metadata={"tenant": "alpha"}, seed=1)
        s = await litellm.acompletion(
            model="metaclaw/policy", messages=MSGS, metadata={"tenant": "alpha"}, seed=2, stream=True
        )
        return r._hidden_params["metaclaw"]["weights"], streamed([c async for c in s])

    async def through_the_proxy_hook(key: dict[str, Any]) -> str:
        data = {"model": "metaclaw/policy", "messages": MSGS, "seed": 1, "litellm_call_id": uuid.uuid4().hex}
        data = await cb.async_pre_call_hook(key, None, data, "acompletion")
        return str((await litellm.acompletion(**data))._hidden_params["metaclaw"]["weights"])

    try:
        assert weights(metadata={"tenant": "alpha"}) == alpha.path
        assert weights(metadata={"tenant": "beta"}) == "base"  # none of its own: the base model
        assert weights() == "base"  # the callback's tenant (the default), which has none
        chunks = list(
            litellm.completion(
                model="metaclaw/policy", messages=MSGS, metadata={"tenant": "alpha"}, seed=3, stream=True
            )
        )
        assert streamed(chunks) == alpha.path
        assert asyncio.run(sdk_async()) == (alpha.path, alpha.path)
        assert asyncio.run(through_the_proxy_hook({"team_id": "blue"})) == blue.path
        assert asyncio.run(through_the_proxy_hook({"team_id": "green"})) == "base"
    finally:
        litellm.callbacks = saved
        p.close()


def test_wrong_name_and_bad_input_are_clear_errors(policy: ServedPolicy) -> None:
    with pytest.raises(litellm.ServiceUnavailableError, match="this handler serves metaclaw/policy"):
        litellm.completion(model="metaclaw/other", messages=MSGS)
    with pytest.raises(litellm.BadRequestError, match="context"):
        litellm.completion(model="metaclaw/policy", messages=[{"role": "user", "content": "x " * 3000}])


def test_default_handler_serves_the_configured_policy(home: Path, policy_base: Path, provider_map) -> None:
    (home / "config.yaml").write_text(
        yaml.safe_dump({"training": {"base_model": str(policy_base)}, "serving": {"name": "tiny"}})
    )
    register()
    try:
        r = litellm.completion(model="metaclaw/tiny", messages=MSGS, max_tokens=4, seed=1)
        assert r.usage.completion_tokens >= 1
        assert metaclaw_plugin.served_policy().counters["requests"] == 1
    finally:
        metaclaw_plugin.served_policy().close()


@pytest.mark.slow
def test_a_real_litellm_proxy_serves_metaclaw_policy(tmp_path: Path, home: Path, policy_base: Path) -> None:
    (home / "config.yaml").write_text(
        yaml.safe_dump(
            {
                "mode": "rl",
                "training": {"base_model": str(policy_base)},
                "serving": {"max_new_tokens": 8},
                # the tiny model's context is 1024 of its tokens: keep the injected skills short
                "injection": {"max_injected_tokens": 120, "convention_tokens": 0},
            }
        )
    )
    cfg = proxy_config(
        [ModelSpec("metaclaw/policy")],
        litellm_settings={
            "custom_provider_map": [{"provider": "metaclaw", "custom_handler": "metaclaw_litellm.policy.handler"}]
        },
    )
    path = write_config(tmp_path / "proxy" / "config.yaml", cfg)
    env = {**os.environ, "METACLAW_HOME": str(home)}
    with start_proxy(path, env=env, log_path=tmp_path / "proxy.log", timeout=240) as proxy:
        h = proxy.headers(**{"X-Session-Id": "rl-1"})
        body = {"model": "metaclaw/policy", "messages": MSGS, "seed": 5, "tools": [WEATHER_TOOL]}
        r = httpx.post(proxy.url + "/chat/completions", json=body, headers=h, timeout=120)
        assert r.status_code == 200, (r.text, proxy.log_tail())
        text = r.json()["choices"][0]["message"]["content"]
        s = httpx.post(proxy.url + "/chat/completions", json={**body, "stream": True}, headers=h, timeout=120)
        assert s.status_code == 200
        streamed = "".join(
            (json.loads(line[6:])["choices"] or [{}])[0].get("delta", {}).get("content") or ""
            for line in s.text.splitlines()
            if line.startswith("data: {")
        )
        assert streamed == text  # same seed, same weights
        # the policy recorded its tokens, and the metaclaw callback captured the turns with that answer
        rec = tokens.lookup(Database(home / "metaclaw.db"), tokens.response_key(text))
        assert rec is not None and rec.model == "metaclaw/policy" and rec.weights == "base"
        turns = [t for t in journal_turns(home).values() if t.get("session_id") == "rl-1"]
        assert len(turns) == 2, proxy.log_tail()
    # the callback captured the request's tools with each turn: the trainer's sample of the JSON answer has the
    # prompt the policy sampled from (tools rendered) and its logprobs
    store = TrajectoryStore(home / "metaclaw.db")
    store.open()  # replays the proxy's journal
    store.flush()
    turn = next(t for t in store.get_session("rl-1").turns if t.response and t.response.get("content") == text)
    store.close()
    assert turn.tools == [WEATHER_TOOL]
    # the JSON and the streamed answer share a text (and a key): read the record once the proxy's writes are all done
    rec = tokens.lookup(Database(home / "metaclaw.db"), tokens.response_key(text))
    assert rec is not None
    tok = AutoTokenizer.from_pretrained(policy_base)
    sample = build_sample(turn, Sample(turn.turn_id, "rl-1", "default", 0, 1.0), tok, Database(home / "metaclaw.db"))
    assert sample.logprobs is not None and sample.logprobs == rec.logprobs and sample.prompt_ids == rec.prompt_ids
    assert "<tools>" in tok.decode(sample.prompt_ids)


def test_metaclaw_plugin_proxy_declares_the_provider_for_metaclaw_models(home: Path) -> None:
    from click.testing import CliRunner

    from metaclaw_plugin.cli import main

    r = CliRunner().invoke(main, ["proxy", "--model", "metaclaw/policy", "--model", "gpt=openai/gpt-4o", "--dry-run"])
    assert r.exit_code == 0, r.output
    cfg = yaml.safe_load((home / "litellm-proxy.yaml").read_text())
    assert cfg["litellm_settings"]["custom_provider_map"] == [
        {"provider": "metaclaw", "custom_handler": "metaclaw_litellm.policy.handler"}
    ]
    assert {m["model_name"]: m["litellm_params"]["model"] for m in cfg["model_list"]} == {
        "metaclaw/policy": "metaclaw/policy",
        "gpt": "openai/gpt-4o",
    }
    r = CliRunner().invoke(main, ["proxy", "--model", "openai/gpt-4o", "--dry-run"])
    assert "custom_provider_map" not in yaml.safe_load((home / "litellm-proxy.yaml").read_text()).get(
        "litellm_settings", {}
    )
