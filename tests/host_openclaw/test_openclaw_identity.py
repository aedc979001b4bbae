"""Who is who through OpenClaw's plugin: the plugin module in Node, driven with OpenClaw's hook events, against a
real ``metaclaw-plugin serve`` (no gateway: only the hook events are scripted, nothing else is faked).

A held-out red team's classes: senders whose ids are past the id bound and share a prefix (the plugin cut them to one
user); one OpenClaw session (``agent:main:main``, every direct message of a gateway) used by several senders; a
session id past the id bound; a sender named like the bucket of the turns that name none; the memory tools of one
sender reaching another's memory by id.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
from openclaw_support import PLUGIN_DIR, Sidecar, system_node

from metaclaw_plugin.store.trajectories import TrajectoryStore

pytestmark = pytest.mark.slow

PREFIX = "whatsapp:+4420" + "7" * 290  # a sender id past the id bound; two senders share all of it
LONG_SESSION = "agent:main:" + "thread-" * 60

HARNESS = textwrap.dedent(
    r"""
    import path from "node:path";
    import { pathToFileURL } from "node:url";

    const [dir, url, tokenFile, prefix, longSession] = process.argv.slice(2);
    const load = async (f) => import(pathToFileURL(path.join(dir, f)).href);
    const plugin = (await load("index.js")).default;
    const { SidecarClient } = await load("lib/client.js");
    const hooks = {};
    let toolFactory = null;
    plugin.register({
      registrationMode: "full",
      pluginConfig: { url, tokenFile, autoStart: false, memoryTools: true },
      logger: { info() {}, warn() {}, error() {} },
      on: (name, fn) => { hooks[name] = fn; },
      registerService() {},
      registerTool: (factory) => { toolFactory = factory; },
    });
    const client = new SidecarClient({ url, tokenFile });
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    let n = 0;

    async function turn(sender, sessionId, prompt) {
      const runId = `run-${++n}`;
      const ctx = { runId, sessionId, sessionKey: "agent:main:main", trigger: "user" };
      if (sender !== null) ctx.senderId = sender;
      const out = await hooks.before_prompt_build({ prompt, messages: [] }, ctx);
      hooks.llm_input({ runId, sessionId, provider: "stub", model: "m", systemPrompt: "SYS", prompt, historyMessages: [] }, ctx);
      hooks.llm_output({ runId, sessionId, provider: "stub", model: "m", assistantTexts: ["Noted."],
        lastAssistant: { role: "assistant", content: [{ type: "text", text: "Noted." }] }, usage: { input: 1, output: 1, total: 2 } }, ctx);
      await hooks.agent_end({ runId, success: true, messages: [] }, ctx);
      return out?.prependSystemContext ?? "";
    }
    async function end(sessionId) {
      await hooks.session_end({ sessionId, reason: "deleted" }, { sessionId });
    }
    const tools = (sender) => Object.fromEntries(toolFactory(sender === null ? {} : { requesterSenderId: sender }).map((t) => [t.name, t]));
    const call = async (sender, name, args) => (await tools(sender)[name].execute("c", args)).details;
    async function waitMemory(sender, words) {
      for (let i = 0; i < 300; i++) {
        const found = await call(sender, "memory_search", { query: words });
        if (found.length) return found;
        await sleep(100);
      }
      return [];
    }

    const ana = prefix + "ana", ben = prefix + "ben";
    const out = {};
    // Two senders with one long prefix, in the session every direct message of the gateway shares.
    await turn(ana, "S-dm", "Please remember that my blood type is AB negative.");
    await turn(ben, "S-dm", "What should I cook tonight?");
    await end("S-dm");
    out.anaFound = await waitMemory(ana, "blood type");
    out.anaSees = await turn(ana, "S-2", "Which blood type do I have?");
    out.benSees = await turn(ben, "S-3", "Which blood type do I have?");
    out.benSearch = await call(ben, "memory_search", { query: "blood type" });
    const id = out.anaFound[0]?.id;
    out.benForget = await call(ben, "memory_forget", { memory_id: id });
    out.anaAfterBen = await call(ana, "memory_search", { query: "blood type" });
    out.anaForget = await call(ana, "memory_forget", { memory_id: id });
    out.anaAfterForget = await call(ana, "memory_search", { query: "blood type" });
    // Turns that name no sender, and a sender named like their bucket.
    await turn(null, "S-anon", "Please remember that my office is in the east wing.");
    await end("S-anon");
    out.anonFound = await waitMemory(null, "office wing");
    out.anonSees = await turn(null, "S-anon-2", "Where is my office?");
    out.defaultSees = await turn("default", "S-def", "Where is my office?");
    // A session id past the id bound is a session like any other.
    out.longSession = await turn(ana, longSession, "Summarise the night shift notes.");
    await end(longSession);
    console.log(JSON.stringify(out));
    process.exit(0);
    """
)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    node = system_node()
    if node is None:
        pytest.skip("no node binary on PATH and no Node 24 in .cache/openclaw")
    root = tmp_path_factory.mktemp("openclaw-identity")
    sidecar = Sidecar(root / "home", extra_env={"METACLAW_MEMORY__EXTRACT_EVERY": "1"}).start()
    try:
        script = root / "harness.mjs"
        script.write_text(HARNESS)
        args = [node, str(script), str(PLUGIN_DIR), sidecar.url, str(sidecar.token_file), PREFIX, LONG_SESSION]
        r = subprocess.run(args, capture_output=True, text=True, timeout=180)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        return json.loads(r.stdout.strip().splitlines()[-1]), sidecar.home
    finally:
        sidecar.stop()


def test_long_sender_ids_that_share_a_prefix_are_two_users(run: tuple[dict[str, Any], Path]) -> None:
    """Fails before: the plugin cut sender ids to 256 characters, so the two were one user."""
    out, _ = run
    assert out["anaFound"] and "AB negative" in out["anaFound"][0]["text"]
    assert "AB negative" in out["anaSees"]
    assert "AB negative" not in out["benSees"] and out["benSearch"] == []


def test_a_senders_memory_tools_cannot_forget_another_senders_memory_by_id(run: tuple[dict[str, Any], Path]) -> None:
    out, _ = run
    assert "error" in out["benForget"] and [m["text"] for m in out["anaAfterBen"]] == [out["anaFound"][0]["text"]]
    assert out["anaForget"] == {"forgotten": [out["anaFound"][0]["id"]]} and out["anaAfterForget"] == []


def test_a_sender_named_default_is_not_the_turns_that_name_no_sender(run: tuple[dict[str, Any], Path]) -> None:
    out, _ = run
    assert out["anonFound"] and "east wing" in out["anonSees"]
    assert "east wing" not in out["defaultSees"]


def test_one_session_of_several_senders_and_a_long_session_id(run: tuple[dict[str, Any], Path]) -> None:
    _, home = run
    store = TrajectoryStore(home / "metaclaw.db")
    try:
        dm = [store.get_session(r["session_id"], r["tenant"]) for r in store.sessions_named("S-dm")]
        assert len(dm) == 2, [
            (s.session_id, s.host, [(t.user[:14], t.turn_id, t.session_id) for t in s.turns]) for s in dm if s
        ]
        assert len(dm) == 2 and all(s is not None and s.ended_at is not None for s in dm)
        assert len({s.turns[0].user for s in dm if s is not None}) == 2
        rows = store.list_sessions(1000)
        long = [r for r in rows if r["session_id"].startswith("redacted-")]
        assert len(long) == 1 and long[0]["ended_at"] is not None and long[0]["turns"] == 1
    finally:
        store.close()
