"""``bench memory`` on its own scenario set (benchmarks/scenarios/memory): the issue's targets with the rule extractor,
and implicit facts reaching later requests with the scripted model extractor (labelled as scripted)."""

from __future__ import annotations

import pytest

from metaclaw_bench import memory as bench

pytestmark = pytest.mark.slow


def test_memory_bench_meets_the_targets() -> None:
    r = bench.run(n_memories=2000)
    rules, model = r["arms"]["rules"], r["arms"]["scripted-model"]
    c = r["counts"]
    assert c["facts"] >= 40 and len(c["languages"]) >= 5 and c["supersessions"] >= 6
    assert (c["secrets"], c["poison"], c["unrelated"]) == (6, 8, 20)
    assert rules["extractor"].startswith("rules") and model["extractor"].startswith("model: scripted")
    assert rules["reach_explicit"] >= 0.9, rules["misses"]
    assert rules["unrelated_rate"] <= 0.05, rules["unrelated_details"]
    for arm in (rules, model):
        assert arm["supersession_right"] == "6/6"
        assert arm["leaks"] == 0, arm["leak_details"]
        assert arm["secrets_stored_raw"] == arm["secrets_injected_raw"] == arm["poison_injected"] == 0
    # implicit facts ("the runners have no GPU, that's why it timed out"): the model distils them, and without a model
    # the user's own words reach the later request as a passage
    assert model["reach_implicit"] >= 0.6 and rules["reach_implicit"] >= 0.6
    assert r["latency"]["memory_section_p50_us"] > 0  # measured, not asserted against a clock: see the benchmark
