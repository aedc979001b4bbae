"""The mode in effect: the one set at run time (``metaclaw-plugin mode``, the local API), else the config's.

It is stored under the run-time key ``mode`` in ``runtime_state``, so every process on the home sees a change
on its next scheduler tick (and the process that served the API call at once), without a restart.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from ..store import AnyDatabase, runtime_state

KEY = "mode"
Mode = Literal["skills_only", "rl", "auto"]
MODES: tuple[Mode, ...] = ("skills_only", "rl", "auto")


@dataclass(frozen=True)
class ModeInEffect:
    mode: Mode
    source: str  # "stored" (set at run time) or "config"
    set_at: float | None = None
    configured: Mode = "skills_only"

    def as_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "source": self.source, "set_at": self.set_at, "configured": self.configured}


def store_mode(db: AnyDatabase, mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    runtime_state.put(db, KEY, mode)


def mode_in_effect(configured: str, db: AnyDatabase | Path | None) -> ModeInEffect:
    """The stored mode when one is set, else ``configured``. ``db`` may be a path (read-only, never created)."""
    conf = cast(Mode, configured)
    got = None if db is None else runtime_state.get(db, KEY)
    if got is None or got.value not in MODES:
        return ModeInEffect(conf, "config", None, conf)
    return ModeInEffect(cast(Mode, got.value), "stored", got.updated_at, conf)
