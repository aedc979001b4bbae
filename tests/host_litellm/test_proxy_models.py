"""``metaclaw-plugin proxy`` with several upstreams, wildcards, a models file, and a clear error for a model name it
does not map (issue 29, item 6)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
import yaml
from click.testing import CliRunner
from plugin_proxy import cli_proxy

from metaclaw_plugin.cli import main as cli_main
from metaclaw_plugin.devtools.upstream import Upstream


def dry(home: Path, monkeypatch: pytest.MonkeyPatch, *args: str):
    monkeypatch.setenv("METACLAW_HOME", str(home))
    monkeypatch.delenv("LITELLM_MASTER_KEY", raising=False)
    return CliRunner().invoke(cli_main, ["proxy", *args, "--dry-run"])


def entries(home: Path) -> dict[str, dict]:
    cfg = yaml.safe_load((home / "litellm-proxy.yaml").read_text())
    return {m["model_name"]: m["litellm_params"] for m in cfg["model_list"]}


def test_each_model_may_name_its_own_upstream(home: Path, monkeypatch: pytest.MonkeyPatch):
    res = dry(
        home,
        monkeypatch,
        "--model",
        "fast=openai/small@http://127.0.0.1:9001/v1",
        "--model",
        "claude-*=anthropic/claude-*@https://gw.example/anthropic",
        "--model",
        "vertex=vertex_ai/claude-3-5-sonnet@20240620",  # an @ that is not a URL is the model's own
        "--api-base",
        "http://127.0.0.1:9000/v1",
    )
    assert res.exit_code == 0, res.output
    got = entries(home)
    assert got["fast"]["api_base"] == "http://127.0.0.1:9001/v1" and got["fast"]["model"] == "openai/small"
    assert got["claude-*"] == {"model": "anthropic/claude-*", "api_base": "https://gw.example/anthropic"} | (
        {"api_key": got["claude-*"]["api_key"]} if "api_key" in got["claude-*"] else {}
    )
    assert got["vertex"]["model"] == "vertex_ai/claude-3-5-sonnet@20240620"
    assert got["vertex"]["api_base"] == "http://127.0.0.1:9000/v1"
    text = (home / "litellm-proxy.yaml").read_text()
    assert "metaclaw_litellm.models.check" in text and "metaclaw_litellm.callback" in text


def test_a_models_file_beside_the_flags(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    f = tmp_path / "models.yaml"
    f.write_text(
        "models:\n"
        "  - {name: 'gpt-*', model: 'openai/gpt-*', api_base: 'http://127.0.0.1:9002/v1', api_key_env: GW_KEY}\n"
        "  - {model: 'ollama/llama3', api_base: 'http://127.0.0.1:11434'}\n"
    )
    monkeypatch.setenv("GW_KEY", "x")
    res = dry(home, monkeypatch, "--model", "fast=openai/small@http://127.0.0.1:9001/v1", "--models-file", str(f))
    assert res.exit_code == 0, res.output
    got = entries(home)
    assert got["gpt-*"] == {
        "model": "openai/gpt-*",
        "api_base": "http://127.0.0.1:9002/v1",
        "api_key": "os.environ/GW_KEY",
    }
    assert got["ollama/llama3"]["api_base"] == "http://127.0.0.1:11434" and set(got) == {
        "fast",
        "gpt-*",
        "ollama/llama3",
    }
    assert "x" not in (home / "litellm-proxy.yaml").read_text().split("GW_KEY")[-1].split()  # the key is not on disk


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ("models:\n  - {name: a, model: openai/a, colour: red}\n", "models.0.colour"),
        ("models: []\n", "models"),
        ("models:\n  - {name: a, model: openai/a, api_key_env: 'not a var'}\n", "api_key_env"),
        ("models: [unclosed\n", "not YAML"),
    ],
)
def test_a_bad_models_file_says_what_is_wrong(home, tmp_path, monkeypatch, body: str, says: str):
    f = tmp_path / "models.yaml"
    f.write_text(body)
    res = dry(home, monkeypatch, "--models-file", str(f))
    assert res.exit_code == 2 and says in res.output, res.output


def test_refusals(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    res = dry(home, monkeypatch)
    assert res.exit_code == 2 and "at least one --model" in res.output
    res = dry(home, monkeypatch, "--model", "a=openai/x@http://h1/v1", "--model", "a=openai/y@http://h2/v1")
    assert res.exit_code == 2 and "same name" in res.output and "'a'" in res.output
    res = dry(home, monkeypatch, "--model", "a=openai/x@http:///v1")
    assert res.exit_code == 2 and "not a URL" in res.output
    res = dry(home, monkeypatch, "--models-file", str(tmp_path / "absent.yaml"))
    assert res.exit_code == 2 and "cannot read" in res.output


def test_help_documents_wildcards_upstreams_and_each_clients_headers():
    out = CliRunner().invoke(cli_main, ["proxy", "--help"], terminal_width=200).output
    flat = " ".join(out.split())
    for said in ("claude-*=", "@BASE", "--models-file", "X-Session-Id", "X-User-Id", "X-Turn-Type: side"):
        assert said in flat, said
    for client in ("Claude Code", "Codex", "qwen-code", "aider"):
        assert client in flat, client


def test_one_proxy_serves_several_upstreams_and_names_the_mapped_models(tmp_path: Path):
    with (
        Upstream(default_reply="from A") as a,
        Upstream(default_reply="from B") as b,
        cli_proxy(
            tmp_path / "home", "--model", f"fast=openai/small@{a.url}", "--model", f"claude-*=openai/claude-*@{b.url}"
        ) as proxy,
    ):

        def ask(model: str) -> httpx.Response:
            body = {"model": model, "messages": [{"role": "user", "content": "hello"}]}
            return httpx.post(f"{proxy.url}/chat/completions", json=body, headers=proxy.headers(), timeout=60)

        r = ask("fast")
        assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == "from A"
        r = ask("claude-sonnet-4-5")
        assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == "from B"
        assert [q["model"] for q in a.requests] == ["small"]
        assert [q["model"] for q in b.requests] == ["claude-sonnet-4-5"]  # the wildcard's match, passed on
        r = ask("gpt-4o")
        assert r.status_code == 400, r.text
        msg = r.text
        assert "'gpt-4o' is not mapped" in msg and "fast, claude-*" in msg and "--model gpt-4o=" in msg
        assert len(a.requests) == 1 and len(b.requests) == 1  # nothing went upstream
