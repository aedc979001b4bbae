"""The ``metaclaw-plugin`` command as a user runs it: the venv's entry point, else ``python -m``."""

from __future__ import annotations

import sys
from pathlib import Path


def cli_command() -> list[str]:
    exe = Path(sys.executable).with_name("metaclaw-plugin")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "metaclaw_plugin"]
