"""The ML stack loads from several threads at once without an import race.

transformers resolves its names lazily, and two threads doing that at once in a fresh process get
``ImportError: cannot import name 'AutoModelForCausalLM' from 'transformers'``: a proxy in mode rl loads its
served policy while the trainer sets up its LoRA model (CI saw the served policy fail with it). Each run is a
fresh interpreter, where the race lives; without the shared lock the first run here failed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("peft")

SCRIPT = """
import sys, threading
from metaclaw_plugin.serving.policy import ServedPolicy
from metaclaw_plugin.training.backends.local import LocalBackend

base, out = sys.argv[1], sys.argv[2]
gate = threading.Barrier(2)
errors = []

def run(fn):
    gate.wait()
    try:
        fn()
    except Exception as e:
        errors.append(f"{type(e).__name__}: {e}")

def policy():
    p = ServedPolicy(base, device="cpu", poll_interval=None)
    try:
        p.wait_ready(240)
    finally:
        p.close()

jobs = [policy, lambda: LocalBackend(base, out, lora_rank=4, device="cpu")]
threads = [threading.Thread(target=run, args=(j,)) for j in jobs]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("\\n".join(errors) or "ok")
sys.exit(1 if errors else 0)
"""


@pytest.mark.slow
def test_a_served_policy_and_a_trainer_load_in_one_process_at_once(policy_base: Path, tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    for i in range(3):
        out = tmp_path / f"run{i}"
        out.mkdir()
        r = subprocess.run(
            [sys.executable, "-c", SCRIPT, str(policy_base), str(out)],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=root,
            env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"},
        )
        assert r.returncode == 0, f"run {i}: {r.stdout[-2000:]}{r.stderr[-2000:]}"
