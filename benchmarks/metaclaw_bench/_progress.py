"""``progress.json``: the result of a workday run so far, for ``--resume``.

Written after every round (not only every day), so that a run killed mid-day resumes at the next round
instead of asking the finished ones again; atomically (a temporary file renamed over it), so that a kill
mid-write leaves the previous version; 0600, as it holds the agent's answers. Read back through a
pydantic model, so that a file truncated or edited by hand gives one clear error rather than a
``KeyError`` somewhere in the runner.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from .model import BenchFormatError


class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow")


class _Day(_Loose):
    day: str
    rounds: list[dict[str, Any]]


class _Arm(_Loose):
    days: list[_Day]


class _Partial(_Loose):
    day: str
    rounds: list[dict[str, Any]]
    transcript: list[dict[str, str]]


class _Progress(_Loose):
    bench: dict[str, Any]
    models: dict[str, Any]
    arms: dict[str, _Arm]
    partial: dict[str, _Partial] = {}


def write(path: Path, doc: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2, default=str)
    os.replace(tmp, path)


def read(path: Path, day_ids: list[str]) -> dict[str, Any]:
    """The saved run, checked against the benchmark's days (``day_ids``, in order)."""
    hint = f"move {path} away to start the run again"
    try:
        raw = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as e:
        raise BenchFormatError(f"{path} is corrupt or partial ({e}); cannot resume: {hint}") from None
    try:
        doc = _Progress.model_validate(raw)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise BenchFormatError(
            f"{path} is not a workday run's progress ({where}: {first['msg']}); cannot resume: {hint}"
        ) from None
    for arm, a in doc.arms.items():
        ran = [d.day for d in a.days]
        if ran != day_ids[: len(ran)]:
            raise BenchFormatError(
                f"{path}: arm {arm} ran days {ran}, which are not the first days of this benchmark; cannot resume"
            )
    for arm, p in doc.partial.items():
        nxt = len(doc.arms[arm].days) if arm in doc.arms else 0
        if nxt >= len(day_ids) or p.day != day_ids[nxt]:
            raise BenchFormatError(f"{path}: arm {arm}'s unfinished day {p.day} is not its next day; cannot resume")
    return raw if isinstance(raw, dict) else {}
