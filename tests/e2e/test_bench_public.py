"""``bench workday`` on the public MetaClaw-Bench layout, read unchanged: the two-day example in
tests/data (a copy of ../shared/bench-format/example-bench), played end to end with the scripted policy
and the scripted evolver; \\bbox scoring; resume; a LiteLLM model string against a local upstream."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from metaclaw_bench import workday as wd

EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "metaclaw-bench-example"
HAS_LANGCHAIN = all(importlib.util.find_spec(m) for m in ("langchain", "langgraph", "metaclaw_langchain", "litellm"))
needs_langchain = pytest.mark.skipif(not HAS_LANGCHAIN, reason="needs the langchain and litellm extras")


# Reading -------------------------------------------------------------------------------------------------
def test_the_public_layout_is_read_as_published() -> None:
    b = wd.load_bench(EXAMPLE)
    assert (b.layout, [d.id for d in b.days]) == ("public", ["day01", "day02"])
    assert b.workspace == EXAMPLE / "workspaces" / "shared"
    d1 = b.days[0]
    assert d1.tags == ["units"] and d1.session.startswith("day01_")
    assert d1.history == [
        {"role": "user", "content": "Morning! Day 1 of the greenhouse week; today's files are in day01/."},
        {"role": "assistant", "content": "Good morning. I will look at day01/ and wait for your first task."},
    ]
    assert d1.scripts == EXAMPLE / "eval" / "scripts"
    r1, r2 = d1.rounds
    assert (r1.type, r1.check, r1.expect_exit) == (
        "file_check",
        "python scripts/check_units.py day01/sensors.json temperature humidity",
        0,
    )
    assert r1.feedback_incorrect.startswith("Every measurement must be an object")
    assert (r2.type, r2.answer, sorted(r2.options)) == ("multi_choice", ["A", "D"], ["A", "B", "C", "D"])
    assert r2.prompt() == r2.question, "the public question already lists the options"
    assert r2.feedback_incorrect.splitlines()[1] == "B: Incorrect: a bare number."


def test_a_broken_public_round_is_unscored_with_the_problem_named(tmp_path: Path) -> None:
    """A round that cannot be scored does not stop the benchmark: it is marked, with why."""
    import shutil

    root = tmp_path / "b"
    shutil.copytree(EXAMPLE, root)
    q = root / "eval" / "day02" / "questions.json"
    data = json.loads(q.read_text())
    del data["rounds"][0]["eval"]["command"]
    q.write_text(json.dumps(data))
    b = wd.load_bench(root)
    assert [r.unscored for r in b.days[1].rounds] == ["eval.command is missing", None]
    assert [r.unscored for r in b.days[0].rounds] == [None, None]


# Scoring ---------------------------------------------------------------------------------------------------
def _mc(answer: list[str], options: str = "ABCD") -> wd.Round:
    return wd.Round(id="q", type="multi_choice", question="?", options={k: k for k in options}, answer=answer)


@pytest.mark.parametrize(
    "text, score, exact",
    [
        ("\\bbox{A,D}", 1.0, True),  # exact
        ("So: \\bbox{ d , a }", 1.0, True),  # order, spaces, lowercase
        ("\\bbox{A D}", 1.0, True),  # spaces instead of commas
        ("\\bbox{AD}", 1.0, True),  # letters run together
        ("\\bbox{A and D}", 1.0, True),  # joiner words are not options
        ("\\bbox{A}", 0.75, False),  # partial: one false negative of four options
        ("\\bbox{A,B,D}", 0.75, False),  # partial: one false positive
        ("\\bbox{B,C}", 0.0, False),  # 2 fp + 2 fn
        ("first \\bbox{B} then \\bbox{A,D}", 1.0, True),  # several boxes: the last one counts
        ("A and D", 0.0, False),  # missing
        ("\\bbox{A,D", 0.0, False),  # malformed: never closed
        ("\\bbox{}", 0.5, False),  # empty box: two false negatives
    ],
)
def test_bbox_scoring(text: str, score: float, exact: bool) -> None:
    got = wd.score_multi_choice(_mc(["A", "D"]), text)
    assert (got["score"], got["passed"]) == (pytest.approx(score), exact)


def test_missing_and_malformed_boxes_say_which() -> None:
    assert "no \\bbox" in wd.score_multi_choice(_mc(["A"]), "A")["detail"]
    assert "malformed" in wd.score_multi_choice(_mc(["A"]), "\\bbox{A")["detail"]


def test_file_check_runs_the_public_command_with_scripts_reachable(tmp_path: Path) -> None:
    b = wd.load_bench(EXAMPLE)
    day, rnd = b.days[0], b.days[0].rounds[0]
    ws = tmp_path / "ws"
    (ws / "day01").mkdir(parents=True)
    (ws / "scripts").mkdir()  # the agent's own scripts/ is set aside during the check, then restored
    (ws / "scripts" / "mine.txt").write_text("x")
    bare = [{"sensor": "n1", "temperature": 21.5, "humidity": 40}]
    (ws / "day01" / "sensors.json").write_text(json.dumps(bare))
    assert wd.run_check(rnd, day, ws) | {"detail": ""} == {"score": 0.0, "passed": False, "exit_code": 1, "detail": ""}
    ok = [{"sensor": "n1", "temperature": {"value": 21.5, "unit": "degC"}, "humidity": {"value": 40, "unit": "%RH"}}]
    (ws / "day01" / "sensors.json").write_text(json.dumps(ok))
    res = wd.run_check(rnd, day, ws)
    assert (res["passed"], res["exit_code"], res["detail"]) == (True, 0, "OK")
    assert (ws / "scripts" / "mine.txt").read_text() == "x" and not (ws / ".scripts.agent").exists()
    rnd.expect_exit = 1  # expect_exit is what passes, not 0
    assert wd.run_check(rnd, day, ws)["passed"] is False


# End to end with the scripted policy -----------------------------------------------------------------------------
@needs_langchain
def test_the_example_day_by_day_with_the_scripted_policy(tmp_path: Path) -> None:
    bench = wd.load_bench(EXAMPLE)
    model = wd.scripted_model("scripted")
    runner = wd.ArmRunner(bench, "baseline", tmp_path / "run", lambda: model, max_steps=5, log=lambda m: None)
    d1 = runner.run_day(bench.days[0], None)
    d2 = runner.run_day(bench.days[1], runner.workspace / "day01")
    from langchain_core.messages import AIMessage, HumanMessage

    # day 1: the file is written with bare numbers (checker exit 1); the multi-choice round, asked after
    # round 1's feedback, picks the value/unit options.
    r1, r2 = d1["rounds"]
    assert (r1["score"], r1["detail"]["exit_code"], r1["tool_calls"]) == (0.0, 1, 2)
    assert (r2["score"], r2["detail"]["chosen"]) == (1.0, ["A", "D"])
    assert r1["feedback"].startswith("Every measurement") and r2["feedback"].startswith("Right: A and D")
    # The opening conversation is replayed before the first round, as history.
    first = model.seen[0]
    assert isinstance(first[1], HumanMessage) and first[1].content.startswith("Morning! Day 1")
    assert isinstance(first[2], AIMessage) and first[2].content.startswith("Good morning. I will look at day01/")
    assert first[3].content.startswith("Turn the readings in day01/sensors_raw.txt")
    # Feedback is delivered: round 2's call has round 1's feedback as the user message before its question.
    r2_call = next(c for c in model.seen if any("Which of these are written" in str(m.content) for m in c))
    users = [m.content for m in r2_call if isinstance(m, HumanMessage)]
    assert users[-2].startswith("Feedback on your previous answer: Every measurement must be an object")
    # day 2 runs in a fresh copy that carries day 1's work; day 1's folder is left as day 1 ended.
    ws1, ws2 = runner.workspace / "day01", runner.workspace / "day02"
    assert json.loads((ws2 / "day01" / "sensors.json").read_text())[0] == {
        "sensor": "north-1",
        "temperature": 21.5,
        "humidity": 40,
    }
    assert (ws2 / "day02" / "weekly.json").exists() and not (ws1 / "day02" / "weekly.json").exists()
    assert json.loads((ws2 / "day02" / "weekly.json").read_text()) == {"avg_temperature": 20.0, "avg_humidity": 46.0}
    assert [r["score"] for r in d2["rounds"]] == [0.0, pytest.approx(0.6667)]
    assert d2["opening_messages"] == 2 and d1["tokens_per_round"] > 0
    # one session a day
    assert (d1["session"], d2["session"]) == ("baseline-day01", "baseline-day02")


@pytest.fixture(scope="module")
def full_run() -> dict[str, Any]:
    if not HAS_LANGCHAIN:
        pytest.skip("needs the langchain and litellm extras")
    return wd.run(EXAMPLE, arms=["baseline", "skills"], retrieval="keyword", log=lambda m: None)


def _outcomes(res: dict[str, Any]) -> dict[str, list[tuple]]:
    return {
        a: [
            (d["day"], r["id"], r["score"], r["passed"], tuple(r["injected_skills"]), json.dumps(r["detail"]))
            for d in x["days"]
            for r in d["rounds"]
        ]
        for a, x in res["arms"].items()
    }


@needs_langchain
def test_arms_side_by_side_and_the_lesson_that_reaches_day_two(full_run: dict[str, Any]) -> None:
    res = full_run
    assert res["plumbing_run"] and "not a model's score" in res["note"] and "scripted" in res["note"]
    assert res["models"] == {"agent": "scripted:scripted", "evolver": "scripted", "judge": None, "api_base": None}
    assert res["commit"] and res["bench"]["layout"] == "public"
    assert set(res["arms"]) == {"baseline", "skills"} and res["arms_unavailable"] == {}
    base, skills = res["arms"]["baseline"], res["arms"]["skills"]
    assert [[r["score"] for r in d["rounds"]] for d in base["days"]] == [[0.0, 1.0], [0.0, pytest.approx(0.6667)]]
    # The skills arm learned from day 1's feedback (an empty library at the start) and passes day 2's file check.
    assert skills["library"].startswith("empty")
    assert [[r["score"] for r in d["rounds"]] for d in skills["days"]] == [[0.0, 1.0], [1.0, pytest.approx(0.6667)]]
    (learned,) = [n for n, src in skills["days"][0]["evolved_skills"].items() if "skills-day01" in src]
    assert all(learned in r["injected_skills"] for r in skills["days"][1]["rounds"])
    assert skills["days"][0]["rounds"][0]["injected_skills"] == []
    assert (base["accuracy"], base["completion"]) == (pytest.approx(0.4167), 0.0)
    assert (skills["accuracy"], skills["completion"]) == (pytest.approx(0.6667), 0.5)
    assert res["comparison"]["skills"]["accuracy_delta"] == pytest.approx(0.25)
    assert skills["tokens_per_round"] > base["tokens_per_round"] > 0  # the injected block costs tokens
    assert skills["lesson_reach"]["per_tag"] == {"units": {"reached": 2, "rounds": 2, "rate": 1.0}}
    md = wd.markdown(res)
    assert "not a model's score" in md


@needs_langchain
@pytest.mark.slow
def test_resume_gives_the_same_result_as_an_uninterrupted_run(tmp_path: Path, full_run: dict[str, Any]) -> None:
    run_dir = tmp_path / "run"
    kw: dict[str, Any] = {"arms": ["baseline", "skills"], "retrieval": "keyword", "log": lambda m: None}
    part = wd.run(EXAMPLE, run_dir=run_dir, stop_after_days=3, **kw)
    assert part["interrupted"] and [d["day"] for d in part["arms"]["skills"]["days"]] == ["day01"]
    with pytest.raises(wd.BenchFormatError, match="--resume"):
        wd.run(EXAMPLE, run_dir=run_dir, **kw)
    done = wd.run(EXAMPLE, run_dir=run_dir, resume=True, **kw)
    assert "interrupted" not in done and done["resumed"] == 1
    assert _outcomes(done) == {a: v for a, v in _outcomes(full_run).items() if a in ("baseline", "skills")}
    assert json.loads((run_dir / "progress.json").read_text())["arms"]["skills"]["lesson_reach"]["overall"] == {
        "reached": 2,
        "rounds": 2,
        "rate": 1.0,
    }


@needs_langchain
def test_lesson_reach_keyword_says_it_is_not_a_models_score() -> None:
    doc = wd.reach_by_mode(EXAMPLE, ["keyword"], log=lambda m: None)
    assert doc["modes"]["keyword"]["overall"] == {"reached": 2, "rounds": 2, "rate": 1.0}
    assert "NOT A MODEL'S SCORE" in wd.reach_markdown(doc)


@needs_langchain
@pytest.mark.embeddings
@pytest.mark.parametrize("mode", ["embedding", "hybrid"])
def test_lesson_reach_with_embeddings(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("chromadb")
    monkeypatch.delenv("METACLAW_RETRIEVAL__MODE", raising=False)  # the mode is set explicitly instead
    doc = wd.reach_by_mode(EXAMPLE, [mode], log=lambda m: None)
    r = doc["modes"][mode]
    assert r["overall"]["rounds"] == 2 and 0 <= r["overall"]["reached"] <= 2


@needs_langchain
def test_any_model_via_a_litellm_string_against_a_local_upstream(tmp_path: Path) -> None:
    """--model openai/x --api-base <local upstream>: the same benchmark against an OpenAI-compatible server."""
    from click.testing import CliRunner

    from metaclaw_plugin.cli import main as cli_main
    from metaclaw_plugin.devtools.upstream import Upstream

    units = [
        {"sensor": "north-1", "temperature": {"value": 21.5, "unit": "degC"}, "humidity": {"value": 40, "unit": "%RH"}}
    ]

    def script(body: dict[str, Any]) -> Any:
        last = body["messages"][-1]
        text = str(last.get("content") or "")
        if last["role"] == "tool":
            return "Wrote it."
        if "sensors_raw" in text:
            return {
                "content": "",
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "day01/sensors.json", "content": json.dumps(units)}}
                ],
            }
        if "\\bbox" in text:
            return "\\bbox{A,D}" if "records need" in text else "\\bbox{B}"
        return "Noted."

    with Upstream(script=script) as up:
        res = CliRunner().invoke(
            cli_main,
            [
                "bench",
                "workday",
                str(EXAMPLE),
                "--json",
                "--arm",
                "baseline",
                "--model",
                "openai/x",
                "--api-base",
                up.url,
                "--api-key",
                "sk-local",
                "--judge-model",
                "openai/judge",
                "--evolver-model",
                "openai/evolver",
            ],
        )
        sent = len(up.requests)
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["plumbing_run"] is False and doc["models"] == {
        "agent": "openai/x",
        "evolver": "openai/evolver",
        "judge": "openai/judge",
        "api_base": up.url,
    }
    rounds = [r for d in doc["arms"]["baseline"]["days"] for r in d["rounds"]]
    assert [(r["id"], r["score"]) for r in rounds] == [("r1", 1.0), ("r2", 1.0), ("r1", 0.0), ("r2", 0.0)]
    assert all(r["tokens"] > 0 for r in rounds) and sent >= 9


@needs_langchain
@pytest.mark.slow
def test_resume_after_the_process_is_killed(tmp_path: Path, full_run: dict[str, Any]) -> None:
    """A real interruption: the CLI is killed once day 1 is in progress.json; --resume finishes the run."""
    import os
    import signal
    import subprocess
    import sys

    from waiting import wait_for

    cli = str(Path(sys.executable).with_name("metaclaw-plugin"))
    run_dir = tmp_path / "run"
    args = [cli, "bench", "workday", str(EXAMPLE), "--arm", "baseline", "--run-dir", str(run_dir), "--json"]
    env = dict(os.environ, METACLAW_BENCH_CACHE=str(tmp_path / "cache"))
    p = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    progress = run_dir / "progress.json"
    try:
        wait_for(
            lambda: len(json.loads(progress.read_text())["arms"]["baseline"]["days"]) >= 1,
            120,
            "day 1 in progress.json",
            ignore=(OSError, ValueError, KeyError),
            stop=lambda: p.poll() is not None and "the run ended before it could be interrupted",
        )
        os.killpg(p.pid, signal.SIGKILL)
    finally:
        p.wait(10)
    done = subprocess.run([*args, "--resume"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    doc = json.loads(done.stdout)
    assert doc["resumed"] == 1 and _outcomes(doc) == {"baseline": _outcomes(full_run)["baseline"]}


# The reference's memory arms -------------------------------------------------------------------------------
FACT = "Remember that every measurement must carry its unit, as a value and unit object"


def _example_with_a_stated_fact(tmp_path: Path) -> Path:
    """The example, with day 1's first feedback stating the lesson as a fact to remember. (As published, its
    feedback states it as a correction, which the rule extractor leaves alone: a model extractor's job.)"""
    import shutil

    bench = tmp_path / "bench"
    shutil.copytree(EXAMPLE, bench)
    q = bench / "eval" / "day01" / "questions.json"
    doc = json.loads(q.read_text())
    fb = doc["rounds"][0]["feedback"]
    fb["incorrect"] = f"Wrong. {FACT}: {fb['incorrect']}"
    q.write_text(json.dumps(doc))
    return bench


@needs_langchain
def test_memory_arms_carry_a_fact_from_day_one_feedback_into_day_two(tmp_path: Path) -> None:
    res = wd.run(
        _example_with_a_stated_fact(tmp_path),
        arms=["skills", "memory", "skills+memory"],
        retrieval="keyword",
        log=lambda m: None,
    )
    assert set(res["arms"]) == {"skills", "memory", "skills+memory"} and res["arms_unavailable"] == {}
    for arm in ("memory", "skills+memory"):
        days = res["arms"][arm]["days"]
        assert days[0]["rounds"][0].get("injected_memories") is None, arm  # nothing said before day 1's first round
        assert days[0]["memories_active"].get("fact", 0) >= 1 and days[0]["memory_extractor"] == "rules", arm
        for r in days[1]["rounds"]:  # day 2, a new session: the fact the user stated on day 1 reaches it
            assert any("every measurement must carry its unit" in m for m in r["injected_memories"]), (arm, r)
        assert res["arms"][arm]["memory_reach"] == {
            "rounds_with_memory": 2,
            "rounds": 2,
            "rate": 1.0,
            "extractor": "rules",
        }
    mem = res["arms"]["memory"]
    assert all(r["injected_skills"] == [] for d in mem["days"] for r in d["rounds"])  # no skills in `memory`
    assert mem["days"][-1]["evolved_skills"] == {} and "lesson_reach" not in mem
    skills = res["arms"]["skills"]
    assert "memory_reach" not in skills  # memory is off in the skills arm
    assert all("injected_memories" not in r for d in skills["days"] for r in d["rounds"])
    both = res["arms"]["skills+memory"]
    assert any(r["injected_skills"] for r in both["days"][1]["rounds"])  # and its skills still evolve and reach
    assert "Memory reach (memory, rules extractor): 2 of 2" in wd.markdown(res)
