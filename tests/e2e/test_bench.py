"""The benchmark harness: scoring and plumbing of the workday runner, and the bench commands' JSON."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from metaclaw_bench import workday as wd

CLI = str(Path(sys.executable).with_name("metaclaw-plugin"))
HAS_LANGCHAIN = importlib.util.find_spec("langchain") is not None and importlib.util.find_spec("langgraph") is not None
needs_langchain = pytest.mark.skipif(not HAS_LANGCHAIN, reason="needs the langchain extra")


# Scoring ----------------------------------------------------------------------------------------------
def _mc(answer: list[str], options: str = "ABCD") -> wd.Round:
    return wd.Round(id="q", type="multi_choice", question="?", options={k: k for k in options}, answer=answer)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("\\bbox{B,C}", 1.0),
        ("I think \\bbox{ c , b }", 1.0),  # order, case and spaces do not matter
        ("\\bbox{B}", 0.75),  # one false negative out of 4 options
        ("\\bbox{A,B,C}", 0.75),  # one false positive
        ("\\bbox{A,D}", 0.0),  # 2 fp + 2 fn
        ("first \\bbox{A} then, on reflection, \\bbox{B,C}", 1.0),  # the last box counts
        ("B and C", 0.0),  # no box: unparseable, 0
    ],
)
def test_multi_choice_score_is_one_minus_errors_over_options(text: str, expected: float) -> None:
    assert wd.score_multi_choice(_mc(["B", "C"]), text)["score"] == pytest.approx(expected)


def test_multi_choice_passed_only_when_exact() -> None:
    r = _mc(["B", "C"])
    assert wd.score_multi_choice(r, "\\bbox{B,C}")["passed"]
    assert not wd.score_multi_choice(r, "\\bbox{B}")["passed"]
    assert wd.score_multi_choice(r, "\\bbox{B,D}")["fp"] == 1


def _day(tmp_path: Path, checks: dict[str, str]) -> wd.Day:
    d = tmp_path / "day01"
    (d / "checks").mkdir(parents=True)
    for name, body in checks.items():
        (d / "checks" / name).write_text(textwrap.dedent(body))
    return wd.Day(id="day01", path=d, rounds=[])


def test_file_check_uses_exit_code_and_optional_partial_score(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    day = _day(
        tmp_path,
        {
            "ok.py": "import os, sys; sys.exit(0 if os.path.exists('out.txt') else 1)",
            "partial.py": "import sys; print('SCORE=0.5'); sys.exit(1)",
            "slow.py": "import time; time.sleep(5)",
        },
    )
    rnd = wd.Round(id="r", type="file_check", question="?", check="python3 {checks}/ok.py")
    res = wd.run_check(rnd, day, ws)
    assert (res["score"], res["passed"], res["exit_code"]) == (0.0, False, 1)
    (ws / "out.txt").write_text("x")  # the checker runs in the workspace
    res = wd.run_check(rnd, day, ws)
    assert (res["score"], res["passed"], res["exit_code"]) == (1.0, True, 0)
    part = wd.run_check(wd.Round(id="p", type="file_check", question="?", check="python3 {checks}/partial.py"), day, ws)
    assert (part["score"], part["passed"]) == (0.5, False)
    slow = wd.run_check(
        wd.Round(id="s", type="file_check", question="?", check="python3 {checks}/slow.py", timeout=0.5), day, ws
    )
    assert not slow["passed"] and "timed out" in slow["detail"]


# The format ---------------------------------------------------------------------------------------------
def write_bench(
    root: Path,
    days: dict[str, list[dict]],
    *,
    workspace: dict[str, str] | None = None,
    day_files: dict[str, dict[str, str]] | None = None,
    checks: dict[str, dict[str, str]] | None = None,
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "bench.yaml").write_text(yaml.safe_dump({"format": wd.FORMAT, "name": "t", "days": list(days)}))
    for rel, text in (workspace or {}).items():
        p = root / "workspace" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    for day, rounds in days.items():
        (root / day).mkdir(exist_ok=True)
        (root / day / "questions.yaml").write_text(yaml.safe_dump({"rounds": rounds}))
        for rel, text in (day_files or {}).get(day, {}).items():
            p = root / day / "workspace" / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
        for name, body in (checks or {}).get(day, {}).items():
            p = root / day / "checks" / name
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(textwrap.dedent(body))
    return root


@pytest.mark.parametrize(
    "round_, message",
    [
        ({"id": "a", "type": "essay", "question": "?"}, "type must be one of"),
        ({"id": "a", "type": "file_check", "question": "?"}, "needs a check command"),
        (
            {"id": "a", "type": "multi_choice", "question": "?", "options": {"A": "x", "B": "y"}, "answer": ["C"]},
            "not among the options",
        ),
        (
            {"id": "a", "type": "multi_choice", "question": "?", "options": {"A": "x"}, "answer": "A"},
            "at least two options",
        ),
        ({"type": "file_check", "question": "?", "check": "true"}, "without an id"),
    ],
)
def test_format_errors_name_the_problem(tmp_path: Path, round_: dict, message: str) -> None:
    write_bench(tmp_path / "b", {"day01": [round_]})
    with pytest.raises(wd.BenchFormatError, match=message):
        wd.load_bench(tmp_path / "b")


def test_shipped_scenarios_are_valid_and_small() -> None:
    bench = wd.load_bench(wd.default_scenarios())
    assert 3 <= len(bench.days) <= 5
    types = {r.type for d in bench.days for r in d.rounds}
    assert types == {"file_check", "multi_choice"}
    assert all(r.solution for d in bench.days for r in d.rounds), "every round ships an oracle solution"


# Plumbing of the runner ---------------------------------------------------------------------------------
FEEDBACK_BENCH = {
    "day01": [
        {
            "id": "r1",
            "type": "multi_choice",
            "question": "Pick the right one",
            "options": {"A": "a", "B": "b"},
            "answer": ["B"],
            "feedback": {"correct": "FB-R1-GOOD", "incorrect": "FB-R1-BAD"},
            "solution": [{"answer": "\\bbox{A}"}],
        },  # deliberately wrong
        {
            "id": "r2",
            "type": "file_check",
            "question": "Write done.txt",
            "check": "test -f done.txt",
            "feedback": {"correct": "FB-R2-GOOD", "incorrect": "FB-R2-BAD"},
            "solution": [{"tool": "write_file", "args": {"path": "done.txt", "content": "ok"}}, {"answer": "written"}],
        },
    ]
}


def _human_texts(call: list) -> list[str]:
    from langchain_core.messages import HumanMessage

    return [m.content for m in call if isinstance(m, HumanMessage)]


@needs_langchain
def test_feedback_is_the_next_user_message(tmp_path: Path) -> None:
    bench = wd.load_bench(write_bench(tmp_path / "b", FEEDBACK_BENCH))
    model = wd.scripted_model("oracle")
    runner = wd.ArmRunner(bench, "baseline", tmp_path / "run", lambda: model, max_steps=5, log=lambda m: None)
    out = runner.run_day(bench.days[0], None)
    r1, r2 = out["rounds"]
    assert (r1["score"], r1["feedback"]) == (0.0, "FB-R1-BAD")
    assert (r2["score"], r2["passed"], r2["feedback"]) == (1.0, True, "FB-R2-GOOD")
    # Round 1's feedback is the next user message, on its own; round 2's question follows it.
    r2_call = next(c for c in model.seen if any("Write done.txt" in t for t in _human_texts(c)))
    users = _human_texts(r2_call)
    assert users[-2:] == ["Feedback on your previous answer: FB-R1-BAD", "Write done.txt"]
    # The last round's feedback still arrives, as one more user message in the same conversation.
    final_user = _human_texts(model.seen[-1])
    assert final_user[-1] == "Feedback on your previous answer: FB-R2-GOOD"
    assert any("Pick the right one" in t for t in final_user), "the day is one conversation"
    assert out["accuracy"] == 0.5 and out["completion"] == 1.0


@needs_langchain
def test_workspace_persists_from_day_to_day(tmp_path: Path) -> None:
    days = {
        "day01": [
            {
                "id": "a1",
                "type": "file_check",
                "question": "Start a journal",
                "check": "grep -q monday journal.txt",
                "solution": [
                    {"tool": "run_shell", "args": {"command": "echo monday >> journal.txt"}},
                    {"answer": "ok"},
                ],
            }
        ],
        "day02": [
            {
                "id": "b1",
                "type": "file_check",
                "question": "Continue the journal",
                "check": "python3 {checks}/b1.py",
                "solution": [
                    {"tool": "run_shell", "args": {"command": "echo tuesday >> journal.txt"}},
                    {"answer": "ok"},
                ],
            }
        ],
    }
    checks = {
        "day02": {
            "b1.py": """
        import sys
        lines = open('journal.txt').read().split()
        memo = open('memo.txt').read().strip()
        base = open('base.txt').read().strip()
        sys.exit(0 if lines == ['monday', 'tuesday'] and memo == 'day2 version' and base == 'from the start' else 1)
        """
        }
    }
    root = write_bench(
        tmp_path / "b",
        days,
        workspace={"base.txt": "from the start", "memo.txt": "day1 version"},
        day_files={"day02": {"memo.txt": "day2 version"}},
        checks=checks,
    )
    res = wd.run(root, arms=["baseline"], log=lambda m: None, keep_workspace=True)
    try:
        days_out = res["arms"]["baseline"]["days"]
        assert [d["accuracy"] for d in days_out] == [1.0, 1.0]
        assert days_out[1]["files_added"] == 1
        ws = Path(res["workspace"]) / "baseline" / "days" / "day02"
        assert (ws / "journal.txt").read_text().split() == ["monday", "tuesday"]
        assert not (ws / "b1.py").exists(), "checkers are never copied into the agent's workspace"
    finally:
        import shutil

        shutil.rmtree(res["workspace"], ignore_errors=True)


def test_sandbox_keeps_tools_inside_the_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "secret.txt").write_text("s3cret")
    sb = wd.Sandbox(ws)
    assert "wrote" in sb.write_file("a/b.txt", "hi")
    assert sb.read_file("a/b.txt") == "hi"
    with pytest.raises(ValueError, match="outside the workspace"):
        sb.read_file("../secret.txt")
    os.symlink(tmp_path / "secret.txt", ws / "link.txt")
    with pytest.raises(ValueError, match="outside the workspace"):
        sb.read_file("link.txt")
    out = sb.run_shell("pwd; echo $HOME; env | grep -c METACLAW_ || true")
    assert str(ws.resolve()) in out and out.strip().endswith("0")


@needs_langchain
def test_plugin_arm_injects_skills_and_records_the_rounds(tmp_path: Path) -> None:
    if importlib.util.find_spec("metaclaw_langchain") is None:
        pytest.skip("the LangChain adapter is not installed")
    days = {
        "day01": [
            {
                "id": "c1",
                "type": "file_check",
                "question": "Export the customer list to a spreadsheet file; a lot of the addresses have commas in them",
                "check": "test -f customers.csv",
                "solution": [
                    {"tool": "write_file", "args": {"path": "customers.csv", "content": 'a,"b, c"\n'}},
                    {"answer": "done"},
                ],
            }
        ]
    }
    from metaclaw_plugin.skillbank.bank import bundled_skills_dir

    bench = wd.load_bench(write_bench(tmp_path / "b", days))
    model = wd.scripted_model("oracle")
    runner = wd.ArmRunner(
        bench,
        "skills",
        tmp_path / "run",
        lambda: model,
        max_steps=5,
        plugin_settings={"mode": "skills_only"},
        skills_dir=bundled_skills_dir(),
        log=lambda m: None,
    )
    try:
        out = runner.run_day(bench.days[0], None)
    finally:
        runner.close()
    from langchain_core.messages import SystemMessage

    systems = [m.content for call in model.seen for m in call if isinstance(m, SystemMessage)]
    assert any("<metaclaw-skills>" in s and "csv-quoting" in s for s in systems)
    assert "csv-quoting" in out["rounds"][0]["injected_skills"]
    assert out["skills_active"] >= 40 and out["accuracy"] == 1.0


# The commands in --quick mode produce one valid JSON document ----------------------------------------------
def _bench_cmd(args: list[str], tmp_path: Path, timeout: float) -> tuple[dict, float]:
    env = dict(os.environ, METACLAW_BENCH_CACHE=str(tmp_path / "cache"), METACLAW_HOME=str(tmp_path / "home"))
    t0 = time.monotonic()
    p = subprocess.run([CLI, "bench", *args], capture_output=True, text=True, timeout=timeout, env=env)
    took = time.monotonic() - t0
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout), took


@needs_langchain
def test_bench_workday_quick_json_says_plumbing(tmp_path: Path) -> None:
    data, _ = _bench_cmd(["workday", "--quick", "--json"], tmp_path, 300)
    assert data["plumbing_run"] is True and "not a model's score" in data["note"]
    assert set(data["arms"]) == {"baseline", "skills"} or "skills" in data["arms_unavailable"]
    for arm in data["arms"].values():
        assert arm["accuracy"] == 1.0 and arm["completion"] == 1.0  # the oracle replays correct solutions
        assert [d["day"] for d in arm["days"]] == ["day01", "day02"]
    for key in ("date", "commit", "machine", "command"):
        assert key in data


def test_bench_retrieval_quick_json(tmp_path: Path) -> None:
    data, _ = _bench_cmd(["retrieval", "--quick", "--json", "--mode", "keyword"], tmp_path, 300)
    for key in (
        "keyword_p50_us_100",
        "keyword_p99_us_100",
        "keyword_p50_us_1000",
        "injected_tokens_per_turn",
        "reference_tokens_per_turn_documented",
        "top3_hit_rate_keyword",
        "unrelated_any_skill_rate_keyword",
    ):
        assert key in data, key
    assert data["keyword_p50_us_100"] > 0 and data["keyword_p99_us_100"] >= data["keyword_p50_us_100"]
    assert data["scaling"]["keyword"]["1000"]["rss_delta_mb"] is not None
    assert data["top3_hit_rate_keyword"] >= 0.8
    assert data["reference_tokens_per_turn_measured"] is None  # no reference install in this cache


def test_numbered_replies_are_all_different() -> None:
    """The overhead benchmarks ask for numbered replies: one reply text for every request would be
    answered from the store's message cache and make recording look cheaper than it is."""
    import urllib.request

    from metaclaw_plugin.devtools.upstream import Upstream

    def ask(url: str, stream: bool = False) -> str:
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": stream}).encode()
        req = urllib.request.Request(url + "/chat/completions", body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            raw = r.read().decode()
        if not stream:
            return json.loads(raw)["choices"][0]["message"]["content"]
        events = [json.loads(e[6:]) for e in raw.split("\n\n") if e.startswith("data: {")]
        return "".join(e["choices"][0]["delta"].get("content") or "" for e in events)

    with Upstream(default_reply="same words", number_replies=True) as up:
        assert [ask(up.url), ask(up.url, stream=True), ask(up.url)] == [
            "[1] same words",
            "[2] same words",
            "[3] same words",
        ]
    with Upstream(default_reply="same words") as up:
        assert ask(up.url) == ask(up.url) == "same words"


def test_the_plugins_loop_share_pairs_each_round_with_its_no_op_batch() -> None:
    """Issue 28's share is taken round by round (the two batches of a round ran back to back), not as a
    difference of two medians, whose drift between rounds moved it by ±15 points between runs of one build."""
    from metaclaw_bench.overhead import _paired_shares

    plugin = {
        "round_loop_cpu_ms": {"0": 10.0, "1": 12.0, "2": 9.0, "4": 9.5},
        "round_cpu_ms": {"0": 20.0, "1": 20.0, "2": 0.0, "4": 20.0},
    }
    noop = {"round_loop_cpu_ms": {"0": 9.0, "2": 8.0, "1": 11.5, "3": 7.0, "4": 9.0}}
    # the third round has no process CPU, and rounds the other target lacks (the no-op's "3") make no share; a
    # missing reading does not shift the later rounds onto other rounds' batches
    assert _paired_shares(plugin, noop) == pytest.approx([0.05, 0.025, 0.025])
    assert _paired_shares(plugin, {}) == []


def test_the_overhead_summary_pairs_rounds_and_says_when_a_range_straddles_its_target() -> None:
    """Issue 44's figures, each the median of per-round paired values with their range; a round one target lacks
    pairs with nothing, and a range across the target is unsettled rather than a pass."""
    from metaclaw_bench.overhead_summary import figure, summarize

    def point(**by_round: dict[str, float]) -> dict[str, Any]:
        return {"rounds": {k.lstrip("r"): v for k, v in by_round.items()}}

    result = {
        "concurrency": [1, 32],
        "modes": ["json", "sse-paced"],
        "results": {
            "json": {
                "1": {
                    "bare": point(r0={"p50_ms": 10.0}, r1={"p50_ms": 11.0}, r2={"p50_ms": 9.0}),
                    "plugin": point(
                        r0={"p50_ms": 11.0, "plugin_cpu_ms": 1.0, "n": 100},
                        r1={"p50_ms": 12.5, "plugin_cpu_ms": 2.0, "n": 100},
                        r2={"p50_ms": 10.2, "plugin_cpu_ms": 1.5, "n": 100},
                    ),
                },
                "32": {
                    "noop": point(r0={"rps": 100.0}, r1={"rps": 100.0}, r2={"rps": 100.0}),
                    "plugin": {
                        **point(
                            r0={"rps": 99.0, "plugin_cpu_ms": 2.0, "n": 300},
                            r1={"rps": 97.0},
                            r3={"rps": 50.0},
                        ),
                        "upstream_extra": 4,
                    },
                },
            },
            "sse-paced": {
                "1": {
                    "bare": point(r0={"ttfb_p50_ms": 13.0}, r1={"ttfb_p50_ms": 14.0}),
                    "plugin": point(r0={"ttfb_p50_ms": 16.0}, r1={"ttfb_p50_ms": 16.5}),
                },
                "32": {
                    "noop": {**point(r0={"rps": 20.0}, r1={"rps": 20.0}, r2={"rps": 5.0, "errors": 27}), "errors": 27},
                    "plugin": point(r0={"rps": 18.0}, r1={"rps": 20.0}, r2={"rps": 20.0}),
                },
            },
        },
    }
    s = summarize(result)
    f = s["figures"]
    assert f["added_p50_ms_json"]["rounds"] == pytest.approx([1.0, 1.5, 1.2])
    # fewer than 5 rounds: no verdict however the range lies (it holds the median with under 90% probability)
    assert (f["added_p50_ms_json"]["median"], f["added_p50_ms_json"]["verdict"]) == (pytest.approx(1.2), "unsettled")
    assert f["added_first_byte_ms_sse_paced"]["verdict"] == "unsettled"
    assert f["throughput_vs_noop_json_c32"]["rounds"] == pytest.approx([0.99, 0.97])  # round 3 has no no-op batch
    # the no-op's third batch lost requests (its proxy died): that round is left out, and the line says so
    assert f["throughput_vs_noop_sse_paced_c32"]["rounds"] == pytest.approx([0.9, 1.0])
    assert s["failed_requests"] == {"noop": 27} and s["line"].endswith(
        "FAILED REQUESTS: noop 27 (their rounds left out)"
    )
    # the JSON CPU of round 0 weighs its c=1 and c=32 batches by their requests
    assert f["plugin_cpu_ms_json"]["rounds"] == pytest.approx([1.75, 2.0, 1.5])
    assert "plugin_cpu_ms_sse_paced" not in f
    assert s["plugin_calls_through_the_proxy"] == 4
    assert s["line"].startswith("summary: added p50 JSON +1.20 ms [+1.00..+1.50] unsettled; first byte paced SSE")
    assert "c=32 vs no-op JSON 0.98x [0.97..0.99] unsettled, paced SSE 0.95x [0.90..1.00] unsettled" in s["line"]
    # from 5 rounds on, the range decides: wholly within the target, wholly outside it, or across it
    assert figure([1.0, 1.2, 1.5, 1.1, 1.3], at_most=2.0)["verdict"] == "met"
    assert figure([2.5, 3.0, 2.6, 2.7, 2.8], at_most=2.0)["verdict"] == "missed"
    assert figure([0.96, 0.97, 0.99, 1.0, 0.95], at_least=0.95)["verdict"] == "met"
    assert figure([0.9, 1.0, 0.96, 0.97, 0.99], at_least=0.95)["verdict"] == "unsettled"
    assert figure([0.9, 0.8, 0.94, 0.93, 0.91], at_least=0.95)["verdict"] == "missed"


@pytest.mark.slow
@pytest.mark.perf
def test_bench_overhead_quick_json_without_the_reference(tmp_path: Path) -> None:
    if importlib.util.find_spec("litellm") is None:
        pytest.skip("needs the litellm extra")
    args = ["overhead", "--quick", "--json", "--mode", "json", "--mode", "sse-paced", "--paced-requests", "2"]
    data, took = _bench_cmd(args, tmp_path, 300)
    for key in (
        "bare_p50_ms",
        "plugin_p50_ms",
        "reference_p50_ms",
        "bare_p99_ms",
        "plugin_p99_ms",
        "reference_p99_ms",
        "ratio_plugin_bare_p50",
        "ratio_reference_bare_p50",
    ):
        assert key in data, key
    assert data["bare_p50_ms"] > 0 and data["direct_p50_ms"] > 0
    # No reference in this fresh cache: (d) is skipped, with a note that says how to get it.
    assert data["reference_p50_ms"] is None and data["ratio_reference_bare_p50"] is None
    ref = data["targets"]["reference"]
    assert ref["available"] is False and "--install-reference" in ref["note"]
    if data["targets"]["plugin"]["available"]:
        assert data["plugin_p50_ms"] > 0 and data["ratio_plugin_bare_p50"] > 0
        assert data["targets"]["plugin"]["injected_share"] > 0, "the plugin really injected skills"
        # the plugin's own CPU, measured in the proxy process, is a part of that process's CPU
        assert 0 < data["plugin_cpu_share"] < 1 and 0 < data["plugin_cpu_ms"] < data["plugin_host_cpu_ms"]
        assert 0 < data["plugin_cpu_share_sse_paced"] < 1
        # the summary pairs each round's plugin batch with the bare proxy's (no no-op target in a quick run)
        summary = data["summary"]
        assert len(summary["figures"]["added_p50_ms_json"]["rounds"]) == data["rounds"]
        assert "plugin_cpu_ms_json" in summary["figures"] and "throughput_vs_noop_json_c32" not in summary["figures"]
        assert summary["line"].startswith("summary: added p50 JSON ")
    # The paced upstream: the first byte comes long before the end of the stream (50 chunks, 20 ms apart).
    assert data["direct_p50_ms_sse_paced"] >= 900 and data["bare_p50_ms_sse_paced"] >= 900
    assert data["direct_ttfb_p50_ms_sse_paced"] < 0.25 * data["direct_p50_ms_sse_paced"]
    print(f"bench overhead --quick took {took:.1f} s")


@needs_langchain
def test_a_litellm_model_string_drives_the_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--model takes any LiteLLM model string; here an OpenAI-compatible stub that asks for a tool call."""
    if importlib.util.find_spec("litellm") is None:
        pytest.skip("needs the litellm extra")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from metaclaw_plugin.devtools.upstream import Upstream

    days = {
        "day01": [
            {"id": "m1", "type": "file_check", "question": "Create done.txt", "check": "grep -q ok done.txt"},
            {"id": "m2", "type": "multi_choice", "question": "Which?", "options": {"A": "a", "B": "b"}, "answer": "B"},
        ]
    }
    root = write_bench(tmp_path / "b", days)
    replies = [
        {"content": "", "tool_calls": [{"name": "write_file", "arguments": {"path": "done.txt", "content": "ok"}}]},
        "Created done.txt.",
        "It is \\bbox{B}",
        "Thanks for the feedback.",
    ]
    with Upstream(replies=list(replies)) as up:
        res = wd.run(
            root, model="openai/stub-model", api_base=up.url, api_key="sk-stub", arms=["baseline"], log=lambda m: None
        )
        sent = up.requests
    assert res["plumbing_run"] is False and res["agent"] == "openai/stub-model"
    day = res["arms"]["baseline"]["days"][0]
    assert [r["score"] for r in day["rounds"]] == [1.0, 1.0]
    assert day["rounds"][0]["tool_calls"] == 1
    assert sent[0]["tools"] and {t["function"]["name"] for t in sent[0]["tools"]} == {
        "read_file",
        "write_file",
        "list_files",
        "run_shell",
    }
    assert sent[1]["messages"][-1]["role"] == "tool"  # the tool result went back to the model


# Where the harness is not there ------------------------------------------------------------------------------
def test_bench_without_the_harness_says_how_to_get_it(tmp_path: Path) -> None:
    """An installed package (here: a copy of the core alone, as the wheel holds it) has no harness: ``bench`` says
    where it lives and how to get it, and exits non-zero; the rest of the CLI is unaffected. ``-S`` with the
    environment's site-packages on the path: its dependencies, without the set-up's path file that puts this
    checkout's harness on the path."""
    import shutil
    import site as site_module

    repo = Path(__file__).resolve().parents[2]
    site = tmp_path / "site"
    shutil.copytree(repo / "metaclaw_plugin", site / "metaclaw_plugin", ignore=shutil.ignore_patterns("__pycache__"))
    path = os.pathsep.join([str(site), *site_module.getsitepackages()])
    env = dict(os.environ, PYTHONPATH=path, METACLAW_HOME=str(tmp_path / "home"))
    run = [sys.executable, "-S", "-m", "metaclaw_plugin"]
    for args in (["bench", "retrieval", "--quick"], ["bench", "workday"]):
        p = subprocess.run([*run, *args], capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
        assert p.returncode != 0 and p.stdout == ""
        assert "not part of the installed package" in p.stderr and "pip install -e ." in p.stderr, p.stderr
        assert "Traceback" not in p.stderr
    assert subprocess.run([*run, "--help"], capture_output=True, env=env, timeout=120, cwd=tmp_path).returncode == 0
