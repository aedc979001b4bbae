"""Helpers shared by the benchmarks: statistics, machine facts, result files, child processes."""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import shutil
import socket
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metaclaw_plugin.devtools.proxyrun import start_upstream_process
from metaclaw_plugin.infra.procs import free_port as free_port  # re-exported for the benchmarks: one definition each
from metaclaw_plugin.infra.procs import spawn_group, stop_process
from metaclaw_plugin.infra.stats import percentile as percentile
from metaclaw_plugin.text import approx_tokens

REPO_ROOT = Path(__file__).resolve().parents[2]
BENCH_ROOT = Path(__file__).resolve().parents[1]  # benchmarks/: the folder that holds this package


def child_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's) with ``benchmarks/`` first on PYTHONPATH, so that a child process (a
    proxy loading :mod:`metaclaw_bench.cpumeter`, a worker) imports this package from the checkout too."""
    out = dict(os.environ if env is None else env)
    parts = [str(BENCH_ROOT), *[p for p in out.get("PYTHONPATH", "").split(os.pathsep) if p]]
    out["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(parts))
    return out


# Statistics -----------------------------------------------------------------------------------
def rnd(x: float | None, nd: int = 3) -> float | None:
    return None if x is None else round(float(x), nd)


def ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return round(a / b, 3)


def median(values: Sequence[float]) -> float | None:
    return percentile(values, 50)


# Machine and provenance -----------------------------------------------------------------------
def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _mem_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return None


def machine_info() -> dict[str, Any]:
    return {
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "mem_gib": _mem_gib(),
        "loadavg_1m_at_start": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
    }


def git_commit(root: Path = REPO_ROOT) -> dict[str, Any]:
    """The checked-out commit and whether the tree has local changes (read-only git calls)."""
    out: dict[str, Any] = {"commit": None, "dirty": None}
    try:
        out["commit"] = (
            subprocess.run(
                ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
            ).stdout.strip()
            or None
        )
        status = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout
        out["dirty"] = bool(status.strip())
    except (OSError, subprocess.SubprocessError):
        pass
    return out


def provenance(kind: str, argv: Sequence[str] | None = None) -> dict[str, Any]:
    now = _dt.datetime.now(_dt.UTC)
    return {
        "benchmark": kind,
        "date": now.date().isoformat(),
        "timestamp": now.replace(microsecond=0).isoformat().replace("+00:00", "Z"),
        "machine": machine_info(),
        **git_commit(),
        "command": " ".join(["metaclaw-plugin", "bench", kind, *(argv or [])]),
    }


def write_result(data: dict[str, Any], out_dir: Path | str, what: str) -> Path:
    """Write ``<out_dir>/<what>.json``, replacing the last run's: one result file per benchmark (its history is
    in git; the document carries its date and commit). Returns the path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{what}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")
    os.replace(tmp, path)
    return path


def cache_dir() -> Path:
    """``benchmarks/.cache`` (git-ignored), or ``$METACLAW_BENCH_CACHE``."""
    env = os.environ.get("METACLAW_BENCH_CACHE")
    return Path(env).expanduser() if env else BENCH_ROOT / ".cache"


# Tokens -----------------------------------------------------------------------------------------
_ENCODER: Any = None


def count_tokens(text: str) -> int:
    """cl100k_base tokens when tiktoken and its offline file (shipped with LiteLLM) are there, else ~4 chars/token."""
    global _ENCODER
    if _ENCODER is None:
        _ENCODER = False
        try:
            import importlib.util

            spec = importlib.util.find_spec("litellm")
            if spec and spec.submodule_search_locations:
                d = Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
                if d.is_dir():
                    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(d))
            import tiktoken

            _ENCODER = tiktoken.get_encoding("cl100k_base")
        except Exception:
            _ENCODER = False
    if _ENCODER:
        return len(_ENCODER.encode(text, disallowed_special=()))
    return approx_tokens(text)


def tokenizer_name() -> str:
    count_tokens("")
    return "cl100k_base" if _ENCODER else "approx-4-chars"


# Processes and ports ------------------------------------------------------------------------------
def wait_port(port: int, timeout: float, proc: subprocess.Popen | None = None) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.1)
    return False


def rss_mb(pid: int | None = None) -> float | None:
    """Resident memory of a process in MiB (Linux /proc), None elsewhere."""
    try:
        with open(f"/proc/{pid or 'self'}/statm") as f:
            pages = int(f.read().split()[1])
        return round(pages * os.sysconf("SC_PAGE_SIZE") / 1024 / 1024, 2)
    except (OSError, ValueError, IndexError):
        return None


@dataclass
class Child:
    """A child process in its own process group, so that stopping it also stops what it spawned."""

    name: str
    proc: subprocess.Popen
    log_path: Path | None = None
    port: int | None = None
    info: dict[str, Any] = field(default_factory=dict)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, timeout: float = 10.0) -> None:
        stop_process(self.proc, timeout)

    def log_tail(self, n: int = 2000) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        data = self.log_path.read_bytes()[-n:]
        return data.decode("utf-8", "replace")


def spawn(
    name: str,
    argv: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    cwd: Path | str | None = None,
    log_path: Path | None = None,
    stdout_pipe: bool = False,
) -> Child:
    proc = spawn_group(argv, env=env, cwd=cwd, log_path=log_path, stdout=subprocess.PIPE if stdout_pipe else None)
    return Child(name, proc, log_path)


def start_upstream(log_dir: Path, *, reply: str, kind: str = "aiohttp", number_replies: bool = False) -> Child:
    """The local OpenAI-compatible upstream, in its own process so that it does not share a GIL with the client.
    ``number_replies``: each reply starts with its number, so no two are alike (as with a real model)."""
    log_path = log_dir / "upstream.log"
    proc, port = start_upstream_process(
        reply=reply, kind=kind, log_path=log_path, env=dict(os.environ), number_replies=number_replies
    )
    return Child("upstream", proc, log_path, port=port)


def which_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def rmtree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
