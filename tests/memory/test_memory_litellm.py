"""Memory through a real LiteLLM proxy (issue 25): a fact told in one session reaches a request of a later session
of the same user (``X-User-Id`` header, or the OpenAI ``user`` field), and no other user's."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from litellm_support import chat, seed_home, upstream_request, write_proxy_dir
from waiting import wait_for

from metaclaw_plugin.devtools.proxyrun import launch_proxy
from metaclaw_plugin.devtools.upstream import Upstream
from metaclaw_plugin.memory.store import MemoryStore
from metaclaw_plugin.store import Database

pytestmark = pytest.mark.slow


def test_a_fact_told_in_one_session_reaches_the_next_through_the_proxy(tmp_path: Path) -> None:
    up = Upstream(script=lambda body: "Noted.").start()
    home = seed_home(tmp_path / "home")
    cfg = write_proxy_dir(tmp_path / "proxy", up.url)
    env = {**os.environ, "METACLAW_HOME": str(home), "METACLAW_MEMORY__EXTRACT_EVERY": "1"}
    env.pop("METACLAW_CONFIG", None)
    proxy = launch_proxy(cfg, env=env, log_path=tmp_path / "proxy.log", cwd=tmp_path / "proxy")
    try:
        proxy.wait_ready(240)
        told = chat(
            proxy.base_url,
            proxy.master_key,
            [{"role": "user", "content": "Remember that the invoice service listens on port 7311."}],
            headers={"X-Session-Id": "memory-session-one", "X-User-Id": "ana"},
        )
        assert told.status_code == 200, told.text
        db = Database(home / "metaclaw.db")
        try:  # extracted off the request path, by the proxy's own worker
            wait_for(lambda: MemoryStore(db).find("default", "ana"), timeout=30, what="the memory extracted")
        finally:
            db.close()

        def asked(session: str, marker: str, **kw: object) -> str:
            r = chat(
                proxy.base_url,
                proxy.master_key,
                [{"role": "user", "content": f"Which port does the invoice service use? ({marker})"}],
                headers={"X-Session-Id": session, **kw.pop("headers", {})},  # type: ignore[dict-item]
                body=kw.pop("body", None),  # type: ignore[arg-type]
            )
            assert r.status_code == 200, r.text
            return json.dumps(upstream_request(up, marker)[-1]["messages"])

        n = iter(range(1000))
        wait_for(
            lambda: "7311" in asked("memory-session-two", f"ask-{next(n)}", headers={"X-User-Id": "ana"}),
            timeout=10,
            what="the memory in a later session's request",
        )
        assert "7311" in asked("memory-session-three", "openai-user", body={"user": "ana"})
        assert "7311" not in asked("memory-session-four", "other-user", headers={"X-User-Id": "ben"})
    finally:
        proxy.stop()
        up.stop()
