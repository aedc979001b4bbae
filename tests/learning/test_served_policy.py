"""The served policy (serving/policy.py) on the tiny model with real PEFT adapters: logprobs that a forward pass
reproduces, token records, the atomic hot swap (requests in flight keep their weights), the watcher, and the
Hermes/Qwen tool-call format."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import torch
from policy_support import TOOL_TEXT, WEATHER_TOOL, force_output, make_adapter
from waiting import wait_for

from metaclaw_plugin.serving import PolicyInputError, ServedPolicy, parse_tool_calls
from metaclaw_plugin.serving.toolcalls import safe_prefix
from metaclaw_plugin.store import Database
from metaclaw_plugin.training import tokens
from metaclaw_plugin.training.weights import WeightsRef, store_latest

MSGS = [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": "Deploy the app"}]


@pytest.fixture()
def db(tmp_path: Path) -> Database:
    return Database(tmp_path / "metaclaw.db")


@pytest.fixture()
def policy(policy_base: Path, db: Database):
    p = ServedPolicy(str(policy_base), db=db, max_new_tokens=16, poll_interval=None)
    p.wait_ready(60)
    yield p
    p.close()


def forward_logprobs(model, prompt: list[int], response: list[int], temperature: float = 1.0) -> list[float]:
    ids = torch.tensor([prompt + response])
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0].float()
    logp = torch.log_softmax(logits / temperature, dim=-1)
    return [float(logp[len(prompt) - 1 + i, t]) for i, t in enumerate(response)]


@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_logprobs_equal_a_teacher_forced_forward_pass(policy: ServedPolicy, temperature: float) -> None:
    g = policy.generate(MSGS, seed=3, temperature=temperature)
    assert len(g.response_ids) == len(g.logprobs) > 0
    assert g.prompt_ids == policy.prompt_ids(MSGS)
    want = forward_logprobs(policy.current.model, g.prompt_ids, g.response_ids, temperature)
    assert max(abs(a - b) for a, b in zip(g.logprobs, want)) < 1e-4


def test_seed_repeats_and_answers_are_recorded(policy: ServedPolicy, db: Database) -> None:
    a, b = policy.generate(MSGS, seed=11), policy.generate(MSGS, seed=11)
    assert a.response_ids == b.response_ids and a.logprobs == b.logprobs
    assert policy.generate(MSGS, seed=12).response_ids != a.response_ids
    rec = tokens.lookup(db, tokens.response_key(a.content, a.tool_calls))
    assert rec == tokens.TokenRecord(a.prompt_ids, a.response_ids, a.logprobs, model="metaclaw/policy", weights="base")


def test_stream_chunks_add_up_to_the_answer(policy: ServedPolicy) -> None:
    items = list(policy.stream(MSGS, seed=5))
    *chunks, g = items
    assert chunks and all(isinstance(c, str) for c in chunks)
    assert "".join(chunks) == g.content
    assert g == policy.generate(MSGS, seed=5)


def test_async_generation_runs_off_the_event_loop(policy: ServedPolicy) -> None:
    async def main():
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.001)
                ticks += 1

        t = asyncio.create_task(ticker())
        g = await policy.agenerate(MSGS, max_tokens=32, seed=1)
        parts = [x async for x in policy.astream(MSGS, max_tokens=32, seed=1)]
        t.cancel()
        return g, parts, ticks

    g, parts, ticks = asyncio.run(main())
    assert parts[-1] == g and ticks > 5  # the loop kept running while tokens were sampled


def test_bad_input_is_refused(policy: ServedPolicy) -> None:
    with pytest.raises(PolicyInputError):
        policy.generate([])
    with pytest.raises(PolicyInputError):
        policy.generate(MSGS, max_tokens=0)
    long = [{"role": "user", "content": "deploy " * 2000}]
    with pytest.raises(PolicyInputError, match="context"):
        policy.generate(long)


def test_swap_changes_the_answers_and_requests_in_flight_keep_their_weights(
    policy: ServedPolicy, policy_base: Path, tmp_path: Path
) -> None:
    ref = make_adapter(policy_base, tmp_path / "step1", seed=1)
    before = policy.generate(MSGS, seed=7)
    in_flight = policy.stream(MSGS, seed=7)
    assert isinstance(next(in_flight), str)  # started: it holds the base weights now
    new = policy.swap(ref).result(60)
    assert policy.current is new and new.ref == ref and new.label == ref.path
    *_, finished = in_flight
    assert finished.weights == "base" and finished == before  # finished on the weights it started with
    after = policy.generate(MSGS, seed=7)
    assert after.weights == ref.path and after.step == 1
    assert after.logprobs != before.logprobs
    # the recorded logprobs are the new weights' own
    want = forward_logprobs(new.model, after.prompt_ids, after.response_ids)
    assert max(abs(a - b) for a, b in zip(after.logprobs, want)) < 1e-4
    assert policy.counters["swaps"] == 1


def test_a_bad_swap_keeps_the_current_weights(policy: ServedPolicy, policy_base: Path, tmp_path: Path) -> None:
    cur = policy.current
    for ref, match in [
        (WeightsRef(1, "tinker", str(policy_base), "tinker://run/1"), "cannot be served by this local policy"),
        (WeightsRef(1, "local", str(tmp_path / "other-base"), str(tmp_path)), "trained on"),
        (WeightsRef(1, "local", str(policy_base), str(tmp_path)), "adapter_config.json"),
    ]:
        with pytest.raises(ValueError, match=match):
            policy.swap(ref).result(30)
    assert policy.current is cur and policy.counters["swap_errors"] == 3


def test_watcher_swaps_in_what_another_process_publishes(policy_base: Path, db: Database, tmp_path: Path) -> None:
    p = ServedPolicy(str(policy_base), db=db, max_new_tokens=8, poll_interval=0.05)
    try:
        p.wait_ready(60)
        assert p.current.ref is None
        ref = make_adapter(policy_base, tmp_path / "a1", seed=2, step=4)
        store_latest(Database(db.path), ref)  # another connection, as another process's trainer
        wait_for(lambda: p.current.ref == ref)
        assert p.generate(MSGS, seed=1).weights == ref.path
    finally:
        p.close()
    # a policy that starts after the publication serves it from the first request
    q = ServedPolicy(str(policy_base), db=db, poll_interval=None)
    try:
        assert q.wait_ready(60).ref == ref
    finally:
        q.close()


def test_tool_call_parsing() -> None:
    content, calls = parse_tool_calls(TOOL_TEXT)
    assert content == "Let me check."
    assert [(c["type"], c["function"]) for c in calls] == [
        ("function", {"name": "get_weather", "arguments": '{"city": "Paris"}'})
    ]
    two = '<tool_call>{"name": "a", "arguments": {}}</tool_call><tool_call>{"name": "b", "arguments": "{\\"x\\": 1}"}'
    assert [c["function"] for c in parse_tool_calls(two)[1]] == [
        {"name": "a", "arguments": "{}"},
        {"name": "b", "arguments": '{"x": 1}'},
    ]
    for not_a_call in ["<tool_call>not json</tool_call>", '<tool_call>{"arguments": {}}</tool_call>', "plain"]:
        assert parse_tool_calls(not_a_call) == (not_a_call, [])
    assert safe_prefix("Hello <tool") == len("Hello ")
    assert safe_prefix("Hello <tool_call>{") == len("Hello ")
    assert safe_prefix("Hello") == 5


def test_a_forced_tool_call_comes_back_as_tool_calls(policy: ServedPolicy, db: Database) -> None:
    force_output(policy, TOOL_TEXT)
    *chunks, g = list(policy.stream(MSGS, [WEATHER_TOOL], max_tokens=200, seed=0))
    assert g.finish_reason == "tool_calls" and g.content == "Let me check."
    assert g.tool_calls[0]["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    assert "".join(chunks) == "Let me check."  # the call block is never streamed as text
    assert g.message()["tool_calls"] == g.tool_calls
    assert tokens.lookup(db, tokens.response_key(g.content, g.tool_calls)) is not None


def test_status_says_whether_and_why_the_policy_can_be_served(home: Path, policy_base: Path) -> None:
    from metaclaw_plugin import Settings
    from metaclaw_plugin.serving import PolicyUnavailable, describe, from_settings, policy_status

    off = policy_status(Settings(home=home))
    assert off["servable"] is False and "training.base_model is not set" in describe(off)
    with pytest.raises(PolicyUnavailable, match=r"training\.base_model is not set"):
        from_settings(Settings(home=home))
    missing = policy_status(Settings(home=home, training={"base_model": str(home / "nowhere"), "backend": "local"}))
    assert missing["servable"] is False and "nowhere" in missing["reason"]
    on = policy_status(Settings(home=home, training={"base_model": str(policy_base)}, serving={"vllm_url": "http://v"}))
    assert on["servable"] is True and describe(on).startswith("metaclaw/policy from") and "http://v" in describe(on)


def test_a_load_that_fails_after_a_newer_publication_gives_way_to_it(
    policy: ServedPolicy, policy_base: Path, db: Database, tmp_path: Path
) -> None:
    # the trainer pruned step 1's folder after it published step 2 (KEEP_ADAPTERS): loading step 1 fails
    gone = WeightsRef(1, "local", str(policy_base), str(tmp_path / "pruned-step-1"))
    newer = make_adapter(policy_base, tmp_path / "step2", seed=5, step=2)
    store_latest(db, newer)
    assert policy.swap(gone).result(60).ref is None  # no error: it gave way
    wait_for(lambda: policy.current.ref == newer)
    assert policy.counters["swap_errors"] == 0 and policy.counters["swaps_superseded"] == 1


def test_a_small_update_survives_the_merge_into_a_16_bit_base(policy_base: Path, tmp_path: Path) -> None:
    """A bf16 base with an adapter whose update is tiny: merged in bf16 it rounded to nothing (the served logits
    were the base's); merged in float32 the served model computes what base + adapter compute unmerged."""
    import copy
    import shutil

    from peft import LoraConfig, PeftModel, get_peft_model
    from transformers import AutoModelForCausalLM

    base16 = tmp_path / "bf16"
    shutil.copytree(policy_base, base16)
    AutoModelForCausalLM.from_pretrained(policy_base).to(torch.bfloat16).save_pretrained(base16)
    torch.manual_seed(0)
    lora = get_peft_model(
        AutoModelForCausalLM.from_pretrained(base16, dtype=torch.float32),
        LoraConfig(r=4, lora_alpha=4, target_modules="all-linear", init_lora_weights=False),
    )
    with torch.no_grad():
        for name, p in lora.named_parameters():
            if "lora_B" in name:
                p.mul_(1e-3)  # an early step's size: far below bf16's resolution of the base weights
    lora.save_pretrained(tmp_path / "adapter")
    policy = ServedPolicy(str(base16), device="cpu", poll_interval=None)
    try:
        base_model = policy.wait_ready(60).model
        assert base_model.dtype == torch.bfloat16
        served = policy.swap(WeightsRef(1, "local", str(base16), str(tmp_path / "adapter"))).result(60).model
        ids = torch.tensor([policy.prompt_ids(MSGS)])
        with torch.no_grad():  # copies: .float() and PEFT change a model in place
            before = copy.deepcopy(base_model).float()(input_ids=ids).logits.float()
            unmerged = PeftModel.from_pretrained(copy.deepcopy(base_model).float(), tmp_path / "adapter")
            ref = unmerged(input_ids=ids).logits.float()
            after = served(input_ids=ids).logits.float()
        change = float((ref - before).abs().max())
        assert change > 0 and float((after - ref).abs().max()) < 0.05 * change
    finally:
        policy.close()
