"""The sidecar API (`metaclaw-plugin serve`): auth, limits, errors, and the happy paths.

Most tests run the Starlette app in process around a real MetaClawPlugin with a temp home; one starts
`metaclaw-plugin serve` as a real subprocess to check the token file, the loopback default and the CLI.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from metaclaw_plugin import MetaClawPlugin, Settings
from metaclaw_plugin.sidecar import RemoteBindRefused, check_bind, create_app, is_loopback, load_or_create_token

SKILL = textwrap.dedent(
    """\
    ---
    name: zebra-json-backup
    description: Before editing any zebra json file, copy it to a .bak file first so the edit can be undone.
    category: files
    metadata:
      origin: user
      status: active
    ---
    # Zebra backups
    Copy zebra.json to zebra.json.bak before changing it.
    """
)


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    (h / "skills" / "zebra-json-backup").mkdir(parents=True)
    (h / "skills" / "zebra-json-backup" / "SKILL.md").write_text(SKILL)
    return h


@pytest.fixture()
def plugin(home: Path):
    p = MetaClawPlugin(Settings(home=home))
    p.start()
    yield p
    p.stop()


@pytest.fixture()
def token(home: Path) -> str:
    return load_or_create_token(home)


class Api:
    """A TestClient that sends the token unless told otherwise (``headers`` replace the default ones)."""

    def __init__(self, tc: TestClient, token: str) -> None:
        self.tc = tc
        self.auth = {"Authorization": f"Bearer {token}"}

    def request(self, method: str, path: str, headers: dict[str, str] | None = None, **kw):
        h = dict(self.auth if headers is None else headers)
        return self.tc.request(method, path, headers=h, **kw)

    def get(self, path: str, **kw):
        return self.request("GET", path, **kw)

    def post(self, path: str, headers: dict[str, str] | None = None, **kw):
        if headers is not None:
            headers = {**self.auth, **headers}
        return self.request("POST", path, headers=headers, **kw)


@pytest.fixture()
def client(plugin, token):
    app = create_app(plugin, token, max_body_bytes=64 * 1024)
    with TestClient(app, base_url="http://127.0.0.1") as c:
        yield Api(c, token)


# ------------------------------------------------------------------------------------------------
# Token
# ------------------------------------------------------------------------------------------------
def test_token_file_is_private_and_reused(tmp_path: Path) -> None:
    h = tmp_path / "h"
    t1 = load_or_create_token(h)
    p = h / "server.token"
    assert stat.S_IMODE(p.stat().st_mode) == 0o600
    assert len(t1) >= 32
    assert load_or_create_token(h) == t1
    os.chmod(p, 0o644)
    assert load_or_create_token(h) == t1
    assert stat.S_IMODE(p.stat().st_mode) == 0o600


def test_loopback_rules() -> None:
    for h in ("127.0.0.1", "localhost", "::1", "[::1]", "127.5.5.5"):
        assert is_loopback(h), h
        check_bind(h, allow_remote=False)
    for h in ("0.0.0.0", "192.168.1.5", "example.org", "::"):
        assert not is_loopback(h), h
        with pytest.raises(RemoteBindRefused, match="--allow-remote"):
            check_bind(h, allow_remote=False)
        check_bind(h, allow_remote=True)


# ------------------------------------------------------------------------------------------------
# Refusals
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "method,path",
    [
        ("GET", "/v1/health"),
        ("GET", "/v1/status"),
        ("POST", "/v1/skills"),
        ("POST", "/v1/turns/input"),
        ("POST", "/v1/turns/output"),
        ("POST", "/v1/sessions/s1/end"),
        ("POST", "/v1/feedback"),
        ("POST", "/v1/openclaw/host_model"),
        ("GET", "/v1/openclaw/host_model"),
        ("GET", "/v1/sessions"),
        ("GET", "/v1/nowhere"),
    ],
)
def test_no_token_is_refused_everywhere(client: TestClient, method: str, path: str) -> None:
    r = client.request(method, path, headers={}, json={})
    assert r.status_code == 401
    assert "Authorization" in r.json()["error"]
    assert r.headers["www-authenticate"].startswith("Bearer")


def test_every_route_of_the_one_table_is_behind_the_token_gate(plugin, token: str) -> None:
    """Read from the app itself, so a route added to any group (OpenClaw API, policy, scheduler, memory) is
    covered: no method of any route answers without the token, or with a wrong one."""
    app = create_app(plugin, token, max_body_bytes=64 * 1024)
    table = [(m, r.path) for r in app.app.routes for m in sorted(r.methods or ()) if m != "HEAD"]
    paths = {p for _, p in table}
    for expected in ("/v1/skills", "/v1/chat/completions", "/v1/mode", "/v1/scheduler", "/v1/memory", "/health"):
        assert expected in paths, f"{expected} is not in the sidecar's route table"
    with TestClient(app, base_url="http://127.0.0.1") as c:
        for method, template in table:
            path = re.sub(r"\{[^}]+\}", "x", template)
            for headers in ({}, {"Authorization": "Bearer " + token[::-1]}, {"Cookie": "metaclaw_dashboard=" + token}):
                r = c.request(method, path, headers=headers, json={})
                assert r.status_code == 401, (method, path, headers, r.status_code)
    with TestClient(app, base_url="http://127.0.0.1") as c:  # the dashboard: the same gate, no page without it
        r = c.get("/", follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"].startswith("/login")
        assert c.get("/", headers={"Authorization": f"Bearer {token}"}).status_code == 200


@pytest.mark.parametrize("value", ["Bearer wrong", "Bearer ", "Basic abc", "bearer", "Token x"])
def test_wrong_token_is_refused(client: TestClient, value: str) -> None:
    r = client.get("/v1/health", headers={"Authorization": value})
    assert r.status_code == 401
    assert r.json()["error"]


def test_token_prefix_is_not_enough(client: TestClient, token: str) -> None:
    assert client.get("/v1/health", headers={"Authorization": f"Bearer {token[:-1]}"}).status_code == 401
    assert client.get("/v1/health", headers={"Authorization": f"Bearer {token}x"}).status_code == 401
    assert client.get("/v1/health", headers={"Authorization": f"Bearer {token}"}).status_code == 200


def test_oversized_body_is_refused_before_parsing(client: TestClient, plugin) -> None:
    big = {"session_id": "s", "run_id": "r", "messages": [{"role": "user", "content": "x" * 70_000}]}
    r = client.post("/v1/turns/input", json=big)
    assert r.status_code == 413
    assert "limit" in r.json()["error"]
    # Not even a broken body gets parsed when it is too big.
    r = client.post("/v1/skills", content=b"{" * 70_000, headers={"Content-Type": "application/json"})
    assert r.status_code == 413


def test_oversized_chunked_body_is_refused(client: Api) -> None:
    def gen():
        for _ in range(20):
            yield b"x" * 8192

    r = client.post("/v1/skills", content=gen(), headers={"Content-Type": "application/json"})
    assert r.status_code == 413
    assert "limit" in r.json()["error"]


@pytest.mark.parametrize("body", [b"{bad", b"\xff\xfe", b'{"session_id": "s",}'])
def test_bad_json_is_refused(client: TestClient, body: bytes) -> None:
    r = client.post("/v1/skills", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 400
    assert "not valid JSON" in r.json()["error"]


def test_non_object_json_is_refused(client: Api) -> None:
    r = client.post("/v1/skills", json=[1, 2])
    assert r.status_code == 400
    assert "JSON object" in r.json()["error"]


def test_validation_errors_name_the_field(client: Api) -> None:
    r = client.post("/v1/skills", json={"prompt": "hi"})
    assert r.status_code == 422
    body = r.json()
    assert "session_id" in body["error"]
    assert body["details"][0]["field"] == "session_id"
    r = client.post("/v1/skills", json={"session_id": "s", "kind": "weird"})
    assert r.status_code == 422 and "kind" in r.json()["error"]
    r = client.post("/v1/skills", json={"session_id": "s", "surprise": 1})
    assert r.status_code == 422 and "surprise: unknown field" in r.json()["error"]
    r = client.post("/v1/turns/input", json={"session_id": "s", "run_id": "r", "messages": [{"role": "robot"}]})
    assert r.status_code == 422 and "messages.0.role" in r.json()["error"]
    r = client.post("/v1/feedback", json={"session_id": "s", "score": 5})
    assert r.status_code == 422 and "score" in r.json()["error"]
    r = client.post("/v1/turns/output", json={"session_id": "", "run_id": "r"})
    assert r.status_code == 422


def test_unknown_path_and_method(client: Api) -> None:
    r = client.get("/v1/nowhere")
    assert r.status_code == 404 and "no endpoint" in r.json()["error"]
    r = client.get("/v1/skills")
    assert r.status_code == 405 and "not allowed" in r.json()["error"]


# ------------------------------------------------------------------------------------------------
# Happy paths
# ------------------------------------------------------------------------------------------------
def test_health_and_status(client: Api) -> None:
    r = client.get("/v1/health")
    assert r.status_code == 200 and r.json()["ok"] is True
    st = client.get("/v1/status").json()
    assert st["started"] is True
    assert st["server"]["max_body_bytes"] == 64 * 1024
    assert "skill_generation" in st


def test_skills_for_a_matching_prompt(client: Api) -> None:
    r = client.post("/v1/skills", json={"session_id": "s1", "prompt": "please edit the zebra json file"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert "zebra-json-backup" in body["skills"]
    assert "zebra.json.bak" in body["block"]
    assert isinstance(body["generation"], int)


def test_side_turn_gets_no_skills(client: Api) -> None:
    r = client.post("/v1/skills", json={"session_id": "s1", "kind": "side", "prompt": "edit the zebra json file"})
    assert r.status_code == 200
    # Whether the core injects into side turns is its policy; the answer must at least be well formed.
    assert set(r.json()) == {"block", "skills", "generation"}


def test_skills_with_messages_only(client: Api) -> None:
    r = client.post(
        "/v1/skills",
        json={
            "session_id": "s1",
            "messages": [
                {"role": "user", "content": "I want to change the zebra json file"},
                {"role": "assistant", "content": "Sure."},
                {"role": "user", "content": [{"type": "text", "text": "please edit the zebra json file"}]},
            ],
        },
    )
    assert r.status_code == 200
    assert "zebra-json-backup" in r.json()["skills"]


def test_turn_roundtrip_and_session_end(client: TestClient, plugin) -> None:
    msgs = [{"role": "system", "content": "sys"}, {"role": "user", "content": "edit zebra json"}]
    r = client.post(
        "/v1/turns/input",
        json={
            "session_id": "s1",
            "run_id": "run-1",
            "messages": msgs,
            "model": "stub/m",
            "injected_skills": ["zebra-json-backup"],
        },
    )
    assert r.status_code == 200 and r.json()["ok"] is True
    resp = {
        "role": "assistant",
        "content": "done",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "exec", "arguments": '{"cmd": "cp a b"}'}}
        ],
    }
    r = client.post(
        "/v1/turns/output",
        json={
            "session_id": "s1",
            "run_id": "run-1",
            "response": resp,
            "model": "stub/m",
            "usage": {"prompt_tokens": 5, "completion_tokens": 1},
        },
    )
    assert r.status_code == 200 and r.json()["ok"] is True
    r = client.post("/v1/sessions/s1/end", json={"outcome": {"success": True, "feedback": "good"}, "reason": "deleted"})
    assert r.status_code == 200

    plugin.store.flush()
    s = plugin.store.get_session("s1")
    assert s is not None and len(s.turns) == 1
    t = s.turns[0]
    assert t.turn_id == "run-1"
    assert t.host == "openclaw"
    assert t.model == "stub/m"
    assert [m["content"] for m in t.messages] == ["sys", "edit zebra json"]
    assert t.response["content"] == "done"
    assert t.tool_calls[0]["function"]["name"] == "exec"
    assert t.injected_skills == ["zebra-json-backup"]
    assert t.usage == {"prompt_tokens": 5, "completion_tokens": 1}
    assert s.ended_at is not None
    assert s.outcome == {"success": True, "feedback": "good"}

    # And the read endpoints show the same.
    listed = client.get("/v1/sessions").json()["sessions"]
    assert any(x["session_id"] == "s1" and x["end_reason"] == "deleted" for x in listed)
    shown = client.get("/v1/sessions/s1").json()
    assert shown["turns"][0]["response"]["content"] == "done"
    assert client.get("/v1/sessions/nope").status_code == 404


def test_output_error_without_input(client: TestClient, plugin) -> None:
    r = client.post("/v1/turns/output", json={"session_id": "s2", "run_id": "run-x", "error": "provider down"})
    assert r.status_code == 200
    plugin.store.flush()
    s = plugin.store.get_session("s2")
    assert s is not None and s.turns[0].error == "provider down"


def test_feedback(client: TestClient, plugin) -> None:
    r = client.post("/v1/feedback", json={"session_id": "s1", "score": 1, "text": "nice"})
    assert r.status_code == 200


def test_internal_error_is_json(plugin, token) -> None:
    class Broken:
        settings = plugin.settings
        library = None  # the SQLite backend's (the dashboard asks which database to read)

        def prepare_turn(self, *a, **k):
            raise RuntimeError("boom")

    with TestClient(create_app(Broken(), token), base_url="http://127.0.0.1") as c:
        r = c.post("/v1/skills", json={"session_id": "s"}, headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 500
    assert "boom" in r.json()["error"]


# ------------------------------------------------------------------------------------------------
# The real command
# ------------------------------------------------------------------------------------------------
def _cli() -> list[str]:
    exe = Path(sys.executable).with_name("metaclaw-plugin")
    if exe.exists():
        return [str(exe)]
    return [sys.executable, "-c", "from metaclaw_plugin.cli import main; main()"]


def test_serve_subprocess(tmp_path: Path) -> None:
    from openclaw_support import free_port, stop_process, wait_http
    from waiting import wait_for

    home = tmp_path / "mh"
    env = {**os.environ, "METACLAW_HOME": str(home)}
    env.pop("METACLAW_CONFIG", None)

    # A non-loopback host is refused without --allow-remote.
    r = subprocess.run(
        [*_cli(), "serve", "--host", "0.0.0.0", "--port", str(free_port())],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2
    assert "--allow-remote" in r.stderr

    port = free_port()
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [*_cli(), "serve", "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_for((home / "server.token").exists, 30, "the server's token")
        tok_file = home / "server.token"
        assert stat.S_IMODE(tok_file.stat().st_mode) == 0o600
        token = tok_file.read_text().strip()
        url = f"http://127.0.0.1:{port}"
        wait_http(url + "/v1/health", 30, headers={"Authorization": f"Bearer {token}"}, proc=proc, log=log)
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(url + "/v1/health", timeout=5)
        assert e.value.code == 401
        assert "Authorization" in json.loads(e.value.read())["error"]
        req = urllib.request.Request(
            url + "/v1/skills",
            data=json.dumps({"session_id": "s", "prompt": "x"}).encode(),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            assert set(json.loads(resp.read())) == {"block", "skills", "generation"}
    finally:
        stop_process(proc)
    # The token survives a restart.
    assert (home / "server.token").read_text().strip() == token


def test_openclaw_install_prints_and_applies_only_with_consent(tmp_path: Path) -> None:
    home = tmp_path / "mh"
    oc = tmp_path / "oc" / "openclaw.json"
    oc.parent.mkdir()
    original = {
        "gateway": {"port": 1234},
        "plugins": {"load": {"paths": ["/x"]}, "entries": {"metaclaw": {"config": {"url": "http://127.0.0.1:9"}}}},
    }
    oc.write_text(json.dumps(original))
    env = {**os.environ, "METACLAW_HOME": str(home), "OPENCLAW_CONFIG_PATH": str(oc)}
    env.pop("METACLAW_CONFIG", None)

    r = subprocess.run([*_cli(), "openclaw", "install", "--json"], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    entry = json.loads(r.stdout)
    m = entry["plugins"]["entries"]["metaclaw"]
    assert m["enabled"] is True and m["hooks"]["allowConversationAccess"] is True
    assert m["config"]["tokenFile"] == str(home / "server.token")
    assert Path(entry["plugins"]["load"]["paths"][0], "openclaw.plugin.json").is_file()
    assert entry["plugins"]["slots"] == {"memory": "metaclaw"}  # the plugin fills OpenClaw's memory slot
    assert json.loads(oc.read_text()) == original  # printing changes nothing

    r = subprocess.run(
        [*_cli(), "openclaw", "install", "--apply"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert r.returncode == 2 and "--yes" in r.stderr
    assert json.loads(oc.read_text()) == original

    r = subprocess.run(
        [*_cli(), "openclaw", "install", "--apply", "--yes"], env=env, capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stderr
    new = json.loads(oc.read_text())
    assert new["gateway"] == {"port": 1234}
    assert new["plugins"]["load"]["paths"][0] == "/x" and len(new["plugins"]["load"]["paths"]) == 2
    mc = new["plugins"]["entries"]["metaclaw"]
    assert mc["hooks"]["allowConversationAccess"] is True and mc["enabled"] is True
    assert mc["config"]["url"] == "http://127.0.0.1:9"  # the user's own setting is kept
    assert new["plugins"]["slots"]["memory"] == "metaclaw"
    backups = list(oc.parent.glob("openclaw.json.bak-*"))
    assert len(backups) == 1 and json.loads(backups[0].read_text()) == original

    r = subprocess.run(
        [*_cli(), "openclaw", "install", "--apply", "--yes"], env=env, capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0 and "nothing to do" in r.stdout
