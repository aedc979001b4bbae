"""aider and qwen-code, the real CLIs run headless, learn through ``metaclaw-plugin proxy`` in front of the scripted
upstream (issue 29, item 5): each exits 0, the skills that fit its task reach the upstream, and every main turn is
stored with its reply and usage. The Claude Code and Codex recipes are tested beside these
(tests/host_mcp_cli/test_client_recipes.py).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from agent_cli import run_cli
from litellm_support import close_readers, reader, seed_home
from plugin_proxy import cli_proxy
from waiting import wait_for

from metaclaw_plugin.devtools.upstream import Upstream
from metaclaw_plugin.integration import has_block
from metaclaw_plugin.store.trajectories import TrajectoryStore

TASK = "Fix the date parsing bug in dates.py so ISO 8601 timestamps with a timezone offset parse correctly"
SKILL = "iso-8601-timestamps"  # the bundled skill this task is about
EDIT = (
    "dates.py\n```python\n<<<<<<< SEARCH\ndef parse(s):\n    pass\n=======\nfrom datetime import datetime\n\n"
    "def parse(s):\n    return datetime.fromisoformat(s)\n>>>>>>> REPLACE\n```\n"
)


def _script(body: dict[str, Any]) -> dict[str, Any]:
    """aider: a SEARCH/REPLACE edit. qwen-code (it sends tools): read the file first, then answer."""
    msgs = body.get("messages") or []
    names = {(t.get("function") or {}).get("name") for t in body.get("tools") or []}
    if "read_file" in names and not any(m.get("role") == "tool" for m in msgs):
        path = next(_cwd_of(m) for m in msgs if _cwd_of(m)) + "/dates.py"
        return {"content": None, "tool_calls": [{"name": "read_file", "arguments": {"file_path": path}}]}
    return {"content": EDIT if not names else "The parser now uses datetime.fromisoformat."}


def _cwd_of(m: dict[str, Any]) -> str:
    text = json.dumps(m.get("content"))
    marker = "I'm currently working in the directory: "
    return text.split(marker, 1)[1].split("\\n", 1)[0] if marker in text else ""


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("agent-clients")
    home = seed_home(root / "home")
    with Upstream(script=_script) as up, cli_proxy(home, "--model", f"*=openai/*@{up.url}") as proxy:
        yield up, proxy, home
    close_readers()


def project(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "dates.py").write_text("def parse(s):\n    pass\n")
    return root


def turns_with(store: TrajectoryStore, marker: str) -> list:
    """The stored turns whose request carries ``marker`` (this test's task), once the writer has them."""
    found: list = []

    def look() -> list | None:
        found[:] = []
        for s in store.list_sessions(limit=500):
            sess = store.get_session(s["session_id"], s.get("tenant"))
            for t in sess.turns if sess else []:
                if marker in json.dumps(t.messages):
                    found.append(t)
        return found or None

    return wait_for(look, 30, lambda: f"no stored turn carries {marker!r}")


def upstream_bodies(up: Upstream, marker: str) -> list[dict[str, Any]]:
    return [b for b in list(up.requests) if marker in json.dumps(b.get("messages"))]


def assert_learned(up: Upstream, home: Path, marker: str, main_calls: int) -> None:
    bodies = upstream_bodies(up, marker)
    assert len(bodies) >= main_calls, [b.get("model") for b in bodies]
    for b in bodies:
        system = "\n".join(str(m.get("content")) for m in b["messages"] if m.get("role") == "system")
        assert has_block(system) and SKILL in system, system[-2000:]
    store = reader(home)
    wait_for(lambda: len([t for t in turns_with(store, marker) if t.kind == "main"]) >= main_calls or None, 30)
    main = [t for t in turns_with(store, marker) if t.kind == "main"]
    assert len(main) == len(bodies)
    for t in main:
        assert t.response is not None and (t.response.get("content") or t.response.get("tool_calls")), t.turn_id
        assert t.usage and t.usage.get("prompt_tokens", 0) > 0 and t.usage.get("completion_tokens", 0) > 0, t.usage
        assert SKILL in t.injected_skills and t.error is None


def test_aider_learns_through_the_proxy(stack, tmp_path: Path):
    up, proxy, home = stack
    marker = uuid.uuid4().hex[:8]
    cwd = project(tmp_path / "repo")
    settings = tmp_path / "aider-models.yml"  # aider's way to send headers: one session id for the run
    settings.write_text(
        f"- name: aider/extra_params\n  extra_params:\n    extra_headers:\n      X-Session-Id: aider-{marker}\n"
    )
    run = run_cli(
        "aider",
        [
            "--model",
            "openai/gpt-4o",
            "--model-settings-file",
            str(settings),
            "--openai-api-base",
            proxy.url,
            "--openai-api-key",
            proxy.master_key,
            "--yes-always",
            "--no-git",
            "--no-show-model-warnings",
            "--no-show-release-notes",
            "--no-pretty",
            "--analytics-disable",
            "--no-check-update",
            "--message",
            f"{TASK} [{marker}]",
            "dates.py",
        ],
        workdir=cwd,
    )
    assert run.returncode == 0, run.tail()
    assert "fromisoformat" in (cwd / "dates.py").read_text(), (
        run.tail()
    )  # the scripted edit came back through the proxy
    assert_learned(up, home, marker, main_calls=1)
    assert {t.session_id for t in turns_with(reader(home), marker)} == {f"aider-{marker}"}


def test_qwen_code_learns_through_the_proxy(stack, tmp_path: Path):
    up, proxy, home = stack
    marker = uuid.uuid4().hex[:8]
    cwd = project(tmp_path / "repo")
    qhome = cwd / ".home"  # run_cli's HOME for this workdir
    (qhome / ".qwen").mkdir(parents=True)
    (qhome / ".qwen" / "settings.json").write_text(
        json.dumps(
            {  # its own session id on every call, so the turns of a run are one session
                "outboundCorrelation": {"allowDynamicHeaderValues": True},
                "model": {"generationConfig": {"customHeaders": {"X-Session-Id": "qwen-${session_id}"}}},
                "privacy": {"usageStatisticsEnabled": False},
                "telemetry": {"enabled": False},
            }
        )
    )
    run = run_cli(
        "qwen",
        ["-p", f"{TASK} [{marker}]", "--auth-type", "openai"],
        workdir=cwd,
        env={"OPENAI_BASE_URL": proxy.url, "OPENAI_API_KEY": proxy.master_key, "OPENAI_MODEL": "qwen3-coder-plus"},
    )
    assert run.returncode == 0, run.tail()
    assert "fromisoformat" in run.stdout, run.tail()
    assert_learned(up, home, marker, main_calls=2)  # the read_file call, then the answer
    sessions = {t.session_id for t in turns_with(reader(home), marker)}
    assert len(sessions) == 1 and next(iter(sessions)).startswith("qwen-"), sessions  # its header arrived
