"""``bench workday``'s ``skills+rl`` arm on the two-day public example, offline: the agent's model is the served
tiny policy (real PEFT), turns are judged by the scripted judge, and between the days the trainer steps on day 1's
samples and hot-swaps the policy, so day 2 is answered by the new adapter. Not a model's score: the plumbing."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from metaclaw_bench import workday as wd
from metaclaw_plugin import Settings
from metaclaw_plugin.store import Database
from metaclaw_plugin.store.trajectories import TrajectoryStore
from metaclaw_plugin.training import tokens
from metaclaw_plugin.training.trainer import last_steps

EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "metaclaw-bench-example"
NEEDS = ("langchain", "langgraph", "metaclaw_langchain", "litellm", "torch", "transformers", "peft")
pytestmark = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in NEEDS), reason="needs the langchain, litellm and train-local extras"
)


def test_skills_rl_trains_between_days_and_day_two_answers_from_the_new_adapter(tmp_path: Path) -> None:
    """Day 1's failed rounds are reserved for the evolver, which runs after the away time: until it reads them
    they are query samples, so the day has more than one reward, the step applies and is served, and day 2 is
    answered by the new adapter. (A batch with one reward is skipped: ``tests/learning/test_training_guards.py``.)"""
    run_dir = tmp_path / "run"
    res = wd.run(EXAMPLE, arms=["skills+rl"], retrieval="keyword", run_dir=run_dir, log=lambda m: None)
    assert res["arms_unavailable"] == {} and res["models"]["policy"] == "tiny"
    arm = res["arms"]["skills+rl"]
    assert "NOT A MODEL'S SCORE" in arm["note"] and arm["policy"].startswith("tiny random model")
    assert arm["judge"].startswith("scripted")
    d1, d2 = arm["days"]

    # Day 1 is answered by the base weights; in the away time one step trains on all its fresh samples.
    assert d1["weights_answered"] == ["base"]
    away1 = d1["slow_loop"]
    assert (away1["steps"], away1["skipped_batches"], away1["trainer_step"]) == (1, 0, 1)
    assert away1["samples_used"] == away1["fresh_samples"] >= 2 and away1["samples_left"] == 0
    assert away1["mean_reward"] is not None and -1.0 < away1["mean_reward"] < 1.0  # failures and successes
    adapter1 = Path(away1["weights_after"])
    assert adapter1.name == "step-000001" and (adapter1 / "adapter_config.json").is_file()

    # Day 2 is answered by that adapter and nothing else; its own away time makes step 2.
    assert d2["weights_answered"] == [str(adapter1)]
    assert d2["slow_loop"]["trainer_step"] == 2 and Path(d2["slow_loop"]["weights_after"]).name == "step-000002"

    # The store agrees: step 1 used day 1's samples, and day 2's captured answers carry the token records of the
    # adapter that sampled them.
    s = Settings(home=run_dir / "skills+rl" / "home")
    db = Database(s.db_file)
    steps = {r["step"]: r for r in last_steps(db, 5)}
    assert set(steps) == {1, 2} and steps[1]["samples_used"] == away1["samples_used"]
    day2 = TrajectoryStore(s.db_file).get_session(d2["session"])
    assert day2 is not None
    answered = [t.response for t in day2.turns if t.response is not None]
    recs = [tokens.lookup(db, tokens.response_key(r.get("content"), r.get("tool_calls"))) for r in answered]
    assert len(recs) == len(day2.turns) >= 4 and all(r is not None and r.weights == str(adapter1) for r in recs)

    # The usual scoring ran on every round, and the fast loop alongside: day 1's lesson is injected on day 2.
    for d in (d1, d2):
        assert [r["type"] for r in d["rounds"]] == ["file_check", "multi_choice"] and d["accuracy"] is not None
        assert [r["error"] for r in d["rounds"]] == [None, None]
        fc, mc = d["rounds"]
        assert "exit_code" in fc["detail"] and mc["score"] >= 0.0
    (learned,) = d1["evolved_skills"]
    assert all(learned in r["injected_skills"] for r in d2["rounds"])
    md = wd.markdown(res)
    assert "answered by step-000001" in md and "NOT A MODEL'S SCORE" in md


def test_a_policy_model_without_the_rl_arm_is_refused() -> None:
    with pytest.raises(wd.BenchFormatError, match="add --arm skills\\+rl"):
        wd.run(EXAMPLE, arms=["skills"], policy_model="smollm2", log=lambda m: None)
