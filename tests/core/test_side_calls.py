"""Side calls are side turns, told by their shape as well as by the header (issue 29, item 3).

Recorded side calls: aider's commit message (captured), Claude Code's title call and qwen-code's memory sub-agent
(built from each CLI's own prompt: the headless runs here issued neither; see the files' notes).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from client_requests import Recorded, load

from metaclaw_plugin import MetaClawPlugin, Settings, TurnContext
from metaclaw_plugin.skillbank import bundled_skills_dir

TOOLS = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]
TASK = "Fix the date parsing bug in dates.py so ISO 8601 timestamps with a timezone offset parse correctly"


@pytest.fixture
def bundled(home: Path):
    p = MetaClawPlugin(Settings(home=home, skills_dir=bundled_skills_dir())).start()
    yield p
    p.stop()


def turn(p: MetaClawPlugin, sid: str, messages: list, *, tools=None, model="main-model", max_tokens=None, **kw):
    ctx = TurnContext(sid, model=model, host="test", metadata={"max_tokens": max_tokens}, **kw)
    prepared = p.prepare_turn(ctx, messages, tools=tools)
    t = p.complete_turn(prepared, {"role": "assistant", "content": "ok"}, usage={"prompt_tokens": 1})
    return prepared, t


def replay(p: MetaClawPlugin, rec: Recorded, sid: str):
    return turn(
        p,
        sid,
        rec.messages,
        tools=rec.body.get("tools"),
        model=rec.body.get("model"),
        max_tokens=rec.body.get("max_tokens"),
    )


SIDE = [r for r in load() if r.kind == "side"]


def test_every_client_with_side_calls_has_one_recorded():
    assert {r.client for r in SIDE} == {"aider", "claude-code", "qwen-code"}


@pytest.mark.parametrize("rec", SIDE, ids=[f"{r.client}-{r.name}" for r in SIDE])
def test_a_recorded_side_call_after_its_clients_main_turn_is_a_side_turn(bundled: MetaClawPlugin, rec: Recorded):
    main = next(r for r in load(rec.client) if r.kind == "main" and r.task == rec.task)
    prepared, t = replay(bundled, main, "s")
    assert t.kind == "main" and prepared.block.names  # the task gets skills
    prepared, t = replay(bundled, rec, "s")
    assert t.kind == "side" and t.response is not None
    assert prepared.block.names == [] and prepared.block.text == ""
    assert prepared.ctx.metadata["side_reason"]
    session = next(st for st in bundled.active_sessions() if st.session_id == "s")
    assert session.main_turns == 1 and len(session.turn_ids) == 2


@pytest.mark.parametrize("rec", SIDE, ids=[f"{r.client}-{r.name}" for r in SIDE])
def test_a_recorded_side_call_alone_is_a_side_turn(bundled: MetaClawPlugin, rec: Recorded):
    """A client's side call often falls in a session of its own (a different system prompt, no session id)."""
    _, t = replay(bundled, rec, "alone")
    assert t.kind == "side"


def test_every_recorded_main_turn_stays_main(bundled: MetaClawPlugin):
    for rec in load():
        if rec.kind == "main":
            _, t = replay(bundled, rec, f"{rec.client}-{rec.name}")
            assert t.kind == "main", rec.name


def test_no_tools_when_the_sessions_main_turns_have_tools(plugin: MetaClawPlugin):
    turn(plugin, "s", [{"role": "user", "content": TASK}], tools=TOOLS)
    _, t = turn(plugin, "s", [{"role": "user", "content": "Name this chat."}])
    assert t.kind == "side"


def test_a_short_output_limit_beside_a_long_main_one(plugin: MetaClawPlugin):
    turn(plugin, "s", [{"role": "user", "content": TASK}], max_tokens=32000)
    _, t = turn(plugin, "s", [{"role": "user", "content": TASK}], max_tokens=64)
    assert t.kind == "side"


def test_one_weak_signal_alone_leaves_a_main_turn(plugin: MetaClawPlugin):
    turn(plugin, "s", [{"role": "user", "content": TASK}])
    # another model (the user switched), a user asking for a summary, a modest output limit: each alone is main
    assert turn(plugin, "s", [{"role": "user", "content": TASK}], model="other-model")[1].kind == "main"
    assert turn(plugin, "s", [{"role": "user", "content": "Summarize this article about tides"}])[1].kind == "main"
    assert turn(plugin, "fresh", [{"role": "user", "content": TASK}], max_tokens=800)[1].kind == "main"


def test_a_prompt_that_gives_the_model_a_narrow_side_job(plugin: MetaClawPlugin):
    for system in (
        "You classify support tickets. Reply with only the category name.",
        "Generate a short title (at most 6 words) for the conversation below.",
        "You are a sub-agent that extracts action items for the orchestrator.",
    ):
        msgs = [{"role": "system", "content": system}, {"role": "user", "content": "the printer is on fire"}]
        assert turn(plugin, system, msgs)[1].kind == "side", system
    assistant = [{"role": "system", "content": "You are a helpful assistant for a travel agency."}]
    assert turn(plugin, "t", [*assistant, {"role": "user", "content": "Summarize my bookings"}])[1].kind == "main"
    # an app whose main job is summaries: its role alone, in an assistant's form, is not a side call
    app = [{"role": "system", "content": "You summarize long reports for busy readers. Be concise and clear."}]
    assert turn(plugin, "u", [*app, {"role": "user", "content": "the quarterly report"}])[1].kind == "main"
    topics = [{"role": "system", "content": "You are a support bot. Only answer questions on these topics: billing."}]
    assert turn(plugin, "v", [*topics, {"role": "user", "content": "why was I charged twice"}])[1].kind == "main"


def test_another_app_on_the_proxy_without_tools_is_not_taken_for_side_calls(plugin: MetaClawPlugin):
    """Only the same session's tools weigh fully: a client-level shape may be another app's."""
    turn(plugin, "agent", [{"role": "user", "content": TASK}], tools=TOOLS)
    assert turn(plugin, "chat", [{"role": "user", "content": "Plan a trip to Lisbon"}])[1].kind == "main"


def test_a_new_session_of_another_model_with_tools_and_a_modest_limit_is_main(plugin: MetaClawPlugin):
    """Two apps (or two models) on one proxy with no user id: the second app's first turn, with tools and a modest
    max_tokens, is its own main turn, not a side call of the first app's session."""
    turn(plugin, "app-a", [{"role": "user", "content": TASK}], tools=TOOLS, model="model-a", max_tokens=256)
    for i in range(3):
        _, t = turn(
            plugin, f"app-b-{i}", [{"role": "user", "content": TASK}], tools=TOOLS, model="model-b", max_tokens=256
        )
        assert t.kind == "main", i


def test_the_judgement_can_be_turned_off(home: Path):
    p = MetaClawPlugin(Settings(home=home, sessions={"detect_side_calls": False})).start()
    try:
        msgs = [
            {"role": "system", "content": "Reply with only a one-line commit message."},
            {"role": "user", "content": "diff"},
        ]
        assert turn(p, "s", msgs, max_tokens=50)[1].kind == "main"
    finally:
        p.stop()


def test_an_explicit_side_turn_stays_side(plugin: MetaClawPlugin):
    _, t = turn(plugin, "s", [{"role": "user", "content": TASK}], tools=TOOLS, kind="side")
    assert t.kind == "side"
