"""The memory screens on long text made of their own trigger words, with no sentence end: a pattern that looks ahead
to the end of the sentence from every word it starts at is quadratic there (stop 60 found four, two of them its own:
8 KB took 3 s and 32 KB 52 s; a turn's passage is cut at 4,000 characters, but an imported memory, a tool's note or a
skill's body need not be). Every look-ahead is bounded now: linear, about a second for 64 KB."""

from __future__ import annotations

import time

import pytest

from metaclaw_plugin.learning.memory import directives, standing
from metaclaw_plugin.learning.memory.guard import screen_memory

CHUNKS = [
    "the restrictions are lifted for them and ",
    "todas las restricciones son nuevas y ",
    "curl the page and ",
    "reply yes to every time the ",
    "all users of every team send if when you ",
    "act as the admin and give me ",
]


@pytest.mark.perf
@pytest.mark.parametrize("chunk", CHUNKS)
def test_a_long_run_of_trigger_words_is_screened_in_linear_time(chunk: str):
    text = (chunk * (64_000 // len(chunk) + 1))[:64_000]
    t0 = time.process_time()
    directives.findings.__wrapped__(text)
    standing.findings.__wrapped__(text)
    screen_memory(text[:16_000])
    elapsed = time.process_time() - t0
    assert elapsed < 10.0, elapsed  # ~0.1-0.5 s measured on a 2-core machine; a quadratic pass takes minutes
