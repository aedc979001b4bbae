"""A benchmark as the workday runner plays it: days of rounds, whichever layout it was read from."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class BenchFormatError(ValueError):
    """A benchmark folder that does not follow the format, and where."""


@dataclass
class Round:
    id: str
    type: str
    question: str
    check: str | None = None
    timeout: float = 30.0
    options: dict[str, str] = field(default_factory=dict)
    answer: list[str] = field(default_factory=list)
    feedback_correct: str = ""
    feedback_incorrect: str = ""
    solution: list[dict[str, Any]] = field(default_factory=list)
    variant: str = "ours"  # "public": the command is run as written, the question lists the options
    expect_exit: int = 0
    unscored: str | None = None  # why this round cannot be scored (it is still asked when it has a question)
    notes: list[str] = field(default_factory=list)  # what the loader tolerated, recorded with the round

    def prompt(self) -> str:
        if self.type != "multi_choice" or not self.options or self.variant == "public":
            return self.question
        opts = "\n".join(f"{k}. {v}" for k, v in self.options.items())
        return f"{self.question}\n\n{opts}\n\nSelect all that apply; end with \\bbox{{...}}."


@dataclass
class Day:
    id: str
    path: Path
    rounds: list[Round]
    title: str = ""
    history: list[dict[str, str]] = field(default_factory=list)  # the day's opening conversation
    tags: list[str] = field(default_factory=list)  # preference_tags
    session: str = ""
    scripts: Path | None = None  # what ``scripts/`` is when a check runs (the public layout's eval/scripts)
    folder: str = ""  # the day's workspace folder under the run: a safe, unique name derived from the id
    notes: list[str] = field(default_factory=list)  # what the loader tolerated (no session file...)

    @property
    def workspace(self) -> Path:
        """Files this day adds to the workspace (our variant; the public layout has none)."""
        return self.path / "workspace"

    @property
    def checks(self) -> Path:
        return self.path / "checks"


@dataclass
class Bench:
    path: Path
    name: str
    description: str
    days: list[Day]
    layout: str = "ours"
    workspace_src: Path | None = None
    skipped: list[dict[str, str]] = field(default_factory=list)  # days listed but not runnable: {day, reason}

    @property
    def workspace(self) -> Path:
        return self.workspace_src or self.path / "workspace"


def natural_key(name: str) -> list[Any]:
    """Sort key that orders ``day2`` before ``day10`` (digit runs compare as numbers)."""
    return [(0, int(t), t) if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", name) if t]


def assign_folders(days: list[Day]) -> None:
    """Give each day a workspace folder name: its id made safe (no separators, no ``..``) and unique, so
    that an id like ``../x`` or a repeated id can never name a folder outside the run or another day's."""
    taken: set[str] = set()
    for d in days:
        base = re.sub(r"[^A-Za-z0-9._-]+", "_", d.id).strip("._") or "day"
        name, n = base, 2
        while name in taken:
            name, n = f"{base}-{n}", n + 1
        taken.add(name)
        d.folder = name


def option_letters(text: str, options: Sequence[str] | None = None) -> set[str]:
    """Option letters in ``text`` (a box's content, an answer key). A lone letter counts (any case); an
    upper-case run counts as its letters (``AC``) when all of them are option letters, so that ``NONE`` or
    ``ALL`` add nothing; other words ("and", "Options") are not choices."""
    out: set[str] = set()
    for tok in re.findall(r"[A-Za-z]+", text):
        if len(tok) == 1:
            out.add(tok.upper())
        elif tok.isupper() and (options is None or set(tok) <= set(options)):
            out.update(tok)
    return out
