"""The model extractor (issue 25): one call per batch through the plugin's LLM client (a real litellm call to a local
stand-in endpoint), seeing the nearest memories and answering add/update/delete; outbound text is redacted; a
malformed answer falls back to the rules; ``status`` says which extractor runs and why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_memory import end, memory_part, say

from metaclaw_plugin import MetaClawPlugin, Settings
from metaclaw_plugin.devtools.upstream import Upstream

KEY = "sk-proj-" + "Qw3eR5tY7uI9oP1aS2dF4gH6jK8lZ0xC"


def _answer(body: dict[str, Any]) -> str:
    prompt = json.loads(body["messages"][-1]["content"])
    said = " ".join(t["user"] for t in prompt["new_turns"])
    known = {m["text"]: m["id"] for m in prompt["existing_memories"]}
    if "MALFORMED" in said:
        return "I could not decide."
    ops: list[dict[str, Any]] = []
    if "no GPU" in said:
        ops.append({"op": "add", "kind": "project", "subject": "ci runners gpu", "text": "The CI runners have no GPU."})
    if "have GPUs now" in said:
        old = known.get("The CI runners have no GPU.")
        ops.append(
            {
                "op": "update",
                "id": old,
                "kind": "project",
                "subject": "ci runners gpu",
                "text": "The CI runners have GPUs now.",
            }
        )
    return json.dumps({"operations": ops, "summary": None})


def test_model_extractor_keeps_implicit_facts_updates_them_and_falls_back(home: Path) -> None:
    up = Upstream(script=_answer).start()
    try:
        s = Settings(home=home, memory={"model": "openai/stub-extractor", "api_base": up.url, "api_key": "x"})
        p = MetaClawPlugin(s).start()
        try:
            st = p.status()["memory"]
            assert st["extractor"] == "model" and "memory.model openai/stub-extractor" in st["extractor_reason"]
            say(p, "s1", f"The CI runners have no GPU, that's why the model tests timed out. Token {KEY}")
            end(p, "s1")
            assert "no GPU" in memory_part(say(p, "s2", "Why do the model tests time out on the CI runners?"))
            sent = json.dumps(up.requests)
            assert KEY not in sent and "existing_memories" in sent  # redacted before it left; the schema was asked
            say(p, "s3", "Good news: the CI runners have GPUs now.")
            end(p, "s3")
            block = memory_part(say(p, "s4", "Why do the model tests time out on the CI runners?"))
            assert "GPUs now" in block and "no GPU" not in block
            # a malformed answer: the rules read the batch instead (an explicit statement still lands)
            say(p, "s5", "MALFORMED. Remember that the nightly build runs at 02:00 UTC.")
            end(p, "s5")
            assert "02:00" in memory_part(say(p, "s6", "When does the nightly build run?"))
            st = p.status()["memory"]
            assert st["extraction"]["model_failures"] >= 1 and st["extraction"]["model_batches"] >= 2
        finally:
            p.stop()
    finally:
        up.stop()


def test_status_says_the_rules_run_without_a_model(plugin: MetaClawPlugin) -> None:
    st = plugin.status()["memory"]
    assert st["extractor"] == "rules" and "no memory.model or evolution.model" in st["extractor_reason"]
    assert "learning.model is none" in st["extractor_reason"]  # the tests' setting (conftest); host by default
