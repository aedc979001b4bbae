"""heap.trim gives the allocator's free pages back: a trainer or a hot swap leaves a process no larger than it
needs (bench learning's rl arm grew by gigabytes a window and was killed before the trainer trimmed)."""

from __future__ import annotations

import sys

import pytest

from metaclaw_plugin.infra import heap


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim is Linux's")
def test_trim_returns_the_free_pages_of_a_fragmented_heap() -> None:
    # 300 MB in blocks above Python's small-object limit (so malloc's), every 64th kept: the heap's top stays
    # pinned, and without a trim the freed blocks between stay in the process
    blocks = [bytearray(1024) for _ in range(300_000)]
    kept = blocks[::64]
    del blocks
    before = _rss_mb()
    assert heap.trim() is True
    after = _rss_mb()
    del kept
    assert before - after > 150, (before, after)
