"""Give freed heap memory back to the system after a large transient allocation: a training step's activations,
a replaced model. glibc keeps freed blocks in its arenas, and PyTorch's CPU tensors of many sizes fragment them,
so a process that trains grew by gigabytes per window without this (``bench learning``'s rl arm on SmolLM2, 16
requests a day: 3.6 then 4.6 GB after days 1 and 2, 2.2 GB both times with a trim at the end of each day; larger
runs reached 12.8 GB and the kernel's OOM killer). It does not lower the peak within a step."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys
from typing import Any


@functools.cache
def _libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc if hasattr(libc, "malloc_trim") else None  # musl has none
    except OSError:
        return None


def trim() -> bool:
    """Return the heap's free pages to the system (glibc's ``malloc_trim``); False where there is no such call.
    Costs milliseconds on a large heap: for background threads, never the request path."""
    libc = _libc()
    return bool(libc is not None and libc.malloc_trim(0))
