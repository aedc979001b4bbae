"""The fast loop's scripted parts, shared by its tests on SQLite and PostgreSQL: one local server playing the judge
and the evolver, the settings that point the plugin at it, a session the user corrects, and a wait that flushes the
loop between looks."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from waiting import wait_for as poll

from metaclaw_plugin import MetaClawPlugin, Settings, TurnContext
from metaclaw_plugin.devtools.demo import SKILL  # the same evolved skill the demo tells
from metaclaw_plugin.devtools.upstream import Upstream

SECRETS = [
    "sk-proj-Zx81Qw72Lm63Np54Ok45Ij36Uh27Yg18Tf09Rd",
    "ghp_8fK2mN5qR9tV3wY6zB1cE4hJ7kL0pS3uX6aD",
    "AKIAQ3EGRX7JN2PLVB4T",
    "hunter2-Correct-Horse",
]
TASK = "parse the csv export orders.csv and sum the totals"


class Roles:
    """One scripted server playing the judge and the evolver (and counting what each was asked)."""

    def __init__(self) -> None:
        self.judge_reply: str | dict = "The user rejected it.\nScore: -1"
        self.evolver_reply: str | dict = json.dumps({"skills": [SKILL]})
        self.review_reply: str | dict = json.dumps({"verdict": "safe", "reasons": []})
        self.judge_calls = 0
        self.evolver_calls = 0
        self.review_calls = 0

    def __call__(self, body: dict[str, Any]) -> Any:
        system = body["messages"][0]["content"]
        if "skill engineer" in system:
            self.evolver_calls += 1
            return self.evolver_reply
        if "strict reviewer" in system:
            self.judge_calls += 1
            return self.judge_reply
        if "security reviewer" in system:  # the model review of new skills (second screening layer)
            self.review_calls += 1
            return self.review_reply
        return "host reply"


def settings_for(home: Path, up: Upstream, **over: Any) -> Settings:
    # Lexical dedup: these tests follow the loop, not the embedding model's scores (test_dedup.py and
    # test_learning_tenants_versions.py cover dedup and the variants of shared skills).
    evo = {
        "model": "openai/evolver",
        "api_base": up.url,
        "api_key": "x",
        "backoff": 0.01,
        "retries": 0,
        "dedup_mode": "lexical",
        **over.pop("evolution", {}),
    }
    rew = {
        "model": "openai/judge",
        "api_base": up.url,
        "api_key": "x",
        "backoff": 0.01,
        "retries": 0,
        "review_wait": 5.0,
        **over.pop("reward", {}),
    }
    return Settings(home=home, evolution=evo, reward=rew, **over)


def wait_for(plugin: MetaClawPlugin, cond: Callable[[], Any], timeout: float = 90.0) -> Any:
    def settled() -> Any:
        plugin.flush(5)
        got = cond()
        if not got:
            plugin.learning.wake()
        return got

    return poll(
        settled, timeout, lambda: f"fast loop status: {json.dumps(plugin.learning.status(), default=str)[:1500]}", 0.1
    )


def failing_session(
    p: MetaClawPlugin, sid: str, *, secret: str | None = None, outcome: dict | None = None, end: bool = True
) -> list[str]:
    """Two main turns: the assistant splits a CSV wrongly, the user corrects it."""
    first = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": f"{TASK}. My key is {secret or SECRETS[0]} and password={SECRETS[3]}"},
    ]
    c1 = TurnContext(sid, host="test")
    p.on_request(c1, first)
    p.on_response(c1, {"role": "assistant", "content": "I split each line on ',' and summed column 3."})
    second = first + [
        {"role": "assistant", "content": "I split each line on ',' and summed column 3."},
        {"role": "user", "content": f"no, that's wrong: the file uses ';' and quoted fields. token {SECRETS[1]}"},
    ]
    c2 = TurnContext(sid, host="test")
    p.on_request(c2, second)
    p.on_response(c2, {"role": "assistant", "content": "Still splitting on ',' with aws key AKIAQ3EGRX7JN2PLVB4T."})
    if end:
        p.on_session_end(c2, outcome if outcome is not None else {"success": False, "feedback": f"wrong {SECRETS[2]}"})
    return [c1.request_id, c2.request_id]
