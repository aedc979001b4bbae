"""A benchmark as the workday runner plays it: days of rounds, whichever layout it was read from."""

from __future__ import annotations

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

    @property
    def workspace(self) -> Path:
        return self.workspace_src or self.path / "workspace"
