"""Config errors name the key and where it came from; env vars and files both work."""

from __future__ import annotations

from pathlib import Path

import pytest

from metaclaw_plugin import ConfigError, Settings
from metaclaw_plugin.cli.core import default_config_text


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_defaults_and_paths(home: Path):
    s = Settings.load()
    assert (
        s.mode == "auto"
        and s.mode_note == "training is off: training.base_model is not set (local backend); auto learns skills only"
        and s.retrieval.top_k == 6
        and s.injection.max_injected_tokens == 800
    )
    assert s.skills_path == home / "skills" and s.db_file == home / "metaclaw.db"
    assert s.server.host == "127.0.0.1" and s.privacy.redact and not s.privacy.store_raw


def test_file_env_and_argument_precedence(home: Path, monkeypatch: pytest.MonkeyPatch):
    write(home / "config.yaml", "mode: rl\nretrieval:\n  top_k: 3\n  mode: keyword\n")
    assert Settings.load().retrieval.top_k == 3 and Settings.load().mode == "rl"
    monkeypatch.setenv("METACLAW_RETRIEVAL__TOP_K", "4")
    monkeypatch.setenv("METACLAW_EVOLUTION__MODEL", "openai/gpt-4o-mini")
    s = Settings.load()
    assert s.retrieval.top_k == 4 and s.evolution.model == "openai/gpt-4o-mini"
    assert Settings.load(retrieval={"top_k": 2}).retrieval.top_k == 2


@pytest.mark.parametrize(
    "text, key",
    [
        ("retrieval:\n  top_k: -1\n", "retrieval.top_k"),
        ("retrieval:\n  topk: 3\n", "retrieval.topk: unknown key"),
        ("mode: turbo\n", "mode"),
        ("injection:\n  max_injected_tokens: lots\n", "injection.max_injected_tokens"),
        ("scheduler:\n  sleep_start: '25:00'\n", "scheduler.sleep_start"),
        ("bogus_section: {}\n", "bogus_section: unknown key"),
        ("privacy:\n  extra_patterns: ['(unclosed']\n", "privacy.extra_patterns"),
    ],
)
def test_bad_values_name_the_key_and_the_file(tmp_path: Path, text: str, key: str):
    cfg = write(tmp_path / "c.yaml", text)
    with pytest.raises(ConfigError) as e:
        Settings.load(cfg)
    assert key in str(e.value) and str(cfg) in str(e.value)


def test_env_errors_name_the_variable(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("METACLAW_RETRIEVAL__TOP_K", "-5")
    with pytest.raises(ConfigError, match="METACLAW_RETRIEVAL__TOP_K"):
        Settings.load()


def test_unreadable_files_are_explained(tmp_path: Path):
    with pytest.raises(ConfigError, match=r"invalid YAML.*line"):
        Settings.load(write(tmp_path / "a.yaml", "retrieval: [\n"))
    (tmp_path / "b.yaml").write_bytes(b"mode: \xff\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        Settings.load(tmp_path / "b.yaml")
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        Settings.load(write(tmp_path / "c.yaml", "- 1\n"))
    with pytest.raises(ConfigError, match="does not exist"):
        Settings.load(tmp_path / "missing.yaml")


def test_generated_default_config_is_valid_and_complete(tmp_path: Path):
    text = default_config_text()
    cfg = write(tmp_path / "config.yaml", text)
    s = Settings.load(cfg)
    assert s.model_dump(exclude={"home"}) == Settings(home=s.home).model_dump(exclude={"home"})
    for section in ("mode", "retrieval", "injection", "evolution", "reward", "training", "scheduler", "privacy"):
        assert f"\n{section}:" in "\n" + text


def test_init_writes_declared_defaults_not_what_they_resolve_to_here():
    """retrieval.mode: auto resolves to hybrid or keyword on this machine; the written config must keep auto,
    or a home made where the extra is installed would pin hybrid (and status would call it explicit)."""
    text = default_config_text()
    assert "\n  mode: auto  #" in text
    assert Settings.load().retrieval.mode in ("keyword", "hybrid")  # resolved when loaded


def test_a_training_mode_without_a_trainer_says_so_in_status_and_doctor(home: Path):
    """rl with no base model: status and doctor say plainly that training is off and why."""
    import json

    from click.testing import CliRunner

    from metaclaw_plugin.cli import main as cli_main

    assert Settings(mode="skills_only").mode_note is None
    env = {"METACLAW_HOME": str(home), "METACLAW_MODE": "rl"}
    status = json.loads(CliRunner().invoke(cli_main, ["status", "--json"], env=env).output)
    assert status["mode"] == "rl" and "training is off: training.base_model is not set" in status["mode_note"]
    assert status["training"]["off"] and status["training"]["step"] == 0
    doctor = json.loads(CliRunner().invoke(cli_main, ["doctor", "--json"], env=env).output)
    (check,) = [c for c in doctor["checks"] if c["check"] == "mode"]
    assert not check["ok"] and not check["required"] and "learns skills only" in check["detail"]
    (check,) = [c for c in doctor["checks"] if c["check"] == "training"]
    assert not check["ok"] and check["detail"].startswith("training is off: training.base_model is not set")


def test_training_backend_auto_and_readiness(tmp_path: Path, monkeypatch):
    """auto: local for a model folder or a path, tinker for a service model name; off_reason says why not."""
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text("{}")
    t = Settings(training={"base_model": str(tmp_path / "m")}).training
    assert t.backend == "local"
    assert Settings(training={"base_model": str(tmp_path / "typo")}).training.backend == "local"
    missing = Settings(training={"base_model": str(tmp_path / "typo")}).training.off_reason()
    assert missing and "neither a model folder" in missing
    monkeypatch.delenv("TINKER_API_KEY", raising=False)
    remote = Settings(training={"base_model": "Qwen/Qwen3-8B"}).training
    assert remote.backend == "tinker" and remote.off_reason() == "TINKER_API_KEY is not set (tinker backend)"
    monkeypatch.setenv("TINKER_API_KEY", "tml-x")
    assert remote.off_reason() is None
    assert Settings().training.off_reason() == "training.base_model is not set (local backend)"
