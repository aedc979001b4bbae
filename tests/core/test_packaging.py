"""The wheel ships every package of the core: the package list in pyproject.toml is explicit (so that data folders
are not mistaken for packages), and a package missing from it imports from a checkout but not once installed. It
ships nothing else: no benchmark harness, scenario or test data."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_every_core_package_is_listed_for_the_wheel() -> None:
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(init.parent.relative_to(REPO).parts)
        for init in (REPO / "metaclaw_plugin").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert found - listed == set(), f"add to [tool.setuptools] packages: {sorted(found - listed)}"


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """Build the wheel from this checkout (as a user's ``pip install .`` does) and read every file in it."""
    pytest.importorskip("setuptools", reason="setuptools is needed to build without isolation")
    out = tmp_path_factory.mktemp("wheel")
    # From a copy of the files git knows (as a fresh clone has them): setuptools keeps what an earlier build put in
    # the checkout's build/ folder, and a stale file there would be in this wheel without being in the tree.
    src = tmp_path_factory.mktemp("src")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        if (REPO / rel).is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, src / rel)
    r = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(out), str(src)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    assert r.returncode == 0, r.stderr[-2000:]
    (whl,) = out.glob("metaclaw_plugin-*.whl")
    with zipfile.ZipFile(whl) as z:
        return {name: z.read(name) for name in z.namelist() if not name.endswith("/")}


@pytest.mark.slow
def test_the_wheel_holds_no_benchmark_harness_test_data_or_scenario(wheel_names: dict[str, bytes]) -> None:
    """Tooling beside the product: nothing of benchmarks/ or tests/ ships, under its own name or remapped under
    another (a file is matched by its content, not its path)."""
    assert any(n.startswith("metaclaw_plugin/cli/") for n in wheel_names)  # the wheel is the product's
    by_name = [
        n for n in wheel_names if {"bench", "metaclaw_bench", "benchmarks", "tests", "scenarios"} & set(n.split("/"))
    ]
    assert by_name == [], by_name
    tooling = {
        hashlib.sha256(p.read_bytes()).hexdigest(): p.relative_to(REPO).as_posix()
        for top in ("benchmarks", "tests")
        for p in (REPO / top).rglob("*")
        if p.is_file() and p.stat().st_size > 64 and "__pycache__" not in p.parts and ".cache" not in p.parts
    }
    shipped = {n: tooling[h] for n, data in wheel_names.items() if (h := hashlib.sha256(data).hexdigest()) in tooling}
    assert shipped == {}, f"tooling inside the wheel (wheel name: source): {shipped}"
