"""Which skills the recorded requests of agent clients get, with the client's wrapping and without it.

For each main request in tests/data/client_requests (Claude Code, Codex, aider, qwen-code), the bundled library's
picks for the request as sent are compared with the picks for the bare task the user typed: under the previous rule
(the last user message's whole text) and under ``task_text``. Then the injected block, pass after pass (aider's
fixed preamble is learned once it has been seen beside a few tasks), and the CPU cost of each rule.

    PYTHONPATH=.:tests/support python benchmarks/client_task_text.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

from client_requests import load, plain

from metaclaw_plugin import Settings, TurnContext
from metaclaw_plugin.skillbank import SkillBank, bundled_skills_dir
from metaclaw_plugin.skillbank.retrieve import task_parts
from metaclaw_plugin.tasktext import task_text
from metaclaw_plugin.text import message_text


def last_user_parts(messages: list[Any], context_messages: int = 2, max_chars: int = 2000) -> tuple[str, str]:
    """The rule before task_text: the last user message's text, and the two messages before it."""
    at = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "user"), None)
    if at is None:
        return "", ""
    query = message_text(messages[at])[:max_chars]
    budget, pieces = max_chars - len(query), []
    for m in reversed(messages[:at]):
        if len(pieces) >= context_messages or budget <= 0:
            break
        if m.get("role") in ("user", "assistant"):
            t = message_text(m)[: min(budget, 500)]
            if t:
                pieces.append(t)
                budget -= len(t)
    return query, "\n".join(pieces)


def main() -> None:
    bank = SkillBank(Settings(home=Path(tempfile.mkdtemp()), skills_dir=bundled_skills_dir()))
    bank.refresh(force=True)
    recs = [r for r in load() if r.kind == "main"]

    def top(query_context: tuple[str, str]) -> list[str]:
        return [s.name for s, _ in bank.select(TurnContext("x"), *query_context)]

    before = after = 0
    for r in recs:
        want = top(task_parts(plain(r.task)))
        old = top(last_user_parts(r.messages))
        new = top(task_parts(r.messages, repeats=bank.repeats))
        before += old == want
        after += new == want
        print(
            f"{r.client:12} {r.name:18} before {'same' if old == want else 'DIFF'}  after {'same' if new == want else 'DIFF'}"
        )
        if old != want:
            print(f"    bare task: {want}\n    before:    {old}")
    print(
        f"ranked picks equal to the bare task's: before {before}/{len(recs)}, after {after}/{len(recs)} (first sight)"
    )
    for n in (1, 2, 3):
        same = sum(
            bank.injection(TurnContext("x"), r.messages).names == bank.injection(TurnContext("x"), plain(r.task)).names
            for r in recs
        )
        print(f"injected block equal to the bare task's, pass {n}: {same}/{len(recs)}")
    for name, fn in (("task_text", lambda m: task_text(m)), ("last user message", last_user_parts)):
        t, k = time.process_time(), 0
        while time.process_time() - t < 2.0:
            for r in recs:
                fn(r.messages)
                k += 1
        print(f"{name}: {(time.process_time() - t) / k * 1e6:.1f} us of CPU a request")


if __name__ == "__main__":
    main()
