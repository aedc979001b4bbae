"""``openclaw install --mode rl`` configures a model that really answers: a real OpenClaw gateway whose primary
model is the entry that command prints, the metaclaw plugin's service starting ``metaclaw-plugin serve``, and the
served policy (the tiny model) answering through ``/v1/chat/completions`` with its token in an OpenClaw file
secret. Skips only when Node 24 / openclaw are not installed (``bash .ci/install_openclaw.sh``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from openclaw_support import Gateway, StubUpstream, find_openclaw, free_port, metaclaw_cli, reply_text, sidecar_get

from metaclaw_plugin.cli.serve import merge_entry
from metaclaw_plugin.store import Database
from metaclaw_plugin.training import tokens

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


class RlGateway(Gateway):
    def __init__(self, *a: Any, entry: dict[str, Any], **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.entry = entry

    def config(self) -> dict[str, Any]:
        cfg = merge_entry(super().config(), self.entry)
        cfg["agents"]["defaults"]["model"]["primary"] = "metaclaw/metaclaw/policy"
        return cfg


def test_openclaw_install_rl_points_at_a_model_that_answers(tmp_path: Path, policy_base: Path) -> None:
    install, why = find_openclaw(install=os.environ.get("CI") == "true")
    if install is None:
        pytest.skip(f"needs Node 24 and openclaw@2026.9.6: {why}")
    # OpenClaw's own system prompt is long: give the tiny model (rotary positions) a longer context
    base = tmp_path / "tiny"
    shutil.copytree(policy_base, base)
    cfg = json.loads((base / "config.json").read_text())
    cfg["max_position_embeddings"] = 65536
    (base / "config.json").write_text(json.dumps(cfg))
    home = tmp_path / "mh"
    home.mkdir()
    (home / "config.yaml").write_text(
        yaml.safe_dump({"mode": "rl", "training": {"base_model": str(base)}, "serving": {"max_new_tokens": 8}})
    )
    port = free_port()
    env = {**os.environ, "METACLAW_HOME": str(home)}
    r = subprocess.run(
        [*metaclaw_cli(), "openclaw", "install", "--mode", "rl", "--url", f"http://127.0.0.1:{port}", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    entry = json.loads(r.stdout)
    provider = entry["models"]["providers"]["metaclaw"]
    assert provider["baseUrl"] == f"http://127.0.0.1:{port}/v1"
    assert provider["models"][0]["id"] == "metaclaw/policy"
    assert provider["apiKey"] == {"source": "file", "provider": "metaclaw-token", "id": "value"}
    secret = entry["secrets"]["providers"]["metaclaw-token"]
    assert secret["path"] == str(home / "server.token") and (home / "server.token").is_file()
    assert (home / "server.token").read_text().strip() not in json.dumps(entry)  # the token itself is never copied

    with StubUpstream(reply="stub reply") as upstream:
        plugin_cfg = {**entry["plugins"]["entries"]["metaclaw"]["config"], "command": metaclaw_cli(), "timeoutMs": 2000}
        gw = RlGateway(install, tmp_path / "gw", upstream.base_url, plugin_config=plugin_cfg, entry=entry)
        gw.root.mkdir(parents=True)
        try:
            gw.start(timeout=120)
            resp = gw.chat("Plan the deploy for tomorrow", user="rl-user", timeout=180)
            answer = reply_text(resp)
            assert upstream.snapshot() == []  # the stub provider was never asked: the policy answered
            rec = tokens.lookup(Database(home / "metaclaw.db"), tokens.response_key(answer))
            assert rec is not None and rec.model == "metaclaw/policy" and rec.weights == "base", (answer, gw.log_tail())
            st = sidecar_get(f"http://127.0.0.1:{port}", home / "server.token", "/v1/status")
            assert st["policy"]["requests"] >= 1 and st["mode"] == "rl"
        except BaseException:
            print(gw.log_tail())
            raise
        finally:
            gw.stop()
