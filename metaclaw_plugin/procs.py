"""Whether a process on this machine is alive: the journal's replay and the trainer lock both ask, to take over
what a dead process left behind."""

from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True
