"""The host's model as the tests script it: one answer per part of the plugin that calls it (evolver, judge, skill
review, memory extraction), told apart by the part's system prompt, and a plain answer for the host's own turns."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

from metaclaw_plugin.devtools.demo import SKILL

FACT = "The user's deployments run on Debian hosts managed with Ansible."
HOST_ANSWER = "I split each line on ',' and summed column 3."
# (what the part's system prompt says, the part, the scripted answer)
PARTS = (
    ("skill engineer", "evolver", json.dumps({"skills": [SKILL]})),
    ("strict reviewer", "judge", "The user had to correct it.\nScore: -1"),
    ("security reviewer", "review", json.dumps({"verdict": "safe", "reasons": []})),
    (
        "long-term memory",
        "memory",
        json.dumps(
            {
                "operations": [
                    {"op": "add", "kind": "fact", "subject": "deployment hosts", "text": FACT, "standing": False}
                ],
                "summary": None,
            }
        ),
    ),
)
PLUGIN_PROMPTS = tuple(marker for marker, _, _ in PARTS)


def part_answer(system: str) -> tuple[str, str] | None:
    """(part, answer) for one of the plugin's own prompts; None for anything else."""
    return next(((part, answer) for marker, part, answer in PARTS if marker in system), None)


class Roles:
    """A scripted upstream (``Upstream(script=Roles())``) answering as the host's model would, counting who asked:
    the plugin's parts by name, ``host`` for a host's turn (``is_host_turn``, by default anything else), ``other``
    for a call that is neither."""

    def __init__(self, is_host_turn: Callable[[dict[str, Any]], bool] = lambda body: True) -> None:
        self.is_host_turn = is_host_turn
        self.asked: Counter[str] = Counter()

    def __call__(self, body: dict[str, Any]) -> Any:
        got = None if body.get("stream") else part_answer(str(body["messages"][0].get("content", "")))
        if got is not None:
            self.asked[got[0]] += 1
            return got[1]
        self.asked["host" if self.is_host_turn(body) else "other"] += 1
        return HOST_ANSWER
