"""Issue 42: a session belongs to one (tenant, user), through the core's hooks.

Two users who name one session id, or whose conversations open alike, never share a session, a turn or a memory;
a fallback id cannot be claimed; ids are not redacted for looking random; feedback never scores a side turn by
accident; a user's new conversation ends that user's earlier one, and the idle sweep ends sessions an earlier
process left open. The same through a real proxy: ``tests/host_litellm/test_session_identity_proxy.py``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from metaclaw_plugin import MetaClawPlugin, Settings
from metaclaw_plugin.integration import conversation_fingerprint, session_id_from
from metaclaw_plugin.memory.store import MemoryStore
from metaclaw_plugin.types import Session, TurnContext

SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
REPLY = {"role": "assistant", "content": "Noted."}


@pytest.fixture
def plugin(home: Path):
    p = MetaClawPlugin(Settings(home=home)).start()
    yield p
    p.stop()


def turn(
    p: MetaClawPlugin,
    session: str,
    text: str,
    user: str | None,
    *,
    tenant: str = "acme",
    kind: str = "main",
    messages: list[dict[str, Any]] | None = None,
    source: str = "header",
) -> tuple[TurnContext, str]:
    """One turn through the hooks; returns its context and the system text the model saw."""
    ctx = TurnContext(session_id=session, user=user, tenant=tenant, kind=kind, metadata={"session_source": source})  # type: ignore[arg-type]
    out = p.on_request(ctx, messages or [SYSTEM, {"role": "user", "content": text}])
    p.on_response(ctx, REPLY)
    return ctx, str(out[0]["content"])


def sessions(p: MetaClawPlugin) -> list[Session]:
    assert p.flush(60)
    out = []
    for row in p.store.list_sessions(1000):
        s = p.store.get_session(row["session_id"], row["tenant"])
        assert s is not None
        out.append(s)
    return out


def memories(p: MetaClawPlugin, user: str, tenant: str = "acme") -> list[str]:
    assert p.flush(60)
    assert p.memory_store is not None
    return [m.text for m in MemoryStore(p.memory_store.db).find(tenant, user)]


def memory_part(system: str) -> str:
    start = system.find("<metaclaw-memory>")
    return system[start:] if start >= 0 else ""


# One session id, two users -------------------------------------------------------------------------------------------
def test_one_session_id_named_by_two_users_is_two_sessions(plugin: MetaClawPlugin) -> None:
    """Ben names the id first; Ana's health fact is still Ana's, and never reaches Ben's requests."""
    turn(plugin, "team-chat", "What should I cook for dinner tonight?", "ben")
    turn(plugin, "team-chat", "Please remember that my blood type is AB negative.", "ana")
    turn(plugin, "team-chat", "And a dessert idea?", "ben")
    plugin.on_session_end(TurnContext(session_id="team-chat", tenant="acme"))  # the host's end: every user's part
    found = sessions(plugin)
    assert len(found) == 2
    for s in found:
        assert len({t.user for t in s.turns}) == 1, [(t.user, t.turn_id) for t in s.turns]
        assert s.ended_at is not None
    assert any("AB negative" in m for m in memories(plugin, "ana"))
    assert not any("AB negative" in m for m in memories(plugin, "ben"))
    _, seen = turn(plugin, "later", "Which blood type do I have?", "ben")
    assert "AB negative" not in seen
    _, seen = turn(plugin, "later-too", "Which blood type do I have?", "ana")
    assert "AB negative" in memory_part(seen)


def test_a_session_named_by_another_user_moves_nobodys_turns(plugin: MetaClawPlugin) -> None:
    """Mallory names Carol's id before Carol: Carol's turns and end stay Carol's, Mallory's stay Mallory's."""
    turn(plugin, "carol-work", "hello", "mallory")
    carol, _ = turn(plugin, "carol-work", "Please remember that my office is room 4417.", "carol")
    plugin.on_session_end(carol)
    by_user = {s.turns[0].user: s for s in sessions(plugin)}
    assert set(by_user) == {"mallory", "carol"}
    assert [t.user for t in by_user["carol"].turns] == ["carol"] and by_user["carol"].ended_at is not None
    assert by_user["mallory"].ended_at is None  # Carol's end is Carol's
    assert not memories(plugin, "mallory") and any("4417" in m for m in memories(plugin, "carol"))
    # the id as the host knows it still reads: that user's session of it
    read = plugin.read_session("carol-work", "acme", user="carol")
    assert read is not None and [t.user for t in read.turns] == ["carol"]


def test_a_user_cannot_take_a_namespaced_id(plugin: MetaClawPlugin) -> None:
    """A turn without a user that names another user's stored id gets a session of its own."""
    turn(plugin, "chat-9", "first", "dora")
    stored = sessions(plugin)[0].session_id
    assert stored != "chat-9" and stored.startswith("chat-9")
    turn(plugin, stored, "sneaking in", None)
    found = {s.session_id: s for s in sessions(plugin)}
    assert len(found) == 2 and [t.user for t in found[stored].turns] == ["dora"]


# Fallback ids -----------------------------------------------------------------------------------------------------
def test_a_user_field_alone_is_not_a_session_id() -> None:
    """``user:<name>`` was a session anyone could name first; the user is no step of the chain."""
    assert session_id_from(metadata=None, fingerprint=None) == (None, "none")
    with pytest.raises(TypeError):
        session_id_from(user="ann")  # type: ignore[call-arg]


def test_fingerprints_are_per_tenant_and_user_and_skip_the_system_prompt(plugin: MetaClawPlugin) -> None:
    opening = [SYSTEM, {"role": "user", "content": "Hi, I need help with something personal."}]
    ana = conversation_fingerprint(plugin, opening, "acme", "ana")
    ben = conversation_fingerprint(plugin, opening, "acme", "ben")
    other_tenant = conversation_fingerprint(plugin, opening, "globex", "ana")
    assert ana and ben and other_tenant and len({ana, ben, other_tenant}) == 3
    # the next request of Ana's conversation (the history resent, another system prompt) is the same conversation
    later = [
        {"role": "system", "content": "A different system prompt today."},
        *opening[1:],
        {"role": "assistant", "content": "Of course."},
        {"role": "user", "content": "It is about my health."},
    ]
    assert conversation_fingerprint(plugin, later, "acme", "ana") == ana
    # another process (a proxy worker, another host on the database) follows the same conversation to the same id
    other = MetaClawPlugin(Settings(home=plugin.settings.home_dir.parent / "other-home"))
    assert conversation_fingerprint(other, later, "acme", "ana") == ana


def test_a_conversations_id_named_by_a_client_is_not_that_conversation(plugin: MetaClawPlugin) -> None:
    """An anonymous client that computes an anonymous conversation's ``fp-`` id and names it gets its own session."""
    opening = [SYSTEM, {"role": "user", "content": "Hi, I need help with something personal."}]
    fp = conversation_fingerprint(plugin, opening, "acme", None)
    assert fp is not None
    turn(plugin, fp, "Hi, I need help with something personal.", None, messages=opening, source="fingerprint")
    turn(plugin, fp, "tell me what they said", None, source="header")  # named, not made by the plugin
    found = sessions(plugin)
    assert len(found) == 2 and sorted(len(s.turns) for s in found) == [1, 1]
    assert {s.session_id for s in found} >= {fp}


def test_a_preamble_every_run_repeats_does_not_join_the_runs(plugin: MetaClawPlugin) -> None:
    """aider opens every run in a repository with the same repository map and acknowledgements."""
    preamble = [
        SYSTEM,
        {"role": "user", "content": "Here are summaries of some files present in my git repository.\n\ndates.py"},
        {"role": "assistant", "content": "Ok, I won't try and edit those files without asking first."},
    ]
    runs = []
    for task in ("Fix the date parsing bug in dates.py", "Add type hints to dates.py", "Write tests for dates.py"):
        first = [*preamble, {"role": "user", "content": task}]
        sid = conversation_fingerprint(plugin, first, "acme", "ana")
        follow = [*first, {"role": "assistant", "content": "Done."}, {"role": "user", "content": "Thanks, next?"}]
        assert conversation_fingerprint(plugin, follow, "acme", "ana") == sid
        runs.append(sid)
    assert len(set(runs)) == 3, runs


def test_a_system_reminder_every_request_ends_with_does_not_join_the_runs(plugin: MetaClawPlugin) -> None:
    """aider (``reminder: sys``) ends every request with the same edit-format rules: what tells two runs apart is
    the last thing the user or the model said, not that reminder."""
    preamble = [
        SYSTEM,
        {"role": "user", "content": "Here are summaries of some files present in my git repository.\n\ndates.py"},
        {"role": "assistant", "content": "Ok."},
    ]
    rules = {"role": "system", "content": "# *SEARCH/REPLACE block* Rules: every block must use this form..."}
    runs = []
    for task in ("Remember that staging is stagedb-1.", "Which database is staging?"):
        first = [*preamble, {"role": "user", "content": task}, rules]
        sid = conversation_fingerprint(plugin, first, "acme", "ana")
        follow = [*preamble, {"role": "user", "content": task}, {"role": "assistant", "content": "Done."}]
        follow += [{"role": "user", "content": "Thanks, next?"}, rules]
        assert conversation_fingerprint(plugin, follow, "acme", "ana") == sid
        runs.append(sid)
    assert len(set(runs)) == 2, runs


def test_a_new_conversation_is_never_filed_into_a_session_stored_before_a_restart(home: Path) -> None:
    opening = [SYSTEM, {"role": "user", "content": "hi"}]
    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        sid = conversation_fingerprint(p, opening, "acme", "ana")
        assert sid is not None
        turn(p, sid, "hi", "ana", messages=opening, source="fingerprint")
        assert p.flush(30)
    finally:
        p.stop()
    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        assert p.flush(30)  # the worker loads the ids earlier processes used
        again = conversation_fingerprint(p, opening, "acme", "ana")
        assert again is not None and again != sid
    finally:
        p.stop()


# Ids are not secrets for looking random ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "sid",
    ["ses_01JH8ZK3QWNAB4XT7R2CDE5FGH", "ses_5c3d1f2e9a0bXyZ12abCDefGh3", "mcp-3f2a9c1d4b5e6f708192a3b4c5d6e7f8"],
)
def test_session_and_request_ids_are_kept_when_they_only_look_random(plugin: MetaClawPlugin, sid: str) -> None:
    ctx = TurnContext(session_id=sid, tenant="acme", request_id="req_01JH8ZK3QWNAB4XT7R2CDE5FGH")
    plugin.on_request(ctx, [{"role": "user", "content": "hello"}])
    plugin.on_response(ctx, REPLY)
    found = sessions(plugin)
    assert [s.session_id for s in found] == [sid]
    assert [t.turn_id for t in found[0].turns] == ["req_01JH8ZK3QWNAB4XT7R2CDE5FGH"]


def test_a_session_id_in_a_message_stays_readable(plugin: MetaClawPlugin) -> None:
    """A tool result that carries the MCP server's session id (``"session_id": "mcp-<hex>"``)."""
    text = '{"session_id": "mcp-3f2a9c1d4b5e6f708192a3b4c5d6e7f8", "skills": []}'
    ctx = TurnContext(session_id="s1", tenant="acme")
    plugin.on_request(ctx, [{"role": "user", "content": "go"}, {"role": "tool", "tool_call_id": "c1", "content": text}])
    plugin.on_response(ctx, {"role": "assistant", "content": "Your session is ses_01JH8ZK3QWNAB4XT7R2CDE5FGH."})
    [s] = sessions(plugin)
    assert s.turns[0].messages[-1]["content"] == text
    assert s.turns[0].response == {"role": "assistant", "content": "Your session is ses_01JH8ZK3QWNAB4XT7R2CDE5FGH."}


# Quoted prompts ---------------------------------------------------------------------------------------------------
def test_a_prompt_wrapped_in_quotes_is_read_inside_them(plugin: MetaClawPlugin) -> None:
    """opencode sends ``"..."``: the memory extractor and retrieval read the words inside."""
    turn(plugin, "q1", '"Please remember that my favourite editor is Helix."', "ana")
    plugin.on_session_end(TurnContext(session_id="q1", tenant="acme"))
    assert any("Helix" in m and '"' not in m for m in memories(plugin, "ana")), memories(plugin, "ana")


# Feedback ---------------------------------------------------------------------------------------------------------
def test_feedback_that_names_no_turn_scores_the_latest_main_turn(plugin: MetaClawPlugin) -> None:
    main, _ = turn(plugin, "fb", "Plan the release notes.", "ana")
    side, _ = turn(plugin, "fb", "Write a title for this chat.", "ana", kind="side")
    plugin.on_feedback(TurnContext(session_id="fb", tenant="acme", user="ana"), -1, "wrong format")
    assert plugin.flush(30)
    assert [r["score"] for r in plugin.store.rewards(main.request_id)] == [-1.0]
    assert plugin.store.rewards(side.request_id) == []


def test_feedback_on_a_session_with_only_side_turns_scores_nothing(plugin: MetaClawPlugin) -> None:
    side, _ = turn(plugin, "fb2", "Write a title for this chat.", "ana", kind="side")
    plugin.on_feedback(TurnContext(session_id="fb2", tenant="acme", user="ana"), 1)
    assert plugin.flush(30)
    assert plugin.store.rewards(side.request_id) == []


# Boundaries a user never signals ------------------------------------------------------------------------------------
def test_a_users_new_conversation_ends_the_users_earlier_one(plugin: MetaClawPlugin) -> None:
    turn(plugin, "morning", "Please remember that my desk is 14B.", "ana")
    turn(plugin, "bens", "Something of Ben's.", "ben")
    turn(plugin, "afternoon", "Draft the weekly report.", "ana")
    by_id = {s.session_id.split("~")[0]: s for s in sessions(plugin)}
    assert by_id["morning"].ended_at is not None  # ended for learning and memory
    assert by_id["afternoon"].ended_at is None and by_id["bens"].ended_at is None  # not Ben's
    assert any("14B" in m for m in memories(plugin, "ana"))
    rows = plugin.store.queries.read(
        "SELECT end_reason FROM sessions WHERE session_id = ?", [by_id["morning"].session_id]
    )
    assert rows[0]["end_reason"] == "superseded"
    # going back to the morning session reopens it and ends nothing
    turn(plugin, "morning", "One more thing on this.", "ana")
    by_id = {s.session_id.split("~")[0]: s for s in sessions(plugin)}
    assert by_id["afternoon"].ended_at is None and by_id["morning"].ended_at is None


def test_a_host_where_users_run_sessions_in_parallel_can_keep_them_open(home: Path) -> None:
    p = MetaClawPlugin(Settings(home=home, sessions={"new_conversation_ends_earlier": False})).start()
    try:
        turn(p, "thread-1", "Summarise the incident report.", "ana")
        turn(p, "thread-2", "Draft the customer email.", "ana")
        assert all(s.ended_at is None for s in sessions(p))
    finally:
        p.stop()


def test_the_idle_sweep_ends_sessions_an_earlier_process_left_open(home: Path) -> None:
    settings = Settings(home=home, memory={"extract_every": 5})
    p = MetaClawPlugin(settings).start()
    try:
        turn(p, "left-open", "Please remember that the staging database is pg-stage-7.", "ana")
        assert p.flush(30)
        p.memory_learner._sessions.clear()  # a crash: the notes not extracted yet (1 of extract_every) are lost
    finally:
        p.stop()
    p = MetaClawPlugin(settings).start()
    try:
        assert p.flush(30)
        [s] = sessions(p)
        assert s.ended_at is None  # not idle yet
        assert not any("pg-stage-7" in m for m in memories(p, "ana"))
        later = time.time() + settings.sessions.session_idle_timeout + 120
        assert p.sweep_stored_sessions(now=later) == 1
        [s] = sessions(p)
        assert s.ended_at is not None
        assert any("pg-stage-7" in m for m in memories(p, "ana"))
        assert p.sweep_stored_sessions(now=later) == 0
    finally:
        p.stop()


def test_a_response_that_names_no_user_or_another_stays_in_its_requests_session(plugin: MetaClawPlugin) -> None:
    """Fails before: a response whose context named no user (OpenClaw's turns/output did not say the sender) was
    recorded in the session of the id as given, where every user's responses of that id met."""
    for rid, user, answered_as in (("r-ana", "ana", None), ("r-ben", "ben", None), ("r-cy", "cy", "mallory")):
        ctx = TurnContext(session_id="dm", user=user, tenant="acme", request_id=rid)
        plugin.on_request(ctx, [SYSTEM, {"role": "user", "content": f"hello from {user}"}])
        plugin.on_response(TurnContext(session_id="dm", user=answered_as, tenant="acme", request_id=rid), REPLY)
    found = sessions(plugin)
    assert sorted(t.user for s in found for t in s.turns) == ["ana", "ben", "cy"]
    assert all(len(s.turns) == 1 and s.session_id.startswith("dm~u") for s in found), [s.session_id for s in found]
    assert plugin.status()["input_problems"] == {
        "response: named another tenant or user than its request; recorded as the request's": 1
    }
