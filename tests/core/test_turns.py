"""The adapter contract: prepare_turn / complete_turn, the one in-flight table, and on_request/on_response on top."""

from __future__ import annotations

import logging
from collections import Counter

import pytest

from metaclaw_plugin import MetaClawPlugin, TurnContext
from metaclaw_plugin.integration import FailOpen, InFlight, PreparedTurn
from metaclaw_plugin.skillbank.render import inject

TASK = [{"role": "system", "content": "host"}, {"role": "user", "content": "back up settings.json before editing it"}]
TOOLS = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]


def test_prepare_then_complete_records_the_request_as_sent(plugin: MetaClawPlugin) -> None:
    ctx = TurnContext("contract", host="test", model="m")
    prepared = plugin.prepare_turn(ctx, TASK, tools=TOOLS)
    assert isinstance(prepared, PreparedTurn) and prepared.ctx is ctx
    assert "backup-before-modify" in prepared.block.names and prepared.block.text.startswith("<metaclaw-skills>")
    # .messages is the block rendered the one way every adapter renders it, and the caller's list is untouched
    assert prepared.messages == inject(TASK, prepared.block.text) and TASK[0]["content"] == "host"
    assert len(plugin.inflight) == 0  # the adapter carries the prepared turn; nothing waits in the plugin
    turn = plugin.complete_turn(prepared, {"role": "assistant", "content": "done"}, usage={"total_tokens": 3})
    plugin.flush()
    stored = plugin.store.get_session("contract").turns
    assert turn.turn_id == ctx.request_id and [t.turn_id for t in stored] == [ctx.request_id]
    assert stored[0].messages == prepared.messages
    assert stored[0].injected_skills == prepared.block.names and stored[0].tools == TOOLS
    assert stored[0].usage == {"total_tokens": 3} and stored[0].skill_generation == prepared.block.generation


def test_prepare_without_injecting_or_recording(plugin: MetaClawPlugin) -> None:
    ctx = TurnContext("capture")
    captured = plugin.prepare_turn(ctx, TASK, inject=False, injected_skills=["named-by-host"])
    assert captured.block.text == "" and captured.block.names == ["named-by-host"] and captured.messages == TASK
    lookup = plugin.prepare_turn(TurnContext("lookup-only"), TASK, record=False)
    assert lookup.block.text  # the block alone, for a host that injects it itself
    assert {s.session_id for s in plugin.active_sessions()} == {"capture"}  # the lookup opened no session
    with pytest.raises(TypeError):
        plugin.prepare_turn(ctx, "not a list")  # type: ignore[arg-type]


def test_on_request_and_on_response_are_the_same_two_calls(plugin: MetaClawPlugin) -> None:
    ctx = TurnContext("hooks")
    out = plugin.on_request(ctx, TASK)
    waiting = plugin.inflight.get(ctx.request_id)
    assert waiting is not None and waiting.messages == out
    turn = plugin.on_response(ctx, {"role": "assistant", "content": "ok"})
    assert turn is not None and turn.messages == out and ctx.request_id not in plugin.inflight
    # a response whose request was never seen is still recorded, with the messages it names
    late = TurnContext("hooks")
    turn = plugin.on_response(late, {"role": "assistant", "content": "late"}, messages=TASK)
    assert turn is not None and turn.messages == TASK and turn.injected_skills == []


def test_inflight_forgets_after_ttl_since_last_touch_and_beyond_max() -> None:
    now = [0.0]
    table: InFlight[str, int] = InFlight(ttl=10.0, max_items=3, clock=lambda: now[0])
    table.put("a", 1)
    table.put("b", 2)
    now[0] = 8.0
    assert table.get("a") == 1  # a read restarts the clock
    now[0] = 15.0
    assert table.get("a") == 1 and table.get("b") is None and "b" not in table
    for k in "cde":
        table.put(k, 0)
    assert len(table) == 3 and "a" not in table  # beyond max_items the least recently touched go first
    now[0] = 30.0
    assert table.sweep() == 3 and len(table) == 0 and table.pop("c") is None


def test_fail_open_counts_and_swallows() -> None:
    class Owner:
        errors: Counter[str] = Counter()

    fail = FailOpen(logging.getLogger("t.turns"), "t", prefix="x.")
    with fail.guard("step", Owner):
        raise RuntimeError("bug")
    assert Owner.errors == Counter({"x.step": 1})


def test_the_turn_path_counts_the_hosts_requests_in_flight(plugin: MetaClawPlugin) -> None:
    """From a recorded request's prepare to its complete (what the plugin's own calls give way to); a block asked
    for ahead of a request, a response whose request was not seen, and a second complete count nothing."""
    traffic = plugin.host_models.give_way.traffic
    a, b = TurnContext("traffic-a"), TurnContext("traffic-b")
    plugin.on_request(a, TASK)
    prepared = plugin.prepare_turn(b, TASK)
    plugin.prepare_turn(TurnContext("traffic-lookup"), TASK, record=False)
    assert traffic.in_flight() == 2
    plugin.on_response(a, {"role": "assistant", "content": "done"})
    plugin.on_response(TurnContext("traffic-unseen"), {"role": "assistant", "content": "?"}, messages=TASK)
    assert traffic.in_flight() == 1
    plugin.complete_turn(prepared, {"role": "assistant", "content": "done"})
    plugin.complete_turn(prepared, {"role": "assistant", "content": "again"})
    assert traffic.in_flight() == 0 and traffic.ended == 2
    assert plugin.status()["host_model"] is None  # no model offered: nothing to give way for yet
