"""The OpenClaw plugin against a real OpenClaw gateway (openclaw@2026.9.6 on Node 24).

One gateway for the module, started the way a user would: ``openclaw gateway run --bind loopback`` with an
isolated HOME/state/config, the plugin loaded from ``plugins.load.paths``, and a stub OpenAI-compatible
upstream that answers in SSE. The plugin's service starts ``metaclaw-plugin serve`` itself (autoStart) with
a temp ``METACLAW_HOME`` seeded with the bundled starter skills. Requests go through the gateway's
``/v1/chat/completions``.

Skips (with the reason) only when Node 24 / openclaw are not installed: run ``bash .ci/install_openclaw.sh``.
The plain-JS checks at the end need only a ``node`` binary.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from openclaw_support import (
    PLUGIN_DIR,
    Gateway,
    Sidecar,
    StubUpstream,
    find_openclaw,
    free_port,
    metaclaw_cli,
    reply_text,
    sidecar_get,
    system_node,
    system_text,
    user_text,
    wait_sidecar,
)
from waiting import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

BLOCK_MARK = "<metaclaw-skills>"


def _install():
    found, why = find_openclaw(install=os.environ.get("CI") == "true")
    return found, why


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    install, why = _install()
    if install is None:
        pytest.skip(f"OpenClaw gateway tests need Node 24 and openclaw@2026.9.6: {why}")
    root = tmp_path_factory.mktemp("openclaw")
    home = root / "metaclaw-home"
    port = free_port()
    upstream = StubUpstream(reply="stub reply").start()
    gw = Gateway(
        install,
        root / "gw",
        upstream.base_url,
        plugin_config={
            "url": f"http://127.0.0.1:{port}",
            "home": str(home),
            "command": metaclaw_cli(),
            "autoStart": True,
            "timeoutMs": 2000,
        },
        tools={"toolSearch": False},  # direct schemas: the scripted upstream calls the memory tools by name
    )
    gw.root.mkdir(parents=True, exist_ok=True)
    try:
        gw.start(timeout=120)
        status = wait_sidecar(f"http://127.0.0.1:{port}", home / "server.token", timeout=30)
    except BaseException:
        print(gw.log_tail())
        gw.stop()
        upstream.stop()
        raise
    ctx = {
        "install": install,
        "gw": gw,
        "up": upstream,
        "home": home,
        "port": port,
        "url": f"http://127.0.0.1:{port}",
        "sidecar_pid": status["pid"],
    }
    yield ctx
    gw.stop()
    upstream.stop()
    pid = ctx.get("restarted")
    if pid is not None:
        pid.stop()


def _sidecar(env) -> Any:
    return lambda path: sidecar_get(env["url"], env["home"] / "server.token", path)


def _wait(pred, timeout: float, what: str, interval: float = 0.1):
    return wait_for(pred, timeout, what, interval)


def _stub_request_for(up: StubUpstream, marker: str) -> dict[str, Any]:
    for body in reversed(up.snapshot()):
        if marker in user_text(body):
            return body
    raise AssertionError(f"the stub never saw a request with {marker!r}")


def _session_turns(get, session_id: str) -> list[dict[str, Any]]:
    try:
        return get(f"/v1/sessions/{session_id}")["turns"]
    except Exception:
        return []


def _turn_user_text(turn: dict[str, Any]) -> str:
    parts = []
    for m in turn["messages"]:
        if m.get("role") == "user" and isinstance(m.get("content"), str):
            parts.append(m["content"])
    return "\n".join(parts)


# ------------------------------------------------------------------------------------------------
# Against the gateway
# ------------------------------------------------------------------------------------------------
def test_plugin_loaded_and_sidecar_started_by_its_service(env) -> None:
    st = _sidecar(env)("/v1/status")
    assert st["started"] is True
    assert st["skills"]["active"] > 0  # the bundled starter library was seeded
    # The sidecar is the plugin's child: a `metaclaw-plugin serve` process started by the gateway.
    cmdline = Path(f"/proc/{st['pid']}/cmdline").read_bytes().split(b"\0")
    assert b"serve" in cmdline


def test_matching_task_gets_the_skill_block(env) -> None:
    gw, up = env["gw"], env["up"]
    marker = "m-skill-1"
    r = gw.chat(f"back up the json file before editing it ({marker})", user="skill-user", timeout=120)
    assert reply_text(r).startswith("stub reply")
    body = _stub_request_for(up, marker)
    sys_text = system_text(body)
    assert BLOCK_MARK in sys_text, sys_text[:2000]
    assert "backup-before-modify" in sys_text
    # prependSystemContext: the block comes before OpenClaw's own system prompt.
    assert sys_text.index(BLOCK_MARK) < sys_text.index("You are a personal assistant")


def test_unrelated_task_gets_no_block_and_turn_is_captured(env) -> None:
    gw, up = env["gw"], env["up"]
    marker = "m-plain-1"
    gw.chat(f"zxqv {marker}", user="plain-user", timeout=60)
    body = _stub_request_for(up, marker)
    # Whatever the retrieval decides for nonsense, the captured turn records exactly what was injected.
    get = _sidecar(env)

    def find():
        for s in get("/v1/sessions")["sessions"]:
            for t in _session_turns(get, s["session_id"]):
                if marker in _turn_user_text(t):
                    return t
        return None

    turn = _wait(find, 15, "the captured turn")
    assert turn["model"] == "stub/stub-model"
    assert turn["response"]["content"].startswith("stub reply")
    assert turn["messages"][0]["role"] == "system"
    assert (BLOCK_MARK in system_text(body)) == bool(turn["injected_skills"])


def _tool_results(body: dict[str, Any]) -> list[str]:
    out = []
    for m in body.get("messages") or []:
        if m.get("role") == "tool":
            c = m.get("content")
            out.append(c if isinstance(c, str) else json.dumps(c))
    return out


def test_memory_tools_store_for_the_sender_and_a_later_session_gets_it(env) -> None:
    gw, up = env["gw"], env["up"]
    fact = "The release train of Project Heron leaves on Thursdays at 14:00."

    def script(body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]] | None:
        if _tool_results(body):
            return None  # the tool ran: answer with text
        text = user_text(body)
        if "m-mem-store" in text:
            return [("memory_store", {"text": fact, "kind": "fact"})]
        if "m-mem-search" in text:
            return [("memory_search", {"query": "Project Heron release train"})]
        return None

    up.tool_calls = script
    try:
        gw.chat("Keep this for later, please (m-mem-store).", user="mem-ana", timeout=120)
        body = _stub_request_for(up, "m-mem-store")  # the last request of that turn: it carries the tool result
        stored = [r for r in _tool_results(body) if "Thursdays" in r]
        assert stored, (_tool_results(body)[:2], " ".join(t["function"]["name"] for t in body.get("tools") or []))
        memory_id = json.loads(stored[0])["id"]

        get = _sidecar(env)
        mine = get("/v1/memory?tenant=default&user=mem-ana")["memories"]
        assert [m["id"] for m in mine if m["kind"] != "summary"] == [memory_id]  # filed under the sender

        # A later session of the same sender (the first one deleted, as a user does with /new): the memory is in
        # the block, and memory_search finds it.
        delete = [str(env["install"].node_bin / "node"), str(env["install"].openclaw), "sessions", "delete"]
        r = subprocess.run(
            [*delete, "agent:main:openai-user:mem-ana", "--yes", "--json"],
            env=gw.env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert r.returncode == 0, r.stdout + r.stderr
        gw.chat("When does the Project Heron release train leave? (m-mem-search-1)", user="mem-ana", timeout=60)
        body = _stub_request_for(up, "m-mem-search-1")
        assert "Thursdays" in system_text(body)
        assert any(memory_id in r for r in _tool_results(body))

        # Another sender gets neither.
        gw.chat("When does the Project Heron release train leave? (m-mem-search-2)", user="mem-bob", timeout=60)
        body = _stub_request_for(up, "m-mem-search-2")
        assert "Thursdays" not in system_text(body)
        assert _tool_results(body) and not any("Thursdays" in r for r in _tool_results(body))
    finally:
        up.tool_calls = None


def test_two_concurrent_sessions_stay_unmixed(env) -> None:
    gw = env["gw"]
    get = _sidecar(env)
    users = {"alice": "alice-only", "bob": "bob-only"}
    errors: list[BaseException] = []

    def talk(user: str) -> None:
        try:
            for i in range(3):
                gw.chat(f"back up the json file before editing it [{users[user]}-{i}]", user=f"conc-{user}", timeout=90)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=talk, args=(u,)) for u in users]
    for t in threads:
        t.start()
    for t in threads:
        t.join(180)
    assert not errors, errors

    def sessions_by_user():
        found: dict[str, list[dict[str, Any]]] = {}
        for s in get("/v1/sessions?limit=200")["sessions"]:
            turns = _session_turns(get, s["session_id"])
            for u, tag in users.items():
                if any(tag in _turn_user_text(t) for t in turns):
                    found.setdefault(u, []).append({"session": s, "turns": turns})
        if all(len(v) == 1 and len(v[0]["turns"]) == 3 for v in found.values()) and len(found) == 2:
            return found
        return None

    found = _wait(sessions_by_user, 20, "3 captured turns in each of the two sessions")
    assert found["alice"][0]["session"]["session_id"] != found["bob"][0]["session"]["session_id"]
    for u, tag in users.items():
        other = users["bob" if u == "alice" else "alice"]
        turns = found[u][0]["turns"]
        assert [t["seq"] for t in turns] == [1, 2, 3]
        for i, t in enumerate(turns):
            text = _turn_user_text(t)
            assert f"{tag}-{i}" in text  # the turn's own prompt, in order
            assert other not in text and other not in json.dumps(t["response"])
            assert "backup-before-modify" in t["injected_skills"]
            assert t["host"] == "openclaw" and t["kind"] == "main"
            assert t["usage"] and t["usage"].get("total_tokens") == 14
    env["alice_session"] = found["alice"][0]["session"]["session_id"]


def test_session_end_reaches_the_sidecar(env) -> None:
    sid = env.get("alice_session")
    if sid is None:
        pytest.skip("needs the session of the concurrency test")
    gw, install = env["gw"], env["install"]
    r = subprocess.run(
        [
            str(install.node_bin / "node"),
            str(install.openclaw),
            "sessions",
            "delete",
            "agent:main:openai-user:conc-alice",
            "--yes",
            "--json",
        ],
        env=gw.env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    get = _sidecar(env)

    def ended():
        for s in get("/v1/sessions?limit=200")["sessions"]:
            if s["session_id"] == sid and s["ended_at"]:
                return s
        return None

    s = _wait(ended, 15, "the session end")
    assert s["end_reason"] == "deleted"
    # Bob's session is still open.
    bob = [x for x in get("/v1/sessions?limit=200")["sessions"] if x["session_id"] != sid and x["turns"] == 3]
    assert bob and all(not x["ended_at"] for x in bob)


def _stop_the_sidecar(env) -> None:
    pid = _sidecar(env)("/v1/status")["pid"]
    os.kill(pid, signal.SIGTERM)  # the sidecar the plugin started (or one started by hand); we stop it by its pid
    _wait(lambda: not Path(f"/proc/{pid}").exists() or b"zombie" in _proc_state(pid), 15, "the sidecar to exit")


def _start_the_sidecar_by_hand(env) -> None:
    """On the same port and home: the plugin picks it up on the next turn (the fixture stops it at the end)."""
    env["restarted"] = Sidecar(env["home"], port=env["port"]).start()


def _reply_with_the_sidecar_down(env, marker: str) -> float:
    """One turn while the sidecar is down: the stub's reply, no block; the seconds the reply took."""
    t0 = time.monotonic()
    r = env["gw"].chat(f"back up the json file before editing it ({marker})", user="down-user", timeout=60)
    took = time.monotonic() - t0
    assert reply_text(r).startswith("stub reply")
    assert BLOCK_MARK not in system_text(_stub_request_for(env["up"], marker))
    return took


def test_sidecar_down_does_not_break_the_reply(env) -> None:
    _stop_the_sidecar(env)
    for i in range(2):
        _reply_with_the_sidecar_down(env, f"m-down-{i}")
    _start_the_sidecar_by_hand(env)
    marker = "m-back-1"
    env["gw"].chat(f"back up the json file before editing it ({marker})", user="down-user", timeout=60)
    assert BLOCK_MARK in system_text(_stub_request_for(env["up"], marker))


@pytest.mark.perf
def test_a_reply_with_the_sidecar_down_takes_under_15_s(env) -> None:
    _stop_the_sidecar(env)
    try:
        for i in range(2):
            took = _reply_with_the_sidecar_down(env, f"m-down-timed-{i}")
            assert took < 15, f"the reply took {took:.1f}s with the sidecar down"
    finally:
        _start_the_sidecar_by_hand(env)


def _proc_state(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/status").read_bytes()
    except OSError:
        return b"zombie"


# ------------------------------------------------------------------------------------------------
# The plugin module in plain Node, with a fake OpenClaw api (no gateway needed)
# ------------------------------------------------------------------------------------------------
NODE_HARNESS = textwrap.dedent(
    r"""
    import http from "node:http";
    import fs from "node:fs";
    import os from "node:os";
    import path from "node:path";
    import { pathToFileURL } from "node:url";

    const plugin = (await import(pathToFileURL(process.argv[2]).href)).default;
    const seen = [];
    const server = http.createServer((req, res) => {
      let b = "";
      req.on("data", (c) => (b += c));
      req.on("end", () => {
        seen.push({ path: req.url, auth: req.headers.authorization, body: b ? JSON.parse(b) : null });
        res.setHeader("Content-Type", "application/json");
        if (req.url === "/v1/skills") res.end(JSON.stringify({ block: "<metaclaw-skills>X</metaclaw-skills>", skills: ["x"], generation: 3 }));
        else res.end(JSON.stringify({ ok: true }));
      });
    });
    await new Promise((r) => server.listen(0, "127.0.0.1", r));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mc-"));
    fs.writeFileSync(path.join(dir, "server.token"), "tok\n");

    function load(cfg, mode = "full") {
      const hooks = {}; const services = []; const logs = [];
      const api = {
        registrationMode: mode, pluginConfig: cfg,
        logger: { info: (m) => logs.push(["info", m]), warn: (m) => logs.push(["warn", m]), error: (m) => logs.push(["error", m]) },
        on: (name, fn, opts) => { hooks[name] = { fn, opts }; },
        registerService: (s) => services.push(s),
      };
      plugin.register(api);
      return { hooks, services, logs };
    }
    const out = {};
    const good = { url: `http://127.0.0.1:${server.address().port}`, tokenFile: path.join(dir, "server.token"), autoStart: false };

    // Every live registration wires the hooks (OpenClaw dispatches turn hooks from a discovery one);
    // only the full one registers the service; metadata-only loads register nothing.
    const disc = load(good, "discovery");
    out.discovery = { hooks: Object.keys(disc.hooks).length, services: disc.services.length };
    const meta = load(good, "cli-metadata");
    out.cliMetadata = { hooks: Object.keys(meta.hooks).length, services: meta.services.length };

    const p = load(good);
    out.hooks = Object.keys(p.hooks).sort();
    out.bpbTimeout = p.hooks.before_prompt_build.opts.timeoutMs;
    const ctx = { runId: "r1", sessionId: "S1", sessionKey: "agent:main:x", trigger: "user" };
    out.main = await p.hooks.before_prompt_build.fn({ prompt: "edit the json", messages: [{ role: "user", content: "earlier" }, { role: "assistant", content: [{ type: "text", text: "ok" }] }] }, ctx);
    out.side = (await p.hooks.before_prompt_build.fn({ prompt: "edit the json", messages: [] }, { ...ctx, runId: "r2", trigger: "heartbeat" })) ?? null;
    p.hooks.llm_input.fn({ runId: "r1", sessionId: "S1", provider: "stub", model: "m", systemPrompt: "SYS", prompt: "edit the json",
      historyMessages: [{ role: "assistant", content: [{ type: "text", text: "t" }, { type: "toolCall", id: "c1", name: "exec", arguments: { cmd: "ls" } }] },
                        { role: "toolResult", toolCallId: "c1", toolName: "exec", content: [{ type: "text", text: "file" }] }] }, ctx);
    p.hooks.agent_end.fn({ runId: "r1", success: true, messages: [] }, ctx);
    p.hooks.llm_output.fn({ runId: "r1", sessionId: "S1", provider: "stub", model: "m", assistantTexts: ["done"],
      lastAssistant: { role: "assistant", content: [{ type: "text", text: "done" }, { type: "toolCall", id: "c2", name: "write", arguments: { path: "a" } }] },
      usage: { input: 5, output: 2, total: 7 } }, ctx);
    // A failed run with no llm_output is still recorded, with its error.
    p.hooks.llm_input.fn({ runId: "r3", sessionId: "S1", provider: "stub", model: "m", systemPrompt: "SYS", prompt: "x", historyMessages: [] }, ctx);
    p.hooks.agent_end.fn({ runId: "r3", success: false, error: "provider exploded", messages: [] }, { ...ctx, runId: "r3" });
    await new Promise((r) => setTimeout(r, 2600));
    await p.hooks.session_end.fn({ sessionId: "S1", reason: "deleted", messageCount: 3 }, { sessionId: "S1" });
    out.seen = [...seen];

    // Nothing listening: inject nothing, never throw, log once.
    const dead = load({ ...good, url: "http://127.0.0.1:9", timeoutMs: 200 });
    out.deadResults = [];
    for (let i = 0; i < 3; i++) out.deadResults.push(await dead.hooks.before_prompt_build.fn({ prompt: "x", messages: [] }, ctx) ?? null);
    out.deadWarnings = dead.logs.filter((l) => l[0] === "warn").length;
    // A missing token file behaves the same.
    const notoken = load({ ...good, tokenFile: path.join(dir, "missing") });
    out.noTokenResult = (await notoken.hooks.before_prompt_build.fn({ prompt: "x", messages: [] }, ctx)) ?? null;
    // append placement and inject: false
    out.append = await load({ ...good, placement: "append" }).hooks.before_prompt_build.fn({ prompt: "x", messages: [] }, ctx);
    out.noInject = (await load({ ...good, inject: false }).hooks.before_prompt_build.fn({ prompt: "x", messages: [] }, ctx)) ?? null;
    out.fullServices = p.services.length;
    for (const s of [...p.services, ...dead.services]) await s.stop();
    server.close();
    console.log(JSON.stringify(out));
    process.exit(0);
    """
)


@pytest.fixture(scope="module")
def node_run(tmp_path_factory):
    node = system_node()
    if node is None:
        pytest.skip("no node binary on PATH and no Node 24 in .cache/openclaw")
    script = tmp_path_factory.mktemp("js") / "harness.mjs"
    script.write_text(NODE_HARNESS)
    r = subprocess.run([node, str(script), str(PLUGIN_DIR / "index.js")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_js_registration(node_run) -> None:
    assert node_run["discovery"] == {"hooks": 5, "services": 0}
    assert node_run["cliMetadata"] == {"hooks": 0, "services": 0}
    assert node_run["hooks"] == ["agent_end", "before_prompt_build", "llm_input", "llm_output", "session_end"]
    assert node_run["bpbTimeout"] <= 15000
    assert node_run["fullServices"] == 1


def test_js_injection_and_side_turns(node_run) -> None:
    assert node_run["main"] == {"prependSystemContext": "<metaclaw-skills>X</metaclaw-skills>"}
    assert node_run["side"] is None
    skills_calls = [s for s in node_run["seen"] if s["path"] == "/v1/skills"]
    assert len(skills_calls) == 1  # the heartbeat turn never asked
    body = skills_calls[0]["body"]
    assert skills_calls[0]["auth"] == "Bearer tok"
    assert body["session_id"] == "S1" and body["kind"] == "main" and body["prompt"] == "edit the json"
    assert body["messages"] == [{"role": "user", "content": "earlier"}, {"role": "assistant", "content": "ok"}]
    assert node_run["append"] == {"appendSystemContext": "<metaclaw-skills>X</metaclaw-skills>"}
    assert node_run["noInject"] is None


def test_js_capture(node_run) -> None:
    seen = node_run["seen"]
    paths = [s["path"] for s in seen]
    inp = next(s["body"] for s in seen if s["path"] == "/v1/turns/input" and s["body"]["run_id"] == "r1")
    out = next(s["body"] for s in seen if s["path"] == "/v1/turns/output" and s["body"]["run_id"] == "r1")
    assert paths.index("/v1/turns/input") < paths.index("/v1/turns/output")
    assert inp["injected_skills"] == ["x"] and inp["skill_generation"] == 3
    assert inp["model"] == "stub/m"
    assert inp["messages"] == [
        {"role": "system", "content": "SYS"},
        {
            "role": "assistant",
            "content": "t",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "exec", "arguments": '{"cmd":"ls"}'}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "file"},
        {"role": "user", "content": "edit the json"},
    ]
    assert out["response"]["content"] == "done"
    assert out["response"]["tool_calls"][0]["function"]["name"] == "write"
    assert out["usage"] == {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
    assert "error" not in out
    failed = next(s["body"] for s in seen if s["path"] == "/v1/turns/output" and s["body"]["run_id"] == "r3")
    assert failed["error"] == "provider exploded"
    end = next(s for s in seen if s["path"] == "/v1/sessions/S1/end")
    assert end["body"]["reason"] == "deleted"
    assert end["body"]["outcome"] == {"success": False, "feedback": "provider exploded"}
    assert paths.index("/v1/sessions/S1/end") == len(paths) - 1


def test_js_fails_open_and_logs_once(node_run) -> None:
    assert node_run["deadResults"] == [None, None, None]
    assert node_run["deadWarnings"] == 1
    assert node_run["noTokenResult"] is None
