"""MetaClawPlugin hooks: injection, capture, sessions, idle timeout, fail-open, the cost budget."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import time

import pytest
from waiting import wait_for

from metaclaw_plugin import MetaClawPlugin, SessionEnd, Settings, TurnContext

TASK = [{"role": "system", "content": "host"}, {"role": "user", "content": "back up settings.json before editing it"}]


def test_request_response_session_end(plugin: MetaClawPlugin):
    ends: list[SessionEnd] = []
    plugin.events.subscribe(SessionEnd, ends.append)
    ctx = TurnContext("s1", host="test", model="m")
    out = plugin.on_request(ctx, TASK)
    assert "backup-before-modify" in ctx.injected_skills and "<metaclaw-skills>" in out[0]["content"]
    assert TASK[0]["content"] == "host"  # caller's messages untouched
    turn = plugin.on_response(ctx, {"role": "assistant", "content": "done"}, usage={"total_tokens": 5})
    assert turn is not None and turn.skill_generation == plugin.skills.generation
    plugin.on_session_end(ctx, {"success": True})
    plugin.flush()
    s = plugin.store.get_session("s1")
    assert s.outcome == {"success": True} and s.ended_at and s.turns[0].usage == {"total_tokens": 5}
    assert ends and ends[0].turn_ids == [turn.turn_id] and ends[0].reason == "host"


def test_same_session_id_in_two_tenants_is_two_sessions(plugin: MetaClawPlugin):
    for tenant in ("a", "b"):
        ctx = TurnContext("shared-id", tenant=tenant)
        plugin.on_request(ctx, [{"role": "user", "content": f"hello from {tenant}"}])
        plugin.on_response(ctx, {"role": "assistant", "content": tenant})
    plugin.flush()
    for tenant in ("a", "b"):
        turns = plugin.store.get_session("shared-id", tenant=tenant).turns
        assert [t.response["content"] for t in turns] == [tenant]


def test_idle_sessions_end_by_themselves(home):
    p = MetaClawPlugin(Settings(home=home, sessions={"session_idle_timeout": 0.3})).start()
    try:
        ends: list[SessionEnd] = []
        p.events.subscribe(SessionEnd, ends.append)
        ctx = TurnContext("idle")
        p.on_request(ctx, TASK)
        p.on_response(ctx, {"role": "assistant", "content": "x"})
        wait_for(lambda: ends, 5, "the idle session to end")
        assert ends[0].reason == "idle" and ends[0].session_id == "idle"
        p.flush()
        assert p.store.get_session("idle").ended_at is not None
    finally:
        p.stop()


def test_capture_only_and_side_turns(plugin: MetaClawPlugin):
    side = TurnContext("s2", kind="side")
    assert plugin.on_request(side, TASK) == TASK and side.injected_skills == []
    plugin.on_response(side, {"role": "assistant", "content": "heartbeat ok"})
    cap = TurnContext("s2")
    plugin.on_response(cap, {"role": "assistant", "content": "late"}, messages=TASK)
    plugin.flush()
    turns = plugin.store.get_session("s2").turns
    assert [t.kind for t in turns] == ["side", "main"] and turns[1].messages == TASK


def test_async_twins(plugin: MetaClawPlugin):
    async def go():
        ctx = TurnContext("async")
        out = await plugin.aon_request(ctx, TASK)
        await plugin.aon_response(ctx, {"role": "assistant", "content": "a"})
        await plugin.aon_session_end(ctx, {"success": False})
        return out

    out = asyncio.run(go())
    assert "<metaclaw-skills>" in out[0]["content"]
    plugin.flush()
    assert plugin.store.get_session("async").outcome == {"success": False}


def test_broken_skill_store_fails_open(home):
    p = MetaClawPlugin(Settings(home=home)).start()
    try:

        def boom(*a, **k):
            raise RuntimeError("skill store exploded")

        p.skills.injection = boom  # type: ignore[method-assign]
        ctx = TurnContext("fo")
        assert p.on_request(ctx, TASK) == TASK
        assert p.errors["inject"] == 1  # the request is still remembered, with nothing injected
        p.store.append_turn = boom  # type: ignore[method-assign]
        assert p.on_response(ctx, {"role": "assistant", "content": "x"}) is None
        assert p.errors["on_response"] == 1
        assert p.on_request(ctx, "not a list") == "not a list"  # type: ignore[arg-type]
        assert p.errors["on_request"] == 1
        failing = []
        p.events.subscribe(SessionEnd, lambda e: (_ for _ in ()).throw(ValueError("listener bug")))
        p.events.subscribe(SessionEnd, failing.append)
        p.on_session_end(ctx)
        p.flush()
        assert failing and any(k.startswith("listener:") for k in p.errors)
    finally:
        p.stop()


def test_unreadable_skills_dir_does_not_crash(home):
    (home / "skills" / "bad").mkdir(parents=True)
    (home / "skills" / "bad" / "SKILL.md").write_bytes(b"\x00\x01 not a skill")
    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        assert p.on_request(TurnContext("x"), TASK) == TASK  # nothing injectable, nothing broken
        assert p.status()["skill_problems"]
    finally:
        p.stop()


def test_start_stop_idempotent_and_lazy(home):
    p = MetaClawPlugin(Settings(home=home))
    ctx = TurnContext("lazy")
    p.on_request(ctx, TASK)  # starts itself on first use
    assert p.started
    p.start()
    p.stop()
    p.stop()
    assert not p.started


def test_library_changes_reach_the_request_path_without_restart(plugin: MetaClawPlugin):
    shutil.rmtree(plugin.settings.skills_path / "backup-before-modify")
    plugin.skills.store.add_batch([], actor="t")  # any write bumps the change counter
    plugin.skills.refresh()
    ctx = TurnContext("r")
    plugin.on_request(ctx, TASK)
    assert "backup-before-modify" not in ctx.injected_skills


@pytest.mark.perf
def test_hook_cost_stays_in_the_low_milliseconds(plugin: MetaClawPlugin):
    history = [{"role": "system", "content": "S" * 38_000}]
    for i in range(20):
        history += [{"role": "user", "content": f"q{i} about json files"}, {"role": "assistant", "content": f"a{i}"}]
    costs = []
    for i in range(300):
        ctx = TurnContext("perf")
        t = time.perf_counter()
        plugin.on_request(ctx, history + [{"role": "user", "content": f"back up the config {i}"}])
        plugin.on_response(ctx, {"role": "assistant", "content": f"ok {i}"})
        costs.append(time.perf_counter() - t)
    costs.sort()
    # A functional bound, not a benchmark: catches an accidental fsync, network call or O(n^2) on the path.
    assert costs[len(costs) // 2] < 0.02


def test_import_stays_light():
    code = (
        "import sys, metaclaw_plugin, metaclaw_plugin.cli\n"
        "heavy = [m for m in ('torch', 'chromadb', 'langchain', 'litellm', 'sentence_transformers') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_turn_after_the_end_reopens_the_session(plugin: MetaClawPlugin):
    ctx = TurnContext("thread-1")
    plugin.on_request(ctx, TASK)
    plugin.on_response(ctx, {"role": "assistant", "content": "one"})
    plugin.on_session_end(ctx, {"success": True})
    plugin.flush()
    assert plugin.store.get_session("thread-1").ended_at is not None
    time.sleep(0.01)
    ctx2 = TurnContext("thread-1")
    plugin.on_request(ctx2, TASK)
    plugin.on_response(ctx2, {"role": "assistant", "content": "two"})
    plugin.flush()
    s = plugin.store.get_session("thread-1")
    assert s.ended_at is None and [t.response["content"] for t in s.turns] == ["one", "two"]


def test_a_home_made_beforehand_with_loose_modes_is_made_private(tmp_path, caplog):
    """A home created 0755 (a 022 umask, an older release), with a 0644 file and a 0755 skills folder: the start
    tightens folders to 0700 and files to 0600 and warns once, naming them; a link is not followed."""
    import logging
    import os
    import stat

    home = tmp_path / "home"
    (home / "skills" / "mine").mkdir(parents=True, mode=0o755)
    os.chmod(home, 0o755)
    os.chmod(home / "skills", 0o755)
    (home / "config.yaml").write_text("mode: skills_only\n")
    os.chmod(home / "config.yaml", 0o644)
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("not the plugin's")
    os.chmod(outside, 0o644)
    (home / "link.txt").symlink_to(outside)
    with caplog.at_level(logging.WARNING, logger="metaclaw_plugin"):
        p = MetaClawPlugin(Settings(home=home)).start()
    try:
        for d in (home, home / "skills", home / "skills" / "mine", home / "journal", home / "logs"):
            assert stat.S_IMODE(d.stat().st_mode) == 0o700, d
        for f in home.rglob("*"):
            if f.is_file() and not f.is_symlink():
                assert stat.S_IMODE(f.stat().st_mode) & 0o077 == 0, f
        assert stat.S_IMODE(outside.stat().st_mode) == 0o644  # behind a link: not the home's to change
        said = [r.getMessage() for r in caplog.records if "made private" in r.getMessage()]
        assert len(said) == 1 and "config.yaml" in said[0]
    finally:
        p.stop()
