"""The reference system's install for side-by-side benchmarks: a venv under the bench cache with
the reference package, made on request (``--install-reference``), never at test time."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .common import cache_dir

REFERENCE_PACKAGES = ["aiming-metaclaw==0.4.1.2", "openai", "torch==2.13.0"]


def reference_venv() -> Path:
    return cache_dir() / "ref-venv"


def reference_python() -> Path | None:
    """The reference venv's python, when the reference package is installed there."""
    venv = reference_venv()
    py = venv / "bin" / "python"
    if not py.exists():
        return None
    if not list((venv / "lib").glob("python*/site-packages/metaclaw/api_server.py")):
        return None
    return py


def install_reference(log: Callable[[str], Any] = print) -> Path:
    """Create ``<cache>/ref-venv`` and ``pip install aiming-metaclaw==0.4.1.2 openai torch==2.13.0``.

    The base package cannot even show ``--help`` without ``openai`` and ``torch``; pinning torch takes
    the CPU wheel (an unpinned torch pulls a multi-GB CUDA build).
    """
    venv = reference_venv()
    venv.parent.mkdir(parents=True, exist_ok=True)
    if not (venv / "bin" / "python").exists():
        log(f"creating {venv}")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    log("pip install " + " ".join(REFERENCE_PACKAGES) + " (a few minutes the first time)")
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *REFERENCE_PACKAGES], check=True)
    py = reference_python()
    if py is None:
        raise RuntimeError("the reference package did not install")
    return py


def reference_version() -> str | None:
    venv = reference_venv()
    for d in (venv / "lib").glob("python*/site-packages/aiming_metaclaw-*.dist-info"):
        return d.name.removeprefix("aiming_metaclaw-").removesuffix(".dist-info")
    return None
