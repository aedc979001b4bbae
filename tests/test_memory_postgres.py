"""Memory on PostgreSQL (issue 25): two hosts share one database; a memory one host extracts reaches the other's
requests within about a second (each host follows the change counter), supersession and forgetting hold there too,
and tenants stay apart."""

from __future__ import annotations

import time
from pathlib import Path

from postgres_support import pg_server, pg_url  # noqa: F401  (fixtures)
from test_memory import end, memory_part, say
from waiting import wait_for

from metaclaw_plugin import MetaClawPlugin, Settings


def test_memories_live_in_postgres_and_reach_every_host(pg_url: str, tmp_path: Path) -> None:  # noqa: F811
    def host(name: str) -> MetaClawPlugin:
        return MetaClawPlugin(
            Settings(
                home=tmp_path / name, storage={"backend": "postgres", "url": pg_url}, retrieval={"mode": "keyword"}
            )
        ).start()

    a, b = host("a"), host("b")
    try:
        say(a, "s1", "Remember that the search cluster is opensearch-prod-2.")
        end(a, "s1")
        t0 = time.monotonic()
        wait_for(
            lambda: "opensearch-prod-2" in memory_part(say(b, "s2", "Which search cluster do the indexers write to?")),
            timeout=10,
            what="host b sees host a's memory",
        )
        seen_after = time.monotonic() - t0
        assert seen_after < 3.0, seen_after  # the refresh runs every second; generous for a loaded test machine
        say(b, "s3", "The search cluster moved to opensearch-prod-5.")
        end(b, "s3")
        wait_for(
            lambda: "opensearch-prod-5" in memory_part(say(a, "s4", "Which search cluster do the indexers write to?")),
            timeout=10,
        )
        block = memory_part(say(a, "s4", "Which search cluster do the indexers write to?"))
        assert "opensearch-prod-2" not in block
        assert memory_part(say(a, "s5", "Which search cluster do the indexers write to?", tenant="globex")) == ""
        assert a.memory_store is not None
        old = a.memory_store.find("acme", "ana", statuses=("superseded",))
        assert [m.text for m in old] == ["the search cluster is opensearch-prod-2"]
        say(a, "s6", "Forget that the search cluster is opensearch-prod-5.")
        end(a, "s6")
        wait_for(
            lambda: "opensearch" not in memory_part(say(b, "s7", "Which search cluster do the indexers write to?")),
            timeout=10,
        )
        assert a.status()["memory"]["counts"]["forgotten"]
    finally:
        a.stop()
        b.stop()
