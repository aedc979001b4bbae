"""`metaclaw-plugin mcp`, driven by the `mcp` SDK's own client: over stdio (the command as a real subprocess) and
over streamable HTTP (the token required on every request). Every tool, tenant isolation, the trust of learned
skills, secrets, bad input, and the MCP session recorded as a plugin session (turns, explicit reward, end)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from cli_support import cli_command
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from openclaw_support import stop_process
from waiting import exited, wait_for

from metaclaw_plugin import MetaClawPlugin, Settings
from metaclaw_plugin.infra.procs import free_port
from metaclaw_plugin.mcp_server import McpTools, Scope, ToolRefused
from metaclaw_plugin.skillbank.files import SkillStore
from metaclaw_plugin.types import Skill

TOOLS = {"skills_search", "skill_get", "memory_search", "memory_store", "memory_forget", "feedback"}
TASK = "Deploy the billing service with a blue-green rollout"
SECRET = "ghp_" + "Zq7Lm2Xv9Rt4Wb8Nc3Hd6Jk1Pf5Sg0Ty2Ue4"  # a GitHub token's shape, made up


def seed_library(home: Path) -> None:
    """A shared skill, each tenant's promoted learned skill, acme's unpromoted draft and acme's skill on trial."""
    store = SkillStore(Settings(home=home).skills_path)

    def skill(name: str, description: str, body: str, **kw: Any) -> Skill:
        return Skill(name=name, description=description, body=body, **kw)

    store.add_batch(
        [
            skill("pg-migrations", "Write a PostgreSQL schema migration safely", "Use alembic; lock timeouts."),
            skill("css-grid", "Lay out a page with CSS grid", "grid-template-areas for named regions."),
            skill(
                "acme-deploy",
                "Deploy the acme billing service with a blue-green rollout",
                "Acme: drain the blue pool before switching the billing router.",
                origin="evolved",
                tenant="acme",
            ),
            skill(
                "globex-deploy",
                "Deploy the globex billing service with a blue-green rollout",
                "Globex: run the billing smoke suite on green first.",
                origin="evolved",
                tenant="globex",
            ),
            skill(
                "acme-draft",
                "Deploy billing service blue-green rollout hotfix shortcut",
                "Skip the smoke tests when deploying billing.",
                origin="evolved",
                tenant="acme",
                status="quarantined",
            ),
            skill(
                "acme-trial",
                "Billing service blue-green rollout: check the deploy dashboards",
                "Watch the billing error rate for ten minutes after the rollout.",
                origin="evolved",
                tenant="acme",
                status="quarantined",
                extra_metadata={"promotion": "shadow"},
            ),
        ],
        actor="test",
    )


def server_env(home: Path) -> dict[str, str]:
    """What the server process needs: its home, this checkout's code, keyword retrieval, every trial served."""
    return {
        "METACLAW_HOME": str(home),
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        "METACLAW_RETRIEVAL__MODE": "keyword",
        "METACLAW_EVOLUTION__SHADOW_FRACTION": "0.99999999",  # the largest it takes (< 1)
        "METACLAW_LEARNING__MODEL": os.environ.get("METACLAW_LEARNING__MODEL", "host"),  # the tests' (conftest)
    }


def stdio(home: Path, *args: str) -> Client:
    cmd = cli_command()
    params = StdioServerParameters(command=cmd[0], args=[*cmd[1:], "mcp", *args], env=server_env(home))
    return Client(params, read_timeout_seconds=60)


def data(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


def error_text(result: Any) -> str:
    assert result.is_error, f"expected an MCP tool error, got {result.content}"
    return result.content[0].text


def run(fn: Any) -> Any:
    return anyio.run(fn)


@pytest.fixture
def library(home: Path) -> Path:
    seed_library(home)
    return home


def test_stdio_serves_every_tool_and_records_the_session(library: Path) -> None:
    home = library
    seen: dict[str, Any] = {}

    async def session() -> None:
        async with stdio(home, "--tenant", "acme", "--user", "ana", "--session", "task-42") as c:
            assert {t.name for t in (await c.list_tools()).tools} == TOOLS
            found = data(await c.call_tool("skills_search", {"task": TASK}))
            seen["found"] = found
            by_name = {s["name"]: s for s in found["skills"]}
            assert found["session_id"] == "task-42"
            assert by_name["acme-deploy"]["trusted"] is True and by_name["acme-deploy"]["origin"] == "evolved"
            assert by_name["acme-trial"]["trusted"] is False  # on trial: learned, not promoted
            assert "acme-draft" not in by_name and "globex-deploy" not in by_name
            assert "<metaclaw-skills>" in found["block"] and "drain the blue pool" in found["block"]

            full = data(await c.call_tool("skill_get", {"name": "acme-deploy"}))
            assert full["body"].startswith("Acme: drain the blue pool") and full["trusted"] is True
            assert data(await c.call_tool("skill_get", {"name": "acme-trial"}))["trusted"] is False
            assert data(await c.call_tool("skill_get", {"name": "pg-migrations"}))["trusted"] is True  # shared
            for hidden in ("acme-draft", "globex-deploy", "no-such-skill"):
                assert "no skill" in error_text(await c.call_tool("skill_get", {"name": hidden}))

            kept = data(await c.call_tool("memory_store", {"text": "I prefer blue-green deploys for billing"}))
            assert kept["status"] == "active"
            hits = data(await c.call_tool("memory_search", {"query": "blue-green billing deploys"}))["memories"]
            assert [m["id"] for m in hits] == [kept["id"]]
            # a statement holding a credential is refused, in passing too, and in words: the error names the kind,
            # never the value (one definition: what the redactor finds; a memory never keeps one, even redacted)
            refused = error_text(await c.call_tool("memory_store", {"text": f"my github token is {SECRET}"}))
            assert "credential (github token)" in refused and SECRET not in refused
            passing = error_text(await c.call_tool("memory_store", {"text": f"The changelog quotes {SECRET} verbatim"}))
            assert "credential (github token)" in passing and SECRET not in passing
            worded = error_text(
                await c.call_tool("memory_store", {"text": "the wifi passphrase is purple otter lagoon"})
            )
            assert "credential (passphrase)" in worded and "otter" not in worded

            gone = data(await c.call_tool("memory_forget", {"about": "blue-green deploys billing"}))["forgotten"]
            assert gone == [kept["id"]]
            assert data(await c.call_tool("memory_search", {"query": "blue-green billing deploys"}))["memories"] == []

            fb = data(await c.call_tool("feedback", {"score": 1, "text": "the rollout went fine", "final": True}))
            assert fb["ended"] is True and fb["session_id"] == "task-42"
            seen["feedback"] = fb

    run(session)

    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        s = wait_for(lambda: p.read_session("task-42", "acme"), 20, "the MCP session in the store")
        assert s.host == "mcp" and s.ended_at is not None and s.outcome and s.outcome["success"] is True
        main = [t for t in s.turns if t.kind == "main"]
        assert len(main) == 1 and main[0].turn_id == seen["feedback"]["turn_id"]
        assert {"acme-deploy", "acme-trial"} <= set(main[0].injected_skills)
        assert main[0].messages[-1]["content"] == TASK and main[0].user == "ana"
        # every call that did something is a turn, in order; refused calls and feedback are not
        calls = [(t.kind, (t.response or {}).get("name")) for t in s.turns]
        assert calls == [
            ("main", "skills_search"),
            *[("side", "skill_get")] * 3,
            *[("side", "memory_store"), ("side", "memory_search")],
            *[("side", "memory_forget"), ("side", "memory_search")],
        ]
        rewards = wait_for(lambda: p.store.rewards(main[0].turn_id), 20, "the explicit reward")
        assert [(r["source"], r["score"]) for r in rewards] == [("explicit", 1.0)]
    finally:
        p.stop()
    leaked = [
        f
        for f in home.rglob("*")
        if f.is_file() and (SECRET.encode() in f.read_bytes() or b"otter lagoon" in f.read_bytes())
    ]
    assert leaked == [], f"the secret was stored raw in {leaked}"


def test_stdio_tenants_never_see_each_others_skills_or_memories(library: Path) -> None:
    home = library

    async def both() -> None:
        async with stdio(home, "--tenant", "acme") as acme, stdio(home, "--tenant", "globex") as globex:
            mine = data(await acme.call_tool("memory_store", {"text": "Acme bills customers in euros"}))
            theirs = data(await globex.call_tool("skills_search", {"task": TASK}))
            names = {s["name"] for s in theirs["skills"]}
            assert "globex-deploy" in names and not {n for n in names if n.startswith("acme-")}
            assert "acme" not in theirs["block"].casefold()
            assert "no skill" in error_text(await globex.call_tool("skill_get", {"name": "acme-deploy"}))
            assert "no skill" in error_text(await globex.call_tool("skill_get", {"name": "acme-trial"}))
            found = data(await globex.call_tool("memory_search", {"query": "acme bills customers euros"}))
            assert found["memories"] == []
            refused = error_text(await globex.call_tool("memory_forget", {"memory_id": mine["id"]}))
            assert "no memory" in refused
            # the tenant's own memory is untouched by the refused forget
            still = data(await acme.call_tool("memory_search", {"query": "acme bills customers euros"}))
            assert [m["id"] for m in still["memories"]] == [mine["id"]]
            # a tool argument cannot pick the tenant: the scope is not an argument, an extra one is ignored
            sneaky = await globex.call_tool("memory_search", {"query": "euros", "tenant": "acme", "user": "x"})
            assert data(sneaky)["memories"] == []

    run(both)


BAD_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("skills_search", {}, "task"),
    ("skills_search", {"task": ""}, "task"),
    ("skills_search", {"task": "   "}, "blank"),
    ("skills_search", {"task": "deploy\x00now"}, "NUL"),
    ("skills_search", {"task": "x" * 20_001}, "task"),
    ("skills_search", {"task": ["deploy"]}, "task"),
    ("skill_get", {"name": "bad\nname"}, "control"),
    ("memory_search", {"query": "deploys", "limit": "many"}, "limit"),
    ("memory_search", {"query": "deploys", "limit": 0}, "limit"),
    ("memory_store", {"text": "I like tea", "kind": "gossip"}, "kind"),
    ("memory_forget", {}, "say which memory"),
    ("feedback", {"score": 5}, "score"),
    ("feedback", {"score": "great"}, "score"),
    ("feedback", {"score": 1, "text": 7}, "text"),
]


def test_bad_input_is_a_clear_mcp_error_and_the_server_goes_on(library: Path) -> None:
    home = library

    async def bad() -> None:
        async with stdio(home, "--tenant", "acme") as c:
            # nothing to score before the session did anything
            assert "skills_search" in error_text(await c.call_tool("feedback", {"score": 1}))
            for tool, args, says in BAD_CALLS:
                text = error_text(await c.call_tool(tool, args))
                assert says in text, (tool, args, text)
            assert "Unknown tool" in error_text(await c.call_tool("no_such_tool", {}))
            ok = data(await c.call_tool("skills_search", {"task": TASK}))  # still serving
            assert ok["skills"]

    run(bad)


@contextlib.contextmanager
def http_server(home: Path, tmp: Path, *args: str) -> Any:
    """``metaclaw-plugin mcp --http`` as a subprocess; yields (url, token) once it answers."""
    port = free_port()
    log = tmp / "mcp-http.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [*cli_command(), "mcp", "--http", "--port", str(port), *args],
            env={**os.environ, **server_env(home)},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        wait_for(lambda: f":{port}/mcp" in log.read_text(), 60, "the MCP server's start line", stop=exited(proc, log))
        token = (home / "server.token").read_text().strip()
        wait_for(lambda: post(url, {}) is not None, 30, "the MCP port", ignore=OSError, stop=exited(proc, log))
        yield url, token
    finally:
        stop_process(proc)


def post(url: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> tuple[int, str]:
    req = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **(headers or {}),
        },
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


@contextlib.asynccontextmanager
async def http_client(url: str, headers: dict[str, str]) -> AsyncIterator[Client]:
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(url, http_client=http), read_timeout_seconds=60) as c,
    ):
        yield c


def test_http_needs_the_token_on_every_request_and_serves_the_tools(library: Path, tmp_path: Path) -> None:
    home = library
    refused = subprocess.run(
        [*cli_command(), "mcp", "--http", "--host", "0.0.0.0", "--port", str(free_port())],
        env={**os.environ, **server_env(home)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2 and "--allow-remote" in refused.stderr

    with http_server(home, tmp_path, "--tenant", "acme") as (url, token):
        init = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": token}):
            status, text = post(url, init, headers)
            assert status == 401, (headers, status, text)
        assert "Authorization" in post(url, init)[1]

        async def anonymous() -> None:
            async with http_client(url, {}) as c:
                await c.list_tools()

        with pytest.raises(BaseExceptionGroup) as no_token:  # the SDK's own client is turned away too
            run(anonymous)
        assert no_token.value.subgroup(MCPError) is not None, no_token.value

        seen: dict[str, Any] = {}

        async def session() -> None:
            auth = {"Authorization": f"Bearer {token}", "X-Session-Id": "proxy-run-7"}
            async with http_client(url, auth) as c:
                assert {t.name for t in (await c.list_tools()).tools} == TOOLS
                found = data(await c.call_tool("skills_search", {"task": TASK}))
                assert found["session_id"] == "proxy-run-7"  # joins the session the proxy records
                names = {s["name"] for s in found["skills"]}
                assert "acme-deploy" in names and "globex-deploy" not in names
                assert data(await c.call_tool("skill_get", {"name": "acme-deploy"}))["trusted"] is True
                kept = data(await c.call_tool("memory_store", {"text": "Acme ships on Tuesdays"}))
                hits = data(await c.call_tool("memory_search", {"query": "acme ships tuesdays"}))["memories"]
                assert [m["id"] for m in hits] == [kept["id"]]
                assert data(await c.call_tool("memory_forget", {"memory_id": kept["id"]}))["forgotten"] == [kept["id"]]
                assert "limit" in error_text(await c.call_tool("memory_search", {"query": "x", "limit": 99}))
                seen["fb"] = data(await c.call_tool("feedback", {"score": -1, "text": "the rollout failed"}))

        run(session)
        assert seen["fb"]["session_id"] == "proxy-run-7" and seen["fb"]["ended"] is False

    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        s = wait_for(lambda: p.read_session("proxy-run-7", "acme"), 20, "the HTTP session in the store")
        main = [t for t in s.turns if t.kind == "main"]
        assert s.host == "mcp" and [t.turn_id for t in main] == [seen["fb"]["turn_id"]]
        rewards = wait_for(lambda: p.store.rewards(main[0].turn_id), 20, "the explicit reward")
        assert [(r["source"], r["score"]) for r in rewards] == [("explicit", -1.0)]
    finally:
        p.stop()


def test_shared_learned_skills_reach_other_tenants_but_their_conventions_never(
    library: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With sessions.share_learned_skills a tenant is served other tenants' learned procedures, as on the request
    path, but never their conventions (how one team wants work done); skill_get follows the same rule."""
    home = library
    SkillStore(Settings(home=home).skills_path).add_batch(
        [
            Skill(
                name="globex-french-commits",
                description="Write commit messages in French",
                body="Globex writes every commit message in French.",
                origin="evolved",
                tenant="globex",
                kind="convention",
            )
        ],
        actor="test",
    )
    monkeypatch.setenv("METACLAW_SESSIONS__SHARE_LEARNED_SKILLS", "true")
    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        acme = McpTools(p, Scope("acme"))
        assert acme.skill_get("globex-deploy")["trusted"] is True
        with pytest.raises(ToolRefused, match="no skill"):
            acme.skill_get("globex-french-commits")
        names = {s["name"] for s in acme.skills_search("Write the commit messages for this change")["skills"]}
        assert "globex-french-commits" not in names
        globex = McpTools(p, Scope("globex"))
        assert "globex-french-commits" in {
            s["name"] for s in globex.skills_search("Write the commit message")["skills"]
        }
    finally:
        p.stop()


def test_feedback_scores_the_sessions_main_turn_even_when_this_server_saw_none(library: Path) -> None:
    """Issue 42: a server process that has seen no skills_search of the session (another process did it: a
    restarted HTTP server, the proxy in the same session) scores the session's latest main turn, never the side turn
    a memory call made; a session with only side turns is refused, with the reason."""
    p = MetaClawPlugin(Settings(home=library)).start()
    try:
        McpTools(p, Scope("acme", "ana", "task-7")).skills_search(TASK)
        later = McpTools(p, Scope("acme", "ana", "task-7"))  # its own state, as another process has
        later.memory_store("I prefer blue-green deploys for billing")
        got = later.feedback(-1, "it drained the wrong pool")
        assert p.flush(30)
        [row] = p.store.list_sessions(10, "acme")
        s = p.store.get_session(row["session_id"], "acme")
        assert s is not None
        main = [t.turn_id for t in s.turns if t.kind == "main"]
        side = [t.turn_id for t in s.turns if t.kind == "side"]
        assert len(main) == 1 and len(side) == 1 and got["turn_id"] == main[0]
        assert [r["score"] for r in p.store.rewards(main[0])] == [-1.0]
        assert p.store.rewards(side[0]) == []

        only_side = McpTools(p, Scope("acme", "ana", "task-8"))
        only_side.memory_search("billing deploys")
        with pytest.raises(ToolRefused, match="skills_search"):
            only_side.feedback(1)
    finally:
        p.stop()
