"""The CLI: init never overwrites, --json shapes, errors exit non-zero."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from metaclaw_plugin import MetaClawPlugin, Settings, TurnContext
from metaclaw_plugin.cli import main


def cli(*args: str, ok: bool = True):
    res = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert (res.exit_code == 0) == ok, res.output
    return res


def js(*args: str):
    return json.loads(cli(*args, "--json").stdout)


def test_init_seeds_and_never_overwrites_user_edits(home: Path):
    first = js("init")
    assert first["config_written"] and first["skills_added"] >= 40
    edited = home / "skills" / "backup-before-modify" / "SKILL.md"
    edited.write_text(edited.read_text().replace("Back up before you modify", "MY OWN EDIT"))
    (home / "config.yaml").write_text("retrieval:\n  top_k: 2\n")
    again = js("init")
    assert again["skills_added"] == 0 and not again["config_written"]
    assert "MY OWN EDIT" in edited.read_text() and "top_k: 2" in (home / "config.yaml").read_text()
    assert (home / "config.yaml").stat().st_mode & 0o077 == 0 and home.stat().st_mode & 0o777 == 0o700


def test_skills_list_show_add_approve_retire_history(home: Path, tmp_path: Path):
    js("init")
    items = js("skills", "list")
    assert {"name", "description", "category", "status", "origin", "generation"} <= set(items[0])
    one = js("skills", "show", "iso-8601-timestamps")
    assert one["name"] == "iso-8601-timestamps" and one["body"]
    assert cli("skills", "show", "no-such-skill", ok=False).exit_code != 0
    src = tmp_path / "my-skill"
    src.mkdir()
    (src / "SKILL.md").write_text(
        "---\nname: my-skill\ndescription: Use when testing the CLI add path.\n---\nDo the thing.\n"
    )
    added = js("skills", "add", str(src))
    assert added["status"] == "active" and added["origin"] == "user"
    assert js("skills", "show", "my-skill")["origin"] == "user"
    js("skills", "retire", "my-skill")
    assert js("skills", "show", "my-skill")["status"] == "retired"
    js("skills", "approve", "my-skill")
    assert js("skills", "show", "my-skill")["status"] == "active"
    assert js("skills", "index") == {
        "mode": "keyword",
        "skills": len(items) + 1,
        "detail": "keyword retrieval indexes in memory at start",
    }
    hist = js("skills", "history", "my-skill")
    events = [e["event"] for e in hist["events"]]
    assert events[0] == "add" and events.count("status") == 2
    assert [v["version"] for v in hist["versions"]] == [1] and hist["versions"][0]["state"] == "served"
    assert hist["versions"][0]["diff"].startswith("--- /dev/null")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "SKILL.md").write_text("no front matter")
    res = cli("skills", "add", str(bad), ok=False)
    assert "front matter" in res.stderr


def test_status_and_sessions(home: Path):
    js("init")
    p = MetaClawPlugin(Settings(home=home)).start()
    ctx = TurnContext("cli-session")
    p.on_request(ctx, [{"role": "user", "content": "back up the json file first"}])
    p.on_response(
        ctx,
        {
            "role": "assistant",
            "content": "done",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "cp", "arguments": "{}"}}],
        },
    )
    p.store.record_reward(ctx.request_id, "judge", 1.0)
    p.on_session_end(ctx, {"success": True})
    p.stop()
    st = js("status")
    assert st["skill_generation"] == 0 and st["skills"]["active"] >= 40 and st["store"]["turns"] == 1
    sessions = js("sessions", "list")
    assert sessions[0]["session_id"] == "cli-session" and sessions[0]["turns"] == 1
    shown = js("sessions", "show", "cli-session")
    turn = shown["turns"][0]
    assert turn["messages"][-1]["content"] == "back up the json file first"
    assert turn["response"]["content"] == "done" and turn["tool_calls"][0]["function"]["name"] == "cp"
    assert "backup-before-modify" in turn["injected_skills"] and turn["reward"][0]["score"] == 1.0
    assert cli("sessions", "show", "nope", ok=False).exit_code != 0
    assert "sessions / turns" in cli("status").stdout


def test_doctor_and_bad_config(home: Path):
    js("init")
    report = json.loads(cli("doctor", "--json").stdout)
    assert report["ok"] and {c["check"] for c in report["checks"]} >= {"config", "home", "skills", "database"}
    (home / "config.yaml").write_text("retrieval:\n  top_k: -1\n")
    res = cli("status", ok=False)
    assert "retrieval.top_k" in res.stderr and "config.yaml" in res.stderr
    assert json.loads(cli("doctor", "--json", ok=False).stdout)["ok"] is False


def test_console_script_help_runs():
    out = subprocess.run([sys.executable, "-m", "metaclaw_plugin.cli", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "skills" in out.stdout
