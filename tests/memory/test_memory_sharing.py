"""``memory.share: tenant`` shares statements about the team's work, never first-person or personal ones (issue 41,
item 4), whatever kind the extractor gave them.
"""

from __future__ import annotations

from pathlib import Path

from test_memory import end, memory_part, say

from metaclaw_plugin import MetaClawPlugin, Settings
from metaclaw_plugin.learning.memory.ops import MemoryOps


def test_share_tenant_never_shares_personal_statements(home: Path) -> None:
    p = MetaClawPlugin(Settings(home=home, memory={"share": "tenant"})).start()
    try:
        ops = MemoryOps(p.memory_store.db, p.settings)  # type: ignore[union-attr]
        personal = [
            "I'm diabetic, so our team lunches need a sugar-free option.",
            "My wife works at our biggest competitor.",
            "I live in Lisbon, near our office.",
            "Dana from our team is pregnant and on leave from June.",
        ]
        for text in personal:  # filed as project memories (an extractor may well say so)
            m = ops.add(text, "acme", "ana", kind="project")
            assert m["user"] == "ana" and not m["shared"], m
        work = ops.add("We deploy the payments service with Argo Rollouts.", "acme", "ana", kind="project")
        assert work["user"] == "*" and work["shared"]
        for text in (  # about the work, with words a personal statement might use: shared
            "Our health check endpoint is /healthz.",
            "Nuestros servidores de staging son rápidos.",
            "The parent and children nodes of our tree live in one table.",
            "Our partner company hosts the CDN.",
            "Unser Build-Server läuft im Rechenzentrum in Frankfurt.",
            "Our customer data stays in the EU region.",
        ):
            m = ops.add(text, "acme", "ana", kind="project")
            assert m["user"] == "*" and m["shared"], text
        # and from a turn the rules read as a project statement
        say(p, "s1", "I live in Porto and our office is in Braga.")
        end(p, "s1")
        p.refresh_memory()
        for ask in ("Plan the team lunch menu.", "Who works at our competitor?", "Book a trip to Lisbon.", "Porto"):
            block = memory_part(say(p, "s2", ask, user="ben"))
            assert not any(w in block for w in ("diabetic", "wife", "Lisbon", "pregnant", "Porto")), (ask, block)
        assert "Argo Rollouts" in memory_part(say(p, "s3", "How do we deploy the payments service?", user="ben"))
        shared = p.memory_store.find("acme", "*")  # type: ignore[union-attr]
        assert "We deploy the payments service with Argo Rollouts." in [m.text for m in shared]
        assert not any(w in m.text for m in shared for w in ("diabetic", "wife", "Lisbon", "pregnant", "Porto"))
    finally:
        p.stop()
