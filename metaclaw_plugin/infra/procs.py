"""Processes on this machine: whether one is alive (the journal's replay and the trainer lock ask, to take over
what a dead process left behind), and, for the dev tools, benchmarks and tests, a free port and the one way to
start and stop a child in its own process group (stopping it stops what it spawned)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` now (the OS picks it; another process may still take it before use)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def spawn_group(
    argv: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    cwd: Path | str | None = None,
    log_path: Path | None = None,
    stdout: int | IO[Any] | None = None,
    **popen: Any,
) -> subprocess.Popen[bytes]:
    """Start ``argv`` in its own process group, stdin closed, stderr (and stdout unless ``stdout`` is given) to
    ``log_path`` or nowhere. Stop it with :func:`stop_process`."""
    log_f: int | IO[Any] = open(log_path, "wb") if log_path else subprocess.DEVNULL
    try:
        return subprocess.Popen(
            list(argv),
            env=env,
            cwd=str(cwd) if cwd else None,
            stdin=subprocess.DEVNULL,
            stdout=log_f if stdout is None else stdout,
            stderr=log_f,
            start_new_session=True,
            **popen,
        )
    finally:
        if not isinstance(log_f, int):
            log_f.close()


def stop_process(proc: subprocess.Popen[Any] | None, timeout: float = 10.0) -> None:
    """Stop a child started in its own process group: SIGTERM to the group, then SIGKILL after ``timeout``."""
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    except PermissionError:
        proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            proc.kill()
        proc.wait(5)
