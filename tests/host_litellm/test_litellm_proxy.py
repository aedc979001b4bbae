"""The LiteLLM adapter inside a real ``litellm`` proxy process.

Two proxies start once for this module, in parallel (each start costs seconds):

* ``main``: ``litellm --config config.yaml`` with ``callbacks: ["metaclaw_litellm.callback"]``, its own
  ``METACLAW_HOME``, and a custom_auth module that gives two test keys a team each;
* ``broken``: started with ``metaclaw-plugin proxy`` (the CLI), whose skill store is deliberately
  unusable (``skills_dir`` is a regular file), to prove that the plugin fails open.

Both talk to one local OpenAI-compatible upstream (JSON and SSE) that records what it got.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import secret_corpus
from litellm_support import (
    MODEL,
    block_count,
    chat,
    close_readers,
    durable_turn,
    journal_records,
    random_key,
    reader,
    seed_home,
    sse_text,
    tenant_skill,
    upstream_request,
    user_texts,
    wait_session,
    write_proxy_dir,
)
from waiting import wait_for

from metaclaw_plugin.devtools.proxyrun import ProxyProcess, free_port, launch_proxy
from metaclaw_plugin.devtools.upstream import Upstream
from metaclaw_plugin.skillbank.render import OPEN
from metaclaw_plugin.store.trajectories import TrajectoryStore

pytestmark = pytest.mark.slow

TEAM_A_KEY = random_key("teama-")
TEAM_B_KEY = random_key("teamb-")
TENANT_SKILL = tenant_skill(
    "zorblax-preflight",
    "team:team-a",
    "Before any zorblax deployment, run the quuxify preflight and attach its report.",
    "1. Run `quuxify preflight --all`.\n2. Attach the report to the zorblax deployment ticket.",
)
MATCHING = "I need to edit and overwrite the existing settings.json config file; update two keys in it."
UNRELATED = "Who painted the ceiling of the Sistine Chapel?"
READY_TIMEOUT = 240.0


def _script(body: dict[str, Any]) -> dict[str, Any] | str:
    text = json.dumps(body.get("messages", ""), ensure_ascii=False)
    if "FAIL-500" in text:
        return {"status": 500, "error": "upstream exploded (FAIL-500)"}
    if "CALL-A-TOOL" in text:
        return {"content": None, "tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]}
    users = [m for m in body.get("messages", []) if isinstance(m, dict) and m.get("role") == "user"]
    last = users[-1].get("content") if users else ""
    last = last if isinstance(last, str) else json.dumps(last)
    return f"reply to: {last[:60]}"


class Stack:
    def __init__(
        self,
        upstream: Upstream,
        main: ProxyProcess,
        main_home: Path,
        broken: ProxyProcess,
        broken_home: Path,
        cli_out: str,
    ):
        self.upstream = upstream
        self.main = main
        self.home = main_home
        self.broken = broken
        self.broken_home = broken_home
        self.cli_out = cli_out

    @property
    def url(self) -> str:
        return self.main.base_url

    @property
    def key(self) -> str:
        return self.main.master_key


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("litellm-proxy")
    up = Upstream(script=_script).start()
    main_home = seed_home(root / "main-home", [TENANT_SKILL])
    cfg = write_proxy_dir(root / "main-proxy", up.url, custom_auth=True)
    env = dict(os.environ)
    env.pop("METACLAW_CONFIG", None)
    env.update(METACLAW_HOME=str(main_home), MC_TEST_KEYS=json.dumps({TEAM_A_KEY: "team-a", TEAM_B_KEY: "team-b"}))
    main = launch_proxy(cfg, env=env, log_path=root / "main-proxy.log", cwd=root / "main-proxy")

    # The CLI, as a user runs it, with a deliberately broken skill store.
    broken_home = root / "broken-home"
    broken_home.mkdir(mode=0o700)
    (broken_home / "not-a-folder").write_text("this file stands where the skills folder should be\n")
    benv = dict(os.environ)
    for k in ("METACLAW_CONFIG", "LITELLM_MASTER_KEY"):
        benv.pop(k, None)
    benv.update(
        METACLAW_HOME=str(broken_home), METACLAW_SKILLS_DIR=str(broken_home / "not-a-folder"), PYTHONUNBUFFERED="1"
    )
    bport = free_port()
    blog = root / "broken-proxy.log"
    cli = Path(sys.executable).with_name("metaclaw-plugin")
    with open(blog, "wb") as out:
        bproc = subprocess.Popen(
            [
                str(cli),
                "proxy",
                "--model",
                f"{MODEL}=openai/{MODEL}",
                "--api-base",
                up.url,
                "--port",
                str(bport),
                "--num-retries",
                "0",
            ],
            env=benv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    broken = ProxyProcess(bproc, "127.0.0.1", bport, "", broken_home / "litellm-proxy.yaml", blog)
    try:
        main.wait_ready(READY_TIMEOUT)
        broken.wait_ready(READY_TIMEOUT)
        cli_out = blog.read_text("utf-8", "replace")
        m = re.search(r"master key \(shown once, not stored\): (\S+)", cli_out)
        assert m, cli_out[-3000:]
        broken.master_key = m.group(1)
        yield Stack(up, main, main_home, broken, broken_home, cli_out)
    finally:
        main.stop()
        broken.stop()
        up.stop()
        close_readers()


def _sid(label: str) -> str:
    return f"{label}-{uuid.uuid4().hex[:10]}"


def _call_id(resp) -> str:
    cid = resp.headers.get("x-litellm-call-id")
    assert cid, dict(resp.headers)
    return cid


# Injection -----------------------------------------------------------------------------------------------
def test_injects_relevant_skills_once_and_nothing_for_unrelated_tasks(stack: Stack):
    tag = uuid.uuid4().hex[:8]
    r = chat(
        stack.url,
        stack.key,
        [{"role": "system", "content": "You are terse."}, {"role": "user", "content": f"{MATCHING} [{tag}]"}],
        headers={"X-Session-Id": _sid("inj")},
    )
    assert r.status_code == 200, r.text
    assert r.json()["choices"][0]["message"]["content"].startswith("reply to:")
    (body,) = upstream_request(stack.upstream, tag)
    assert block_count(body) == 1  # injected once, although the deployment hook also runs in the proxy
    system = body["messages"][0]
    assert system["role"] == "system" and system["content"].startswith("You are terse.")
    assert "### backup-before-modify" in system["content"]
    assert body["messages"][1]["content"].endswith(f"[{tag}]")  # the user's message is untouched

    tag2 = uuid.uuid4().hex[:8]
    r = chat(stack.url, stack.key, [{"role": "user", "content": f"{UNRELATED} [{tag2}]"}])
    assert r.status_code == 200, r.text
    (body,) = upstream_request(stack.upstream, tag2)
    assert block_count(body) == 0
    assert body["messages"] == [{"role": "user", "content": f"{UNRELATED} [{tag2}]"}]


def test_side_turns_are_recorded_but_not_injected(stack: Stack):
    sid, tag = _sid("side"), uuid.uuid4().hex[:8]
    r = chat(
        stack.url,
        stack.key,
        [{"role": "user", "content": f"{MATCHING} [{tag}]"}],
        headers={"X-Session-Id": sid, "X-Turn-Type": "side"},
    )
    assert r.status_code == 200, r.text
    (body,) = upstream_request(stack.upstream, tag)
    assert block_count(body) == 0
    s = wait_session(stack.home, sid, turns=1)
    assert s.turns[0].kind == "side" and s.turns[0].injected_skills == []


# Capture ---------------------------------------------------------------------------------------------
def test_interleaved_sessions_are_captured_in_order_json_and_stream(stack: Stack):
    a, b = _sid("conv-a"), _sid("conv-b")
    history: dict[str, list[dict[str, Any]]] = {a: [], b: []}
    sent: dict[str, list[str]] = {a: [], b: []}
    plan = [(a, False), (b, True), (a, True), (b, False), (a, False), (b, True)]
    for i, (sid, stream) in enumerate(plan):
        text = f"step {i} of {sid}: please back up and then modify the config file"
        history[sid].append({"role": "user", "content": text})
        r = chat(stack.url, stack.key, history[sid], headers={"X-Session-Id": sid}, stream=stream)
        assert r.status_code == 200, r.text
        reply = sse_text(r) if stream else r.json()["choices"][0]["message"]["content"]
        assert reply == f"reply to: {text[:60]}"
        history[sid].append({"role": "assistant", "content": reply})
        sent[sid].append(text)
    for sid in (a, b):
        s = wait_session(stack.home, sid, turns=3)
        assert len(s.turns) == 3
        assert user_texts(s) == sent[sid]
        assert [t.seq for t in s.turns] == [1, 2, 3]
        for t, text in zip(s.turns, sent[sid]):
            assert t.response == {"role": "assistant", "content": f"reply to: {text[:60]}"}
            assert t.error is None and t.host == "litellm-proxy" and t.tenant == "default"
            assert "backup-before-modify" in t.injected_skills
            assert t.messages[0]["role"] == "system" and OPEN in t.messages[0]["content"]  # as sent upstream
            assert t.usage and t.usage["total_tokens"] > 0  # streams too: the usage chunk is captured
        # the growing history is stored as sent, each turn with everything before it
        assert [m["role"] for m in s.turns[2].messages] == ["system", "user", "assistant", "user", "assistant", "user"]


def test_a_short_session_header_still_names_the_session(stack: Stack):
    """LiteLLM itself only maps X-Session-Id values of 8+ characters; the adapter reads the header too."""
    sid = "q" + uuid.uuid4().hex[:4]
    for text in ("first task: back up the config file", "an unrelated second conversation start"):
        r = chat(stack.url, stack.key, [{"role": "user", "content": text}], headers={"X-Session-Id": sid})
        assert r.status_code == 200, r.text
    s = wait_session(stack.home, sid, turns=2)
    assert user_texts(s) == ["first task: back up the config file", "an unrelated second conversation start"]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_turn_is_on_disk_when_the_client_has_the_response(stack: Stack, stream: bool):
    sid = _sid("durable")
    r = chat(
        stack.url,
        stack.key,
        [{"role": "user", "content": "write the report as json"}],
        headers={"X-Session-Id": sid},
        stream=stream,
    )
    assert r.status_code == 200, r.text
    rec = durable_turn(stack.home, _call_id(r))  # no waiting, no flush: the proxy wrote it before replying
    assert rec is not None, "turn not on disk when the response reached the client"
    assert rec["session_id"] == sid and rec["error"] is None


def test_tool_calls_are_captured_json_and_stream(stack: Stack):
    for stream in (False, True):
        sid = _sid("tools")
        r = chat(
            stack.url,
            stack.key,
            [{"role": "user", "content": "CALL-A-TOOL please"}],
            headers={"X-Session-Id": sid},
            stream=stream,
            body={
                "tools": [
                    {
                        "type": "function",
                        "function": {
                            "name": "read_file",
                            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
                        },
                    }
                ]
            },
        )
        assert r.status_code == 200, r.text
        (turn,) = wait_session(stack.home, sid, turns=1).turns
        assert [tc["function"]["name"] for tc in turn.tool_calls] == ["read_file"]
        assert json.loads(turn.tool_calls[0]["function"]["arguments"]) == {"path": "a.txt"}
        assert turn.response["content"] in (None, "")


# Sessions --------------------------------------------------------------------------------------------------
def test_session_done_header_and_metadata_end_the_session(stack: Stack):
    sid = _sid("done")
    msgs = [{"role": "user", "content": "first question"}]
    assert chat(stack.url, stack.key, msgs, headers={"X-Session-Id": sid}).status_code == 200
    assert wait_session(stack.home, sid, turns=1).ended_at is None
    r = chat(stack.url, stack.key, msgs, headers={"X-Session-Id": sid, "X-Session-Done": "true"}, stream=True)
    assert r.status_code == 200
    s = wait_session(stack.home, sid, turns=2, ended=True)
    assert s.ended_at is not None

    sid2 = _sid("done-md")
    r = chat(
        stack.url,
        stack.key,
        msgs,
        body={"metadata": {"session_id": sid2, "session_done": True, "session_outcome": {"success": True}}},
    )
    assert r.status_code == 200

    def ended() -> list[Any]:
        rows = reader(stack.home).queries.read("SELECT * FROM sessions WHERE session_id = ?", [sid2])
        return rows if rows and rows[0]["ended_at"] else []

    rows = wait_for(ended, 20, f"session {sid2} ended")
    assert rows[0]["end_reason"] == "host"
    assert json.loads(rows[0]["outcome"]) == {"success": True}


def test_sessions_without_an_id_are_grouped_by_conversation_per_user(stack: Stack):
    tag = uuid.uuid4().hex[:8]
    r = chat(stack.url, stack.key, [{"role": "user", "content": f"hi [{tag}]"}], body={"user": f"alice-{tag}"})
    assert r.status_code == 200
    alone = wait_for(lambda: durable_turn(stack.home, _call_id(r)), 20)
    # a user field alone names no session (``user:<name>`` could be named first by anyone): her conversation's,
    # keyed, namespaced by her
    assert alone["session_id"].startswith("fp-") and "~u" in alone["session_id"] and alone["user"] == f"alice-{tag}"

    first = {"role": "user", "content": f"Plan a trip to Lisbon [{tag}]"}
    conv = [{"role": "system", "content": "You are a travel agent."}, first]
    ids = []
    for follow in ("and Porto?", "and Faro?"):
        r = chat(stack.url, stack.key, conv)
        assert r.status_code == 200
        ids.append(_call_id(r))
        conv = conv + [
            {"role": "assistant", "content": r.json()["choices"][0]["message"]["content"]},
            {"role": "user", "content": follow},
        ]
    other = chat(stack.url, stack.key, [{"role": "user", "content": f"Something else entirely [{tag}]"}])
    recs = [durable_turn(stack.home, cid) for cid in ids + [_call_id(other)]]
    assert recs[0]["session_id"] == recs[1]["session_id"] and recs[0]["session_id"].startswith("fp-")
    assert recs[2]["session_id"] != recs[0]["session_id"]


def test_tenants_are_isolated_by_team(stack: Stack):
    sid = _sid("shared-id")  # the same session id from two teams is two sessions
    seen = {}
    for key, team in ((TEAM_A_KEY, "team-a"), (TEAM_B_KEY, "team-b")):
        tag = uuid.uuid4().hex[:8]
        r = chat(
            stack.url,
            key,
            [{"role": "user", "content": f"Start the zorblax deployment now [{tag}]"}],
            headers={"X-Session-Id": sid},
        )
        assert r.status_code == 200, r.text
        (body,) = upstream_request(stack.upstream, tag)
        seen[team] = json.dumps(body["messages"])
        s = wait_session(stack.home, sid, f"team:{team}", turns=1)
        assert s.tenant == f"team:{team}"
    assert "zorblax-preflight" in seen["team-a"]
    assert "zorblax-preflight" not in seen["team-b"]
    # keys never reach the store
    blob = b"".join(p.read_bytes() for p in [*stack.home.glob("metaclaw.db*"), *(stack.home / "journal").glob("*")])
    for key in (TEAM_A_KEY, TEAM_B_KEY, stack.key):
        assert key.encode() not in blob


# Failures ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_upstream_failure_is_a_failed_turn_and_the_client_gets_the_error(stack: Stack, stream: bool):
    sid = _sid("fail")
    r = chat(
        stack.url,
        stack.key,
        [{"role": "user", "content": "FAIL-500 now"}],
        headers={"X-Session-Id": sid},
        stream=stream,
    )
    assert r.status_code == 500, r.text
    assert "upstream exploded (FAIL-500)" in r.text
    # the same error as from a proxy whose plugin passes everything through
    ref = chat(
        stack.broken.base_url, stack.broken.master_key, [{"role": "user", "content": "FAIL-500 now"}], stream=stream
    )
    assert (ref.status_code, ref.text) == (r.status_code, r.text)
    (turn,) = wait_session(stack.home, sid, turns=1).turns
    assert turn.response is None
    assert "upstream exploded (FAIL-500)" in turn.error


# Bad input -------------------------------------------------------------------------------------------------
def _healthy(stack: Stack) -> None:
    r = chat(stack.url, stack.key, [{"role": "user", "content": "still alive?"}])
    assert r.status_code == 200, r.text


def test_huge_message_passes_through(stack: Stack):
    sid, tag = _sid("huge"), uuid.uuid4().hex[:8]
    huge = f"[{tag}] please back up the file first. " + ("lorem ipsum dolor sit amet " * 150_000)  # ~4 MB
    r = chat(stack.url, stack.key, [{"role": "user", "content": huge}], headers={"X-Session-Id": sid}, timeout=120)
    assert r.status_code == 200, r.text[:500]
    (body,) = upstream_request(stack.upstream, tag)
    assert body["messages"][-1]["content"] == huge
    (turn,) = wait_session(stack.home, sid, turns=1).turns
    assert len(json.dumps(turn.messages)) < 1_100_000  # stored truncated, not 4 MB
    _healthy(stack)


@pytest.mark.parametrize("depth", [600, 900])
def test_a_deeply_nested_request_is_answered_and_recorded(stack: Stack, depth: int):
    """A client cannot choose not to be recorded by nesting a message part deeply: the turn is stored, the deep
    part flattened to its text (redacted like any text) after a note."""
    sid, tag = _sid(f"deep{depth}"), uuid.uuid4().hex[:8]
    deep: Any = {"note": f"innermost [{tag}] password is {tag}Hunter2"}
    for _ in range(depth):
        deep = {"a": deep}
    msg = {"role": "user", "content": [{"type": "text", "text": f"please back up the file first [{tag}]"}], "x": deep}
    r = chat(stack.url, stack.key, [msg], headers={"X-Session-Id": sid}, timeout=60)
    assert r.status_code == 200, r.text[:500]
    (turn,) = wait_session(stack.home, sid, turns=1).turns
    stored = json.dumps(turn.messages)
    assert f"please back up the file first [{tag}]" in stored
    assert "flattened to its text" in stored and f"innermost [{tag}]" in stored
    assert f"{tag}Hunter2" not in stored  # the deep text is redacted like any other
    assert turn.response is not None
    _healthy(stack)


def test_non_utf8_and_malformed_payloads_get_a_clear_error(stack: Stack):
    cases = {
        "latin-1 bytes inside JSON": b'{"model": "stub-model", "messages": [{"role": "user", "content": "caf\xe9 \xff"}]}',
        "not JSON": b"\xff\xfe not json at all",
        "lone surrogate": b'{"model":"stub-model","messages":[{"role":"user","content":"half \\ud800 pair"}]}',
        "no messages": json.dumps({"model": MODEL, "temperature": 0}).encode(),
        "messages not a list": json.dumps({"model": MODEL, "messages": "hello"}).encode(),
    }
    for what, raw in cases.items():
        r = chat(stack.url, stack.key, raw=raw)
        assert r.status_code == 400, (what, r.status_code, r.text[:300])
        assert r.json()["error"]["message"], what  # an error the client can read
    assert stack.main.alive()
    _healthy(stack)


def test_tool_call_messages_with_null_content(stack: Stack):
    sid, tag = _sid("toolmsg"), uuid.uuid4().hex[:8]
    msgs = [
        {"role": "user", "content": f"Read a.txt and back it up before you modify it [{tag}]"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "hello"},
    ]
    r = chat(
        stack.url,
        stack.key,
        msgs,
        headers={"X-Session-Id": sid},
        body={"tools": [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]},
    )
    assert r.status_code == 200, r.text
    (body,) = upstream_request(stack.upstream, tag)
    assert block_count(body) == 1
    # LiteLLM itself drops ``content: null`` from the assistant message; everything else is as sent
    assert body["messages"][1:] == [{k: v for k, v in m.items() if v is not None} for m in msgs]
    (turn,) = wait_session(stack.home, sid, turns=1).turns
    assert turn.messages[2]["content"] is None and turn.messages[2]["tool_calls"][0]["id"] == "call_1"


# Fail open, and the CLI ---------------------------------------------------------------------------------------
def test_cli_proxy_with_a_broken_skill_store_passes_requests_through(stack: Stack):
    out = stack.cli_out
    assert out.count(stack.broken.master_key) == 1  # printed once
    cfg = stack.broken_home / "litellm-proxy.yaml"
    assert stat.S_IMODE(cfg.stat().st_mode) == 0o600
    text = cfg.read_text()
    assert "metaclaw_litellm.callback" in text and stack.broken.master_key not in text
    for stream in (False, True):
        tag = uuid.uuid4().hex[:8]
        msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": f"{MATCHING} [{tag}]"}]
        r = chat(
            stack.broken.base_url,
            stack.broken.master_key,
            msgs,
            stream=stream,
            headers={"X-Session-Id": _sid("broken")},
        )
        assert r.status_code == 200, r.text
        reply = sse_text(r) if stream else r.json()["choices"][0]["message"]["content"]
        assert reply.startswith("reply to:")
        (body,) = upstream_request(stack.upstream, tag)
        assert body["messages"] == msgs  # unmodified
    assert "could not start" in stack.broken.log_tail(200_000)  # logged, loudly
    assert stack.broken.alive()


# Last: kill -9 right after the responses; nothing completed is lost ------------------------------------------
def test_secrets_in_session_ids_and_users_never_reach_the_home(stack: Stack):
    """A key in X-Session-Id, metadata.session_id or the body's user is stored as a keyed hash: the turns of that
    session still join, and no file under the home holds the key (issue 26)."""
    corpus = {c.kind: c.secrets[0] for c in secret_corpus.build()}
    planted = {"header": corpus["github_pat_classic"], "metadata": corpus["slack_bot"], "user": corpus["stripe_live"]}
    tag = uuid.uuid4().hex[:8]
    msgs = [{"role": "user", "content": f"hello [{tag}]"}]
    hdr = [chat(stack.url, stack.key, msgs, headers={"X-Session-Id": f"s-{planted['header']}"}) for _ in range(2)]
    md = chat(stack.url, stack.key, msgs, body={"metadata": {"session_id": f"m-{planted['metadata']}"}})
    usr = chat(stack.url, stack.key, [{"role": "user", "content": f"other [{tag}]"}], body={"user": planted["user"]})
    assert all(r.status_code == 200 for r in [*hdr, md, usr])
    recs = [wait_for(lambda r=r: durable_turn(stack.home, _call_id(r)), 20) for r in [*hdr, md, usr]]
    assert recs[0]["session_id"] == recs[1]["session_id"] and recs[0]["session_id"].startswith("redacted-")
    assert recs[2]["session_id"].startswith("redacted-")
    # a user alone names no session: the conversation's (keyed), namespaced by the user's keyed hash
    assert recs[3]["session_id"].startswith("fp-") and recs[3]["user"].startswith("redacted-")
    wait_session(stack.home, recs[0]["session_id"], turns=2)
    for path in stack.home.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for field, secret in planted.items():
                assert not any(p.encode() in data for p in secret_corpus.pieces(secret)), f"{field} in {path}"


def test_zz_sigkill_loses_no_completed_turn(stack: Stack):
    sid = _sid("kill")
    ids = []
    for i in range(4):
        r = chat(
            stack.url,
            stack.key,
            [{"role": "user", "content": f"turn {i} before the crash"}],
            headers={"X-Session-Id": sid},
            stream=bool(i % 2),
        )
        assert r.status_code == 200
        ids.append(_call_id(r))
    stack.main.kill()  # SIGKILL to the proxy's process group: no shutdown code runs
    assert not stack.main.alive()
    close_readers()
    store = TrajectoryStore(stack.home / "metaclaw.db")
    store.open()  # replays the journal of the dead process
    try:
        s = store.get_session(sid)
        assert s is not None and [t.turn_id for t in s.turns] == ids
    finally:
        store.close()
    assert journal_records(stack.home) == []  # replayed and removed
