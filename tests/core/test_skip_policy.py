"""The README's test command fails when a test skips for a missing part (tests/support/skip_policy.py), unless
METACLAW_ALLOW_SKIPS=1; other skips stay skips. Run on a small suite in a child pytest."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SUPPORT = Path(__file__).resolve().parents[1] / "support"  # skip_policy, as conftest.py imports it

SUITE = {
    "conftest.py": "from skip_policy import *  # noqa: F403\n",
    "test_parts.py": """
import pytest

def test_needs_chromium():
    pytest.skip("SKIPPED LOUDLY: no Chromium on this machine (apt-get install chromium)")

@pytest.mark.skipif(True, reason="needs the embeddings extra")
def test_needs_an_extra():
    pass

def test_needs_postgres():
    pytest.skip("NO POSTGRESQL: initdb not found")

def test_needs_a_module():
    pytest.importorskip("a_module_nobody_installed")

def test_waits_for_an_earlier_test():
    pytest.skip("needs the session of the concurrency test")

def test_passes():
    assert True
""",
    "test_module_level.py": 'import pytest\npytest.importorskip("another_missing_module")\n\ndef test_x():\n    pass\n',
}


def _run(tmp_path: Path, *files: str, allow: bool = False) -> subprocess.CompletedProcess[str]:
    for name in ("conftest.py", *files):
        (tmp_path / name).write_text(SUITE[name])
    env = {k: v for k, v in os.environ.items() if k != "METACLAW_ALLOW_SKIPS"}
    env["PYTHONPATH"] = os.pathsep.join([str(SUPPORT), env.get("PYTHONPATH", "")])
    if allow:
        env["METACLAW_ALLOW_SKIPS"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "-c", os.devnull, str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_skip_for_a_missing_part_fails_the_run_and_says_how_to_fix_it(tmp_path: Path):
    r = _run(tmp_path, "test_parts.py")
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    for name in ("test_needs_chromium", "test_needs_postgres", "test_needs_a_module"):
        assert f"FAILED test_parts.py::{name}" in out, out
    assert "ERROR test_parts.py::test_needs_an_extra" in out  # a skipif marker skips in setup: an error there
    assert "SKIPPED" in out and "needs the session of the concurrency test" in out  # not a missing part
    assert "PASSED test_parts.py::test_passes" in out
    assert "scripts/setup.sh" in out and "METACLAW_ALLOW_SKIPS=1" in out


def test_a_module_skipped_at_collection_for_a_missing_part_fails_the_run(tmp_path: Path):
    r = _run(tmp_path, "test_module_level.py")
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert "skipped for a missing part" in out and "another_missing_module" in out


def test_the_opt_out_allows_the_skips(tmp_path: Path):
    r = _run(tmp_path, "test_parts.py", "test_module_level.py", allow=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "FAILED" not in r.stdout and "ERROR" not in r.stdout and "6 skipped" in r.stdout
