"""Shell commands for the workday runner (checkers and the agent's shell): bounded in time, memory and bytes.

``subprocess.run(..., capture_output=True, timeout=...)`` falls short three ways on a benchmark's
commands: a command that leaves a child holding the pipe (``sleep 60 &``, ``... | cat``) keeps it waiting
after the timeout kills the shell; one that prints gigabytes holds them all in memory; bytes that are not
UTF-8 raise. Here the command gets its own process group, killed whole on timeout; its output (stdout and
stderr together) is read by a thread that keeps only the first and last ``keep`` bytes; it is decoded with
replacement characters.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import threading
from dataclasses import dataclass


@dataclass
class Outcome:
    exit_code: int | None  # None: killed on timeout
    output: str  # the head and tail of stdout + stderr, decoded leniently
    output_bytes: int  # how many bytes it printed in all
    timed_out: bool = False


def run_bounded(command: str, *, cwd: str, env: dict[str, str], timeout: float, keep: int = 32_768) -> Outcome:
    p = subprocess.Popen(
        command,
        shell=True,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    head, tail = bytearray(), bytearray()
    total = [0]

    def pump() -> None:
        out = p.stdout
        assert isinstance(out, io.BufferedReader)
        while chunk := out.read1(65_536):
            total[0] += len(chunk)
            if len(head) < keep:
                take = keep - len(head)
                head.extend(chunk[:take])
                chunk = chunk[take:]
            tail.extend(chunk)
            if len(tail) > keep:
                del tail[: len(tail) - keep]

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    timed_out = False
    try:
        p.wait(timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    # The group goes either way: a finished shell may have left children that still hold the pipe.
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    p.wait()
    reader.join(5)
    if p.stdout is not None:
        p.stdout.close()
    skipped = total[0] - len(head) - len(tail)
    text = head.decode("utf-8", "replace")
    if skipped > 0:
        text += f"\n... ({skipped} bytes not kept) ...\n"
    text += tail.decode("utf-8", "replace")
    return Outcome(None if timed_out else p.returncode, text, total[0], timed_out)
