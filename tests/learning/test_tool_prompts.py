"""Requests with tools: the served policy and the trainer render one prompt (training/chat.py). A turn captured
with its tools, earlier tool calls and tool results becomes a sample with the prompt ids the policy sampled from
and its logprobs; tool results are masked; a template without tool support gets the documented fallback on both
sides. Real parts: the tiny model (its Qwen-style template, or plain ChatML), the plugin's capture and store."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")

from policy_support import WEATHER_TOOL
from transformers import AutoTokenizer

from metaclaw_plugin import MetaClawPlugin, Settings, TurnContext
from metaclaw_plugin.serving import ServedPolicy
from metaclaw_plugin.store import Database
from metaclaw_plugin.training import chat
from metaclaw_plugin.training.samples import TrainSample, build_sample, tokenize_turn
from metaclaw_plugin.types import Sample

PLAIN_CHATML = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + (message['content'] or '') + '<|im_end|>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
# an earlier exchange with a tool inside the prompt, then the user's next question
HISTORY = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "call_1", "content": "sunny, 22C"},
    {"role": "assistant", "content": "Sunny and 22C."},
    {"role": "user", "content": "And should I take an umbrella?"},
]


def _plain_chatml(policy_base: Path, out: Path) -> Path:
    """The tiny model with a ChatML template that knows nothing of tools (as SmolLM2's or an older model's)."""
    shutil.copytree(policy_base, out)
    tok = AutoTokenizer.from_pretrained(out)
    tok.chat_template = PLAIN_CHATML
    tok.save_pretrained(out)
    return out


def _served_then_trained(base: Path, home: Path, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None):
    """A request through the plugin (injection and capture, tools included) answered by the served policy; then
    the trainer's sample of the captured turn, with a tokenizer of its own. Returns (generation, sample)."""
    settings = Settings(home=home, injection={"max_injected_tokens": 120, "convention_tokens": 0})
    plugin = MetaClawPlugin(settings).start()
    db = Database(settings.db_file)
    policy = ServedPolicy(str(base), db=db, max_new_tokens=8, poll_interval=None)
    try:
        ctx = TurnContext(session_id="s1")
        sent = plugin.on_request(ctx, messages, tools=tools)
        g = policy.generate(sent, tools, seed=3)
        plugin.on_response(ctx, g.message())
        assert plugin.flush(10)
        turn = plugin.store.get_turn(ctx.request_id)
        assert turn is not None and turn.tools == tools
    finally:
        policy.close()
        plugin.stop()
    sample = build_sample(turn, Sample(turn.turn_id, "s1", "default", 0, 1.0), AutoTokenizer.from_pretrained(base), db)
    return g, sample


def _assert_trains_with_its_logprobs(g: Any, sample: TrainSample) -> None:
    assert sample.logprobs is not None, "the answer lost its behaviour logprobs"
    assert sample.logprobs == g.logprobs and sample.completion_ids == g.response_ids
    assert sample.prompt_ids == g.prompt_ids


def test_tool_calls_and_results_inside_the_prompt_render_alike(policy_base: Path, home: Path) -> None:
    """Tool definitions, an earlier assistant tool call and its result in the prompt: the captured turn's sample
    has the ids the policy sampled from, and its logprobs."""
    g, sample = _served_then_trained(policy_base, home, HISTORY, [WEATHER_TOOL])
    _assert_trains_with_its_logprobs(g, sample)
    tok = AutoTokenizer.from_pretrained(policy_base)
    prompt = tok.decode(sample.prompt_ids)
    assert '<tools>\n{"type": "function", "function": {"name": "get_weather"' in prompt
    assert '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>' in prompt
    assert "<tool_response>\nsunny, 22C\n</tool_response>" in prompt


def test_a_request_without_tools_still_trains_with_its_logprobs(policy_base: Path, home: Path) -> None:
    plain = [HISTORY[0], HISTORY[1]]
    g, sample = _served_then_trained(policy_base, home, plain, None)
    _assert_trains_with_its_logprobs(g, sample)
    assert "<tools>" not in AutoTokenizer.from_pretrained(policy_base).decode(sample.prompt_ids)


def test_a_template_without_tool_support_falls_back_alike_on_both_sides(
    policy_base: Path, home: Path, tmp_path: Path
) -> None:
    """Plain ChatML renders no tools itself: both sides write them in the fallback format (the one the served
    policy parses back), which under ChatML is the text the Qwen-style template renders natively."""
    base = _plain_chatml(policy_base, tmp_path / "plain")
    plain, qwen = AutoTokenizer.from_pretrained(base), AutoTokenizer.from_pretrained(policy_base)
    assert not chat.native_tools(plain) and chat.native_tools(qwen)
    assert chat.render(plain, HISTORY, [WEATHER_TOOL]) == chat.render(qwen, HISTORY, [WEATHER_TOOL])
    g, sample = _served_then_trained(base, home, HISTORY, [WEATHER_TOOL])
    _assert_trains_with_its_logprobs(g, sample)
    prompt = plain.decode(sample.prompt_ids)
    assert '"name": "get_weather"' in prompt and "<tool_response>\nsunny, 22C\n</tool_response>" in prompt
    assert "<|im_start|>tool" not in prompt  # tool results are user messages in the fallback, as in Qwen's


@pytest.mark.parametrize("template", ["native", "fallback"])
def test_a_multi_step_turn_masks_tool_results_and_renders_as_served(
    policy_base: Path, tmp_path: Path, template: str
) -> None:
    """The answer after tool calls: the earlier step (its tool calls) and the tool results are prompt, trained
    with that step's own turn, never again here; the completion is this step's answer alone, every token trained;
    and the prompt is exactly what the served policy sampled that answer from."""
    base = policy_base if template == "native" else _plain_chatml(policy_base, tmp_path / "plain")
    tok = AutoTokenizer.from_pretrained(base)
    second = {**CALL, "id": "call_2", "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'}}
    steps = [
        HISTORY[0],
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {"role": "assistant", "content": "Checking both.", "tool_calls": [CALL, second]},
        {"role": "tool", "tool_call_id": "call_1", "content": "22C clear"},
        {"role": "tool", "tool_call_id": "call_2", "content": "14C showers"},
    ]
    answer = {"role": "assistant", "content": "Paris is fine; take an umbrella to Rome."}
    p, c, m = tokenize_turn(tok, steps, answer, [WEATHER_TOOL])
    prompt, trained = tok.decode(p), tok.decode(c)
    assert all(m) and not any(x in trained for x in ("22C", "14C", "Checking both.", "<tool_call>"))
    assert "<tool_response>\n22C clear\n</tool_response>\n<tool_response>\n14C showers\n</tool_response>" in prompt
    assert '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}' in prompt
    assert trained.startswith("Paris is fine; take an umbrella to Rome.")
    policy = ServedPolicy(str(base), max_new_tokens=4, poll_interval=None)
    try:
        served = policy.prompt_ids(steps, [WEATHER_TOOL])
    finally:
        policy.close()
    assert p == served
