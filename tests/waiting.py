"""Polling with a deadline: the tests wait on conditions, never on fixed sleeps (CI is a loaded 2-core machine)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_for(cond: Callable[[], Any], timeout: float = 20.0, what: str = "", step: float = 0.05) -> Any:
    """``cond()``'s first truthy value, polled every ``step`` seconds; AssertionError after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout}s waiting for {what or cond}")
