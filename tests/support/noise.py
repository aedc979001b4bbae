"""What third-party noise on a CLI's stderr looks like: progress bars and warnings raised outside our package."""

from __future__ import annotations

import re

_BAR = re.compile(r"\d+%\|[^\n]*\||\bit/s\]|Loading (?:weights|checkpoint shards)")
_WARNING = re.compile(r"^(?P<path>\S+\.py):\d+: (?P<cat>\w*Warning): ", re.MULTILINE)


def third_party_noise(stderr: str) -> list[str]:
    """The bars and the warnings in ``stderr`` that did not come from metaclaw_plugin's own code."""
    text = stderr.replace("\r", "\n")
    found = [m.group(0) for m in _BAR.finditer(text)]
    found += [m.group(0) for m in _WARNING.finditer(text) if "metaclaw_plugin" not in m.group("path")]
    return found
