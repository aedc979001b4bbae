"""A ``training.*`` setting only one backend honours must not be silent on the other: ``status`` and ``doctor`` say
it is off there and why (the list comes from the settings' own metadata)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from metaclaw_plugin import Settings
from metaclaw_plugin.cli import main
from metaclaw_plugin.config import TrainingSettings

# a non-default value for each local-only setting; the metadata, not this dict, decides which are flagged
LOCAL_ONLY = {
    "validation_size": 8,
    "validation_tolerance": 0.1,
    "keep_adapters": 9,
    "lora_alpha": 64,
    "lora_dropout": 0.05,
    "target_modules": ["q_proj", "v_proj"],
    "dtype": "bfloat16",
    "gradient_checkpointing": True,
    "device": "cpu",
    "checkpoint_every": 3,
}
TINKER_ONLY = {"checkpoint_ttl_hours": 24.0}


def _invoke(*args: str, ok: bool = True):
    res = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert (res.exit_code == 0) == ok, res.output
    return res


def _doctor_check(name: str) -> dict:
    """One check of ``doctor --json`` (its exit status is about the required checks of a bare home)."""
    doc = json.loads(CliRunner().invoke(main, ["doctor", "--json"]).stdout)
    return next(c for c in doc["checks"] if c["check"] == name)


def _write(home: Path, training: dict) -> None:
    (home / "config.yaml").write_text(json.dumps({"training": training}))


def _marked(backend: str) -> set[str]:
    fields = TrainingSettings.model_fields.items()
    return {
        n for n, f in fields if isinstance(f.json_schema_extra, dict) and f.json_schema_extra["backends"] == [backend]
    }


def test_the_marked_settings_are_the_ones_described_as_one_backends_and_the_other_ignores():
    for backend in ("local", "tinker"):
        described = {
            n for n, f in TrainingSettings.model_fields.items() if (f.description or "").startswith(f"{backend}:")
        }
        assert _marked(backend) == described - {"base_model"}  # base_model says what it is on both backends
    assert set(LOCAL_ONLY) | {"out_dir"} == _marked("local") and set(TINKER_ONLY) == _marked("tinker")
    t = TrainingSettings(backend="tinker", base_model="Qwen/Qwen3-8B", **LOCAL_ONLY, **TINKER_ONLY, out_dir="/tmp/x")
    flagged = {i["setting"]: i for i in t.ignored_settings()}
    assert set(flagged) == {f"training.{n}" for n in _marked("local")}
    assert all(i["why"] for i in flagged.values()) and flagged["training.validation_size"]["value"] == 8
    local = TrainingSettings(backend="local", base_model="/m", **LOCAL_ONLY, **TINKER_ONLY)
    assert [i["setting"] for i in local.ignored_settings()] == ["training.checkpoint_ttl_hours"]
    # the defaults say nothing: only a value the user chose can be silently ignored; the KL anchor applies on both
    assert TrainingSettings(backend="tinker", base_model="Qwen/Qwen3-8B", kl_coef=0.5).ignored_settings() == []


def test_status_and_doctor_name_each_setting_tinker_ignores(home: Path):
    _write(home, {"backend": "tinker", "base_model": "Qwen/Qwen3-8B", "validation_size": 8, "lora_alpha": 64})
    st = json.loads(_invoke("status", "--json").stdout)["training"]
    assert {i["setting"] for i in st["ignored_settings"]} == {"training.validation_size", "training.lora_alpha"}
    line = next(ln for ln in _invoke("status").stdout.splitlines() if ln.strip("│ ").startswith("training "))
    assert "off on the tinker backend" in line and "training.validation_size=8" in line
    assert (
        "training.lora_alpha=64" in line
        and "behaviour gate (training.gate) checks each step" in line
        and "rank and a seed only" in line
    )
    check = _doctor_check("training settings")
    assert not check["ok"] and not check["required"]
    assert "training.validation_size" in check["detail"] and "training.lora_alpha" in check["detail"]


def test_status_and_doctor_stay_quiet_when_every_setting_applies(home: Path):
    _write(home, {"backend": "tinker", "base_model": "Qwen/Qwen3-8B", "learning_rate": 3e-5})
    assert json.loads(_invoke("status", "--json").stdout)["training"]["ignored_settings"] == []
    assert _doctor_check("training settings")["ok"]
    settings = Settings(home=home, training={"backend": "local", "base_model": "/m", "validation_size": 8})
    assert settings.training.ignored_settings() == []


def test_status_says_the_checkpoint_ttl_is_off_on_a_local_home(home: Path):
    _write(home, {"backend": "local", "base_model": "/m", "checkpoint_ttl_hours": 24})
    (ignored,) = json.loads(_invoke("status", "--json").stdout)["training"]["ignored_settings"]
    assert ignored["setting"] == "training.checkpoint_ttl_hours" and "keep_adapters" in ignored["why"]
