"""The wheel ships every package of the core: the package list in pyproject.toml is explicit (so that data folders
are not mistaken for packages), and a package missing from it imports from a checkout but not once installed."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_every_core_package_is_listed_for_the_wheel() -> None:
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(init.parent.relative_to(REPO).parts)
        for init in (REPO / "metaclaw_plugin").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert found - listed == set(), f"add to [tool.setuptools] packages: {sorted(found - listed)}"
