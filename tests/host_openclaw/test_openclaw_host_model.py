"""An OpenClaw gateway's own provider as the host's model (issue 47, ``learning.model: host``, the default).

A real gateway (openclaw@2026.9.6) with one provider (a scripted upstream), the metaclaw plugin loaded and its
sidecar started by the plugin's service, ``learning.model`` left at its default. One session of a user who has to
correct the answer, then deleted (the session end): the sidecar keeps the gateway's provider as the host's model
(asked for in the ``turns/input`` answer, sent by the plugin with the provider's key), the memory of the session
is extracted by that model and an evolved skill appears, each called at the provider directly. The plugin's calls
are not OpenClaw turns and are not recorded; the key is never written to the sidecar's home or logs.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
from pathlib import Path
from typing import Any

import pytest
from host_model_support import FACT, PLUGIN_PROMPTS, Roles
from litellm_support import seed_home
from openclaw_support import Gateway, find_openclaw, free_port, metaclaw_cli, sidecar_get, wait_sidecar
from waiting import wait_for

from metaclaw_plugin import MetaClawPlugin, Settings
from metaclaw_plugin.devtools.demo import CORRECTION, FAILED_TASK
from metaclaw_plugin.devtools.upstream import Upstream
from metaclaw_plugin.sidecar import create_app, load_or_create_token
from metaclaw_plugin.skillbank.files import SkillStore


class KeyedGateway(Gateway):
    """The test gateway, its provider holding a real-looking key."""

    def __init__(self, *args: Any, api_key: str, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.api_key = api_key

    def config(self) -> dict[str, Any]:
        cfg = super().config()
        cfg["models"]["providers"]["stub"]["apiKey"] = self.api_key
        return cfg


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_gateways_provider_serves_the_plugins_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install, why = find_openclaw(install=os.environ.get("CI") == "true")
    if install is None:
        pytest.skip(f"OpenClaw gateway tests need Node 24 and openclaw@2026.9.6: {why}")
    # the defaults (learning.model: host) for the gateway and the sidecar its plugin starts
    monkeypatch.delenv("METACLAW_LEARNING__MODEL", raising=False)
    monkeypatch.delenv("METACLAW_CONFIG", raising=False)
    script = Roles(is_host_turn=lambda body: bool(body.get("stream")))  # OpenClaw streams its turns
    up = Upstream(script=script).start()
    home = tmp_path / "metaclaw-home"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    key = "sk-oc-" + secrets.token_hex(20)
    gw = KeyedGateway(
        install,
        tmp_path / "gw",
        up.url,
        api_key=key,
        plugin_config={"url": url, "home": str(home), "command": metaclaw_cli(), "autoStart": True, "timeoutMs": 2000},
    )
    gw.root.mkdir(parents=True, exist_ok=True)
    try:
        gw.start(timeout=120)
        wait_sidecar(url, home / "server.token", timeout=30)

        def get(path: str) -> Any:
            return sidecar_get(url, home / "server.token", path)

        assert get("/v1/openclaw/host_model")["wanted"] is True  # learning.model: host, nothing offered yet
        gw.chat(f"{FAILED_TASK}. {FACT}", user="oc-ana", timeout=120)
        gw.chat(CORRECTION, user="oc-ana", timeout=60)

        # the plugin sent the turn's provider when the sidecar asked; the sidecar keeps it
        hm = wait_for(lambda: get("/v1/status")["host_model"], timeout=30, what="the host's model", step=0.2)
        assert hm["name"] == "stub/stub-model" and hm["local"] is True and "OpenClaw" in hm["via"]
        st = get("/v1/openclaw/host_model")
        assert st["wanted"] is False and st["refused"] is None and st["kept"]["name"] == "stub/stub-model"

        # the session ends (deleted, as a user does with /new)
        r = subprocess.run(
            [str(install.node_bin / "node"), str(install.openclaw), "sessions", "delete"]
            + ["agent:main:openai-user:oc-ana", "--yes", "--json"],
            env=gw.env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert r.returncode == 0, r.stdout + r.stderr

        mems = wait_for(
            lambda: [m for m in get("/v1/memory?tenant=default&user=oc-ana")["memories"] if m["text"] == FACT],
            timeout=90,
            what="the memory the provider's model extracted",
            step=0.5,
        )
        assert mems[0]["kind"] == "fact"
        skills = SkillStore(home / "skills")
        evolved = wait_for(
            lambda: [sk for sk in skills.load().skills.values() if sk.origin == "evolved" and "delimiter" in sk.body],
            timeout=120,
            what="the evolved skill",
            step=0.5,
        )
        assert evolved

        # the plugin's calls went to the provider directly, with its key, not streamed; the turns came through
        # the gateway, streamed
        own = [(b, h) for b, h in zip(up.requests, up.headers, strict=True) if not b.get("stream")]
        assert own and script.asked["memory"] >= 1 and script.asked["evolver"] >= 1 and script.asked["other"] == 0
        assert all(b["model"] == "stub-model" for b, _ in own)
        assert all({k.lower(): v for k, v in h.items()}.get("authorization") == f"Bearer {key}" for _, h in own)
        # no turn of the plugin's own: the user's two turns, in one session, none holding a plugin prompt
        sessions = get("/v1/sessions?limit=100")["sessions"]
        turns = [t for s in sessions for t in get(f"/v1/sessions/{s['session_id']}")["turns"]]
        assert [s["turns"] for s in sessions if s["turns"]] == [2], sessions
        assert len(turns) == 2 and all(t["host"] == "openclaw" and t["kind"] == "main" for t in turns)
        assert not any(p in json.dumps(t["messages"]) for t in turns for p in PLUGIN_PROMPTS)
        # the key is only in memory: nowhere in the sidecar's home (database, journal, logs) or the gateway's logs
        stored = [p for p in [*home.rglob("*"), *gw.root.rglob("*.log"), gw.log_path] if p.is_file()]
        assert stored and not [p for p in stored if key.encode() in p.read_bytes()]
    except BaseException:
        print(gw.log_tail())
        raise
    finally:
        gw.stop()
        up.stop()


# ------------------------------------------------------------------------------------------------
# The sidecar's side alone (no gateway)
# ------------------------------------------------------------------------------------------------
TURN = {"session_id": "s1", "run_id": "r1", "messages": [{"role": "user", "content": "hello"}]}


def _offer(**kw: Any) -> dict[str, Any]:
    return {"provider": "stub", "model": "stub-model", "api": "openai-completions", **kw}


def test_the_sidecar_asks_for_the_provider_keeps_it_and_masks_its_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from starlette.testclient import TestClient

    monkeypatch.delenv("METACLAW_LEARNING__MODEL", raising=False)
    key = "sk-oc-" + secrets.token_hex(20)
    up = Upstream(replies=["Score: 1", {"status": 401, "error": f"Incorrect API key provided: {key}"}]).start()
    home = seed_home(tmp_path / "home")
    plugin = MetaClawPlugin(Settings(home=home, memory={"enabled": False})).start()
    token = load_or_create_token(home)
    auth = {"Authorization": f"Bearer {token}"}
    try:
        with TestClient(create_app(plugin, token)) as tc:
            assert tc.post("/v1/turns/input", json=TURN, headers=auth).json()["host_model"] == {
                "wanted": True,
                "name": None,
            }
            r = tc.post("/v1/openclaw/host_model", json=_offer(base_url=up.url, api_key=key), headers=auth).json()
            assert r == {"kept": True, "name": "stub/stub-model", "local": True}
            # kept: no longer asked for; a second offer is not taken
            assert "host_model" not in tc.post("/v1/turns/input", json={**TURN, "run_id": "r2"}, headers=auth).json()
            again = tc.post("/v1/openclaw/host_model", json=_offer(base_url=up.url, model="other"), headers=auth)
            assert again.json()["kept"] is False and "kept already" in again.json()["reason"]
            st = tc.get("/v1/openclaw/host_model", headers=auth).json()
            assert st["kept"]["name"] == "stub/stub-model" and st["wanted"] is False and key not in json.dumps(st)
            assert key not in json.dumps(tc.get("/v1/status", headers=auth).json())
        hm = plugin.host_models.get()
        assert hm is not None and hm.local
        reply = hm.call([{"role": "user", "content": "score it"}], 0.0, 50, "judge")
        assert reply.text == "Score: 1" and reply.prompt_tokens > 0
        assert up.requests[-1]["stream"] is False and up.requests[-1]["model"] == "stub-model"
        assert up.headers[-1]["authorization"] == f"Bearer {key}"
        with pytest.raises(RuntimeError) as e:  # the provider's error, its echo of the key masked
            hm.call([{"role": "user", "content": "score it"}], 0.0, 50, "judge")
        assert "401" in str(e.value) and "***" in str(e.value) and key not in str(e.value)
    finally:
        plugin.stop()
        up.stop()


def test_a_provider_of_another_api_is_refused_with_the_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from starlette.testclient import TestClient

    monkeypatch.delenv("METACLAW_LEARNING__MODEL", raising=False)
    home = seed_home(tmp_path / "home")
    plugin = MetaClawPlugin(Settings(home=home, memory={"enabled": False})).start()
    token = load_or_create_token(home)
    auth = {"Authorization": f"Bearer {token}"}
    try:
        with TestClient(create_app(plugin, token)) as tc:
            body = _offer(api="google-generative-ai", base_url="https://generativelanguage.example", api_key="g-x")
            r = tc.post("/v1/openclaw/host_model", json=body, headers=auth).json()
            assert r["kept"] is False and "google-generative-ai" in r["reason"] and "openai-completions" in r["reason"]
            st = tc.get("/v1/openclaw/host_model", headers=auth).json()
            assert st["refused"] == r["reason"] and st["wanted"] is False and st["kept"] is None
            assert "host_model" not in tc.post("/v1/turns/input", json=TURN, headers=auth).json()  # not asked again
        assert plugin.host_models.get() is None
    finally:
        plugin.stop()


def test_nothing_is_asked_for_unless_learning_uses_the_hosts_model(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    home = seed_home(tmp_path / "home")  # the tests' default: learning.model none
    plugin = MetaClawPlugin(Settings(home=home, memory={"enabled": False})).start()
    token = load_or_create_token(home)
    auth = {"Authorization": f"Bearer {token}"}
    try:
        with TestClient(create_app(plugin, token)) as tc:
            assert "host_model" not in tc.post("/v1/turns/input", json=TURN, headers=auth).json()
            r = tc.post("/v1/openclaw/host_model", json=_offer(base_url="http://127.0.0.1:9/v1"), headers=auth)
            assert r.json()["kept"] is False and "learning.model" in r.json()["reason"]
        assert plugin.host_models.get() is None
    finally:
        plugin.stop()


def test_an_anthropic_messages_provider_is_called_in_its_own_wire_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The system prompt as its own field, the key as x-api-key, the reply's text blocks and token counts."""
    from starlette.testclient import TestClient

    monkeypatch.delenv("METACLAW_LEARNING__MODEL", raising=False)
    key = "sk-ant-" + secrets.token_hex(16)
    up = Upstream(replies=["Score: -1"]).start()
    home = seed_home(tmp_path / "home")
    plugin = MetaClawPlugin(Settings(home=home, memory={"enabled": False})).start()
    token = load_or_create_token(home)
    try:
        with TestClient(create_app(plugin, token)) as tc:
            body = _offer(api="anthropic-messages", base_url=up.url.removesuffix("/v1"), api_key=key)
            r = tc.post("/v1/openclaw/host_model", json=body, headers={"Authorization": f"Bearer {token}"}).json()
            assert r["kept"] is True and r["name"] == "stub/stub-model"
        hm = plugin.host_models.get()
        assert hm is not None and "anthropic-messages" in hm.via
        reply = hm.call(
            [{"role": "system", "content": "be strict"}, {"role": "user", "content": "score it"}], 0, 50, "judge"
        )
        assert reply.text == "Score: -1" and reply.prompt_tokens > 0
        sent = up.requests[-1]
        assert up.paths[-1] == "messages" and sent["system"] == "be strict"
        assert [m["role"] for m in sent["messages"]] == ["user"] and sent["stream"] is False
        assert up.headers[-1]["x-api-key"] == key and "authorization" not in up.headers[-1]
    finally:
        plugin.stop()
        up.stop()
