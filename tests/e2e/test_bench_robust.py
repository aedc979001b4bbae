"""``bench workday`` on public-layout folders we have never seen: generated benchmarks with odd inputs
(``tests/support/bench_support.py``) run to the end with every round scored or its reason recorded; checkers that
hang, flood or print bytes that are not UTF-8; workspaces with links and special files; escaping ids and
paths; mid-day resume; corrupt progress files; the ``\\bbox`` forms a model writes."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from bench_support import GenBench, make_public_bench
from waiting import wait_for

from metaclaw_bench import workday as wd

HAS_LANGCHAIN = all(importlib.util.find_spec(m) for m in ("langchain", "langgraph", "metaclaw_langchain"))
needs_langchain = pytest.mark.skipif(not HAS_LANGCHAIN, reason="needs the langchain extra")
QUIET = {"log": lambda m: None}
EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "metaclaw-bench-example"


def check_result(res: dict[str, Any], gen: GenBench, arms: list[str]) -> None:
    """The properties every run must have, whatever the folder held."""
    doc = json.loads(json.dumps(res, allow_nan=False))  # well-formed, finite JSON
    assert doc["plumbing_run"] and "not a model's score" in doc["note"]
    assert doc["models"]["agent"] == "scripted:scripted" and doc["commit"]
    assert sorted(doc["arms"]) == sorted(arms) and "partial" not in doc
    assert [s["day"] for s in doc["bench"]["days_skipped"]] == gen.missing
    assert all("missing" in s["reason"] for s in doc["bench"]["days_skipped"])
    for arm in arms:
        days = doc["arms"][arm]["days"]
        assert [d["day"] for d in days] == gen.runnable  # the manifest's order, every runnable day
        for d in days:
            want = gen.rounds[d["day"]]
            assert [r["id"] for r in d["rounds"]] == [g.id for g in want]
            for r, g in zip(d["rounds"], want, strict=True):
                if g.unscorable:
                    assert r["score"] is None and r["passed"] is None and g.unscorable in r["unscored"], r
                else:
                    assert 0.0 <= r["score"] <= 1.0 and isinstance(r["passed"], bool) and "unscored" not in r, r
                    assert ("exit_code" if g.type == "file_check" else "chosen") in r["detail"]
            for note in gen.notes[d["day"]]:
                assert any(note in n for n in d.get("notes", [])), (note, d.get("notes"))
            scored = [r["score"] for r in d["rounds"] if r["score"] is not None]
            assert (d["scored_n"], d["unscored_n"]) == (len(scored), len(want) - len(scored))
            assert d["accuracy"] == (round(sum(scored) / len(scored), 4) if scored else None)
    md = wd.markdown(res)
    if any(g.unscorable for rs in gen.rounds.values() for g in rs):
        assert "UNSCORED" in md
    assert all(f"day {m} skipped" in md for m in gen.missing)


# Generated folders, end to end ---------------------------------------------------------------------------
@needs_langchain
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_generated_benchmarks_run_to_the_end(tmp_path: Path, seed: int) -> None:
    """Fails on the code before issue 18's hardening: the first unknown round type, missing day or
    non-UTF-8 session stopped the load."""
    gen = make_public_bench(tmp_path / f"gen{seed}", days=6, seed=seed, missing=(seed % 6 + 1,))
    res = wd.run(gen.root, arms=["baseline"], **QUIET)
    check_result(res, gen, ["baseline"])
    outside = [p for p in tmp_path.rglob("escape_*.json")]
    assert outside == [], "a question's path led a write outside the workspace"


@needs_langchain
def test_thirty_unpadded_days_run_in_the_manifests_order_with_both_arms(tmp_path: Path) -> None:
    """day1..day30 as listed (not day1, day10, day11...), the skills arm included: unscored rounds do not
    count as failures in lesson reach. Fails before the hardening (the generated oddities)."""
    gen = make_public_bench(tmp_path / "month", days=30, seed=7, unpadded=True, rounds=(1, 2))
    res = wd.run(gen.root, arms=["baseline", "skills"], retrieval="keyword", **QUIET)
    check_result(res, gen, ["baseline", "skills"])
    assert [d["day"] for d in res["arms"]["skills"]["days"]][8:11] == ["day9", "day10", "day11"]
    assert res["arms"]["skills"]["lesson_reach"]["overall"]["rounds"] >= 0


def test_our_variant_orders_unpadded_days_by_number(tmp_path: Path) -> None:
    """Fails before: the folders were sorted as strings (day1, day10, day2)."""
    for d in ("day1", "day2", "day10"):
        (tmp_path / d).mkdir()
        q = [{"id": f"{d}q", "type": "multi_choice", "question": "?", "options": {"A": "a", "B": "b"}, "answer": "A"}]
        (tmp_path / d / "questions.json").write_text(json.dumps({"rounds": q}))
    assert [d.id for d in wd.load_bench(tmp_path).days] == ["day1", "day2", "day10"]


def test_a_folder_with_no_runnable_day_says_why(tmp_path: Path) -> None:
    gen = make_public_bench(tmp_path / "b", days=2, seed=0, missing=(1, 2))
    with pytest.raises(wd.BenchFormatError, match=r"no day can run.*day01: eval/day01/questions.json is missing"):
        wd.load_bench(gen.root)


def test_bom_and_stray_bytes_in_questions_are_read(tmp_path: Path) -> None:
    """Fails before: a UTF-8 BOM or one Latin-1 byte made questions.json 'cannot parse'."""
    gen = make_public_bench(tmp_path / "b", days=2, seed=0, odd=False)
    q1, q2 = (gen.root / "eval" / d / "questions.json" for d in ("day01", "day02"))
    q1.write_bytes(b"\xef\xbb\xbf" + q1.read_bytes())
    q2.write_bytes(q2.read_bytes().replace(b'"question": "', b'"question": "\xff', 1))
    b = wd.load_bench(gen.root)
    assert b.days[0].notes == [] and [r.unscored for r in b.days[0].rounds] == [None] * len(b.days[0].rounds)
    assert b.days[1].rounds[0].question.startswith("\ufffd") and "not UTF-8" in b.days[1].notes[0]


def test_escaping_ids_and_eval_folders_stay_inside(tmp_path: Path) -> None:
    """Fails before: a day id ``../x`` named a workspace folder outside the run's days, and an eval folder
    ``../../elsewhere`` was read from outside the benchmark."""
    gen = make_public_bench(tmp_path / "b", days=3, seed=0, odd=False)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "questions.json").write_text((gen.root / "eval" / "day03" / "questions.json").read_text())
    m = json.loads((gen.root / "all_tests.json").read_text())
    m["test"][0]["id"] = "../../x"
    m["test"][1]["id"] = "../../x"  # the same id twice
    m["test"][2]["eval"] = "../../elsewhere"
    (gen.root / "all_tests.json").write_text(json.dumps(m))
    b = wd.load_bench(gen.root)
    assert [(d.id, d.folder) for d in b.days] == [("../../x", "x"), ("../../x", "x-2")]
    assert b.skipped == [{"day": "day03", "reason": "its eval folder '../../elsewhere' leaves the benchmark folder"}]
    if HAS_LANGCHAIN:
        res = wd.run(gen.root, arms=["baseline"], run_dir=tmp_path / "run", keep_workspace=True, **QUIET)
        assert sorted(p.name for p in (tmp_path / "run" / "baseline").iterdir()) == ["days"]
        assert sorted(p.name for p in (tmp_path / "run" / "baseline" / "days").iterdir()) == ["x", "x-2"]
        assert [d["folder"] for d in res["arms"]["baseline"]["days"]] == ["x", "x-2"]


# Checkers ------------------------------------------------------------------------------------------------
def _day(tmp_path: Path) -> tuple[wd.Day, Path]:
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "ok.py").write_text("print('OK')\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    return wd.Day(id="d", path=tmp_path, rounds=[], scripts=scripts), ws


def _fc(cmd: str, timeout: float = 30.0) -> wd.Round:
    return wd.Round(id="r", type="file_check", question="?", check=cmd, variant="public", timeout=timeout)


@pytest.mark.perf
def test_a_hanging_checker_is_killed_with_its_children(tmp_path: Path) -> None:
    """Fails before: the shell was killed at the timeout but its child kept the pipe, so the run waited
    for the child (30 s here) and the child lived on."""
    day, ws = _day(tmp_path)
    t0 = time.monotonic()
    res = wd.run_check(_fc("sh -c 'echo $$ > child.pid; exec sleep 30' | cat", timeout=1), day, ws)
    took = time.monotonic() - t0
    assert took < 15 and (res["passed"], res["score"], res["exit_code"]) == (False, 0.0, None)
    assert "timed out after 1 s" in res["detail"]
    pid = int((ws / "child.pid").read_text())
    proc = Path(f"/proc/{pid}")
    wait_for(
        lambda: not proc.exists() or "zombie" in (proc / "status").read_text().lower(),
        10,
        "the child killed",
        ignore=OSError,
    )


def test_a_checker_that_prints_bytes_not_utf8_is_a_failure_not_a_crash(tmp_path: Path) -> None:
    """Fails before: decoding its output raised UnicodeDecodeError out of the run."""
    day, ws = _day(tmp_path)
    res = wd.run_check(_fc("printf 'bad \\377\\376 bytes'; exit 3"), day, ws)
    assert (res["passed"], res["exit_code"]) == (False, 3) and "\ufffd" in res["detail"]


def test_a_flooding_checker_is_read_in_bounded_memory(tmp_path: Path) -> None:
    """400 MB of output: fails before (all of it was held in memory, twice); now the head and tail only."""
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from metaclaw_bench import workday as wd\n"
        "ws = Path(sys.argv[1])\n"
        "cmd = 'python -c \"import sys\\nb = bytes(1 << 20)\\nfor _ in range(400): sys.stdout.buffer.write(b)\"'\n"
        "r = wd.Round(id='r', type='file_check', question='?', check=cmd, variant='public')\n"
        "res = wd.run_check(r, wd.Day(id='d', path=ws, rounds=[]), ws)\n"
        "hwm = next(ln for ln in open('/proc/self/status') if ln.startswith('VmHWM'))\n"  # this process's own peak
        "print(int(hwm.split()[1]) // 1024, res['exit_code'], len(res['detail']))\n"
    )
    ws = tmp_path / "ws"
    ws.mkdir()
    p = subprocess.run([sys.executable, "-c", script, str(ws)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    peak_mb, code, detail_len = map(int, p.stdout.split())
    assert code == 0 and detail_len < 700
    assert peak_mb < 250, f"peak RSS {peak_mb} MB for 400 MB of checker output"


def test_checks_reach_scripts_from_a_subfolder_and_heal_after_a_kill(tmp_path: Path) -> None:
    """A kill during a check left ``scripts`` linked to the checkers and the agent's own folder aside.
    Fails before: the next check could not set the agent's folder aside again (OSError)."""
    day, ws = _day(tmp_path)
    (ws / "sub").mkdir()
    assert day.scripts is not None
    (ws / "scripts").symlink_to(day.scripts)  # what the kill left
    (ws / ".scripts.agent").mkdir()
    (ws / ".scripts.agent" / "mine.txt").write_text("x")
    res = wd.run_check(_fc("cd sub && python ../scripts/ok.py"), day, ws)
    assert (res["passed"], res["detail"]) == (True, "OK")
    assert (ws / "scripts" / "mine.txt").read_text() == "x" and not (ws / "scripts").is_symlink()
    assert not (ws / ".scripts.agent").exists()


@pytest.mark.parametrize("crlf", [False, True])
def test_checkers_without_the_executable_bit_or_with_windows_line_ends_still_judge(tmp_path: Path, crlf: bool) -> None:
    """A benchmark fetched from an archive or a dataset hub has no executable bits; one saved on Windows has
    ``\\r\\n`` line ends. Fails before: ``./scripts/check.sh`` answered 126 or 127 whatever the agent wrote, and the
    round counted as the agent's failure. The checker still judges (pass and fail), the benchmark is unchanged."""
    day, ws = _day(tmp_path)
    assert day.scripts is not None
    nl = "\r\n" if crlf else "\n"
    sh = nl.join(["#!/bin/sh", 'test -f "$1" || { echo "missing $1"; exit 3; }', 'grep -q "km" "$1"', ""])
    py = nl.join(["#!/usr/bin/env python3", "import sys", "sys.exit(0 if open(sys.argv[1]).read().strip() else 4)", ""])
    (day.scripts / "check.sh").write_bytes(sh.encode())
    (day.scripts / "sub").mkdir()
    (day.scripts / "sub" / "check.py").write_bytes(py.encode())
    for f in ("check.sh", "sub/check.py"):
        (day.scripts / f).chmod(0o755 if crlf else 0o644)  # CRLF alone, or the bit alone
    before = {
        f: ((day.scripts / f).read_bytes(), (day.scripts / f).stat().st_mode) for f in ("check.sh", "sub/check.py")
    }

    def judge(cmd: str) -> tuple[bool, int | None]:
        res = wd.run_check(_fc(cmd), day, ws)
        return res["passed"], res["exit_code"]

    assert judge("./scripts/check.sh out.txt") == (False, 3)  # the agent wrote nothing: the checker says so
    assert judge("scripts/sub/check.py out.txt") == (False, 1)
    (ws / "out.txt").write_text("distance: 12 miles\n")
    assert judge("./scripts/check.sh out.txt") == (False, 1)
    assert judge("scripts/sub/check.py out.txt") == (True, 0)
    (ws / "out.txt").write_text("distance: 19 km\n")
    assert judge("./scripts/check.sh out.txt") == (True, 0)
    after = {f: ((day.scripts / f).read_bytes(), (day.scripts / f).stat().st_mode) for f in before}
    assert after == before and not (ws / "scripts").exists()
    # a kill during such a check left the link to the fixed copy: the next check heals it
    (ws / "scripts").symlink_to(tmp_path / "gone" / "metaclaw-checkers-x" / "scripts")
    (ws / ".scripts.agent").mkdir()
    assert judge("./scripts/check.sh out.txt") == (True, 0)
    assert (ws / "scripts").is_dir() and not (ws / "scripts").is_symlink()


@pytest.mark.perf
def test_the_agents_shell_does_not_wait_for_background_children(tmp_path: Path) -> None:
    """Fails before: ``sleep 30 &`` kept the shell tool's pipe open for 30 s."""
    sb = wd.Sandbox(tmp_path)
    t0 = time.monotonic()
    out = sb.run_shell("sleep 30 & echo started")
    assert time.monotonic() - t0 < 10 and out == "exit code 0\nstarted"


# Workspaces ----------------------------------------------------------------------------------------------
def test_workspace_copies_keep_inside_links_and_drop_the_rest(tmp_path: Path) -> None:
    """Fails before (copytree): a link out of the workspace was copied as is, an absolute link into the
    source still wrote into the benchmark, and a named pipe stopped the copy."""
    from metaclaw_bench._workspace import copy_workspace

    src = tmp_path / "src"
    (src / "d").mkdir(parents=True)
    (src / "d" / "a.txt").write_text("a")
    (src / "rel").symlink_to("d/a.txt")
    (src / "abs").symlink_to(src / "d" / "a.txt")
    (src / "dir").symlink_to("d", target_is_directory=True)
    (tmp_path / "secret.txt").write_text("s")
    (src / "out").symlink_to("../secret.txt")
    (src / "dangling").symlink_to("nowhere")
    (src / "loop").symlink_to("loop")
    os.mkfifo(src / "fifo")
    dest = tmp_path / "dest"
    notes = copy_workspace(src, dest)
    assert sorted(p.name for p in dest.iterdir()) == ["abs", "d", "dir", "rel"]
    for name in ("abs", "rel"):
        assert (dest / name).resolve() == (dest / "d" / "a.txt").resolve()
    assert (dest / "dir" / "a.txt").read_text() == "a"
    (dest / "abs").write_text("changed")
    assert (src / "d" / "a.txt").read_text() == "a", "the copy wrote back into the source"
    assert sorted(n.split(":")[0] for n in notes) == ["dangling", "fifo", "loop", "out"]
    assert any("outside the workspace" in n for n in notes)


@needs_langchain
def test_a_large_workspace_is_carried_and_old_days_are_pruned(tmp_path: Path) -> None:
    """Thousands of files and a 30 MB one, over four days: each day gets an identical copy; only the last
    finished day's folder is kept (disk stays at one or two copies, not one a day). Fails before: every
    day's folder stayed."""
    gen = make_public_bench(tmp_path / "big", days=4, seed=5, odd=False, rounds=(1, 1))
    shared = gen.root / "workspaces" / "shared" / "bulk"
    shared.mkdir()
    for i in range(2000):
        (shared / f"f{i:04d}.txt").write_text(f"{i}\n")
    (shared / "blob.bin").write_bytes(os.urandom(1 << 20) * 30)
    run_dir = tmp_path / "run"
    res = wd.run(gen.root, arms=["baseline"], run_dir=run_dir, **QUIET)
    left = sorted(p.name for p in (run_dir / "baseline" / "days").iterdir())
    assert left == ["day04"] and [d["day"] for d in res["arms"]["baseline"]["days"]] == gen.runnable
    last = run_dir / "baseline" / "days" / "day04" / "bulk"
    assert len(list(last.iterdir())) == 2001
    assert (last / "blob.bin").read_bytes() == (shared / "blob.bin").read_bytes()


# Resume --------------------------------------------------------------------------------------------------
def _outcomes(res: dict[str, Any]) -> list[tuple]:
    return [
        (d["day"], r["id"], r["score"], r["passed"], json.dumps(r["detail"]))
        for d in res["arms"]["baseline"]["days"]
        for r in d["rounds"]
    ]


class _Interrupt(Exception):
    pass


@needs_langchain
def test_resume_mid_day_does_not_ask_finished_rounds_again(tmp_path: Path) -> None:
    """Interrupted after day02's first round: the resumed run asks only day02's later rounds and the rest,
    and ends with the same outcomes as an uninterrupted run. Fails before: progress was saved per day, so
    day02 started again from its first round."""
    gen = make_public_bench(tmp_path / "b", days=3, seed=11, odd=False, rounds=(3, 3))
    whole = wd.run(gen.root, arms=["baseline"], **QUIET)

    def stop_after_d2r1(msg: str) -> None:
        if "day02/r1 " in msg:
            raise _Interrupt

    run_dir = tmp_path / "run"
    with pytest.raises(_Interrupt):
        wd.run(gen.root, arms=["baseline"], run_dir=run_dir, log=stop_after_d2r1)
    saved = json.loads((run_dir / "progress.json").read_text())
    assert [r["id"] for r in saved["partial"]["baseline"]["rounds"]] == ["r1"]
    assert (run_dir / "progress.json").stat().st_mode & 0o777 == 0o600
    asked: list[str] = []
    done = wd.run(gen.root, arms=["baseline"], run_dir=run_dir, resume=True, log=asked.append)
    asked_rounds = [m.split()[1] for m in asked if m.startswith("  [baseline]")]
    assert asked_rounds == ["day02/r2", "day02/r3", "day03/r1", "day03/r2", "day03/r3"]
    assert _outcomes(done) == _outcomes(whole) and "partial" not in done
    day2 = done["arms"]["baseline"]["days"][1]
    assert any("resumed after round 1 of 3" in n for n in day2["notes"])


def _saved(arms: str) -> str:
    """A progress file of this benchmark and these models, with ``arms`` as given."""
    models = {"agent": "scripted:scripted", "evolver": "scripted", "judge": None, "api_base": None}
    return json.dumps({"bench": {"path": str(EXAMPLE)}, "models": models, "arms": json.loads(arms)})


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"bench": {"path": "x"}, "models": {}, "arms": {"baseline": {"da', "corrupt or partial"),
        ("", "corrupt or partial"),
        (_saved('{"baseline": {"days": 3}}'), r"not a workday run's progress \(arms"),
        (_saved('{"baseline": {"days": [{"day": "day09", "rounds": []}]}}'), "not the first"),
    ],
)
def test_a_corrupt_progress_file_gives_a_clear_error(tmp_path: Path, content: str, message: str) -> None:
    """Fails before: a raw JSONDecodeError, KeyError or TypeError from inside the runner."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "progress.json").write_text(content)
    with pytest.raises(wd.BenchFormatError, match=message) as e:
        wd.run(EXAMPLE, arms=["baseline"], run_dir=run_dir, resume=True, **QUIET)
    assert "cannot resume" in str(e.value)


# \bbox -----------------------------------------------------------------------------------------------------
def _mc(answer: list[str], options: str = "ABCD") -> wd.Round:
    return wd.Round(id="q", type="multi_choice", question="?", options={k: k for k in options}, answer=answer)


@pytest.mark.parametrize(
    "text, chosen",
    [
        ("\\bbox{A}\\bbox{D}", ["A", "D"]),  # one box a letter: before, only the last counted
        ("\\bbox{A}, \\bbox{D}", ["A", "D"]),
        ("\\bbox{A} and \\bbox{D}", ["A", "D"]),
        ("$\\bbox{A}$ $\\bbox{D}$", ["A", "D"]),
        ("draft \\bbox{B}; on reflection the answer is \\bbox{A}\\bbox{D}", ["A", "D"]),  # prose: a draft
        ("\\bbox{\\text{A}, \\text{D}}", ["A", "D"]),  # nested braces: before, no box at all
        ("\\bbox {a ; d}", ["A", "D"]),  # a space before the brace, semicolons, lower case
        ("\\bbox{(A) / (D).}", ["A", "D"]),
        ("\\bbox{NONE}", []),  # before: N, O, E counted as choices
        ("\\bbox{Options A, D}", ["A", "D"]),
    ],
)
def test_bbox_forms_a_model_writes(text: str, chosen: list[str]) -> None:
    assert wd.score_multi_choice(_mc(["A", "D"]), text)["chosen"] == chosen


def test_boxed_is_not_the_formats_box_and_the_detail_says_so() -> None:
    """The public format asks for \\bbox{}; \\boxed{} scores 0, and the detail names it (before: 'no box')."""
    res = wd.score_multi_choice(_mc(["A"]), "\\boxed{A}")
    assert (res["score"], res["chosen"]) == (0.0, None) and "\\boxed" in res["detail"]
    assert "not closed" in wd.score_multi_choice(_mc(["A"]), "\\bbox{A} then \\bbox{B")["detail"]


# Folders that link out -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "where", ["workspaces/shared", "workspaces", "eval", "eval/scripts", "openclaw_state", "eval/day01"]
)
def test_a_named_folder_that_links_out_of_the_benchmark_is_refused_by_name(tmp_path: Path, where: str) -> None:
    """Fails before: a benchmark folder (the shared workspace, the eval folder, the checkers' scripts, the OpenClaw
    state) that is a link to a folder outside the benchmark was followed: the runner copied what lay out there
    into the agent's workspace, ran checkers from there, or read sessions from there. A link inside stays fine."""
    gen = make_public_bench(tmp_path / "b", days=2, seed=0, odd=False)
    moved = gen.root / where
    outside = tmp_path / "outside" / where
    outside.parent.mkdir(parents=True)
    moved.rename(outside)
    (outside / "private.txt").write_text("not the benchmark's\n")
    moved.symlink_to(outside, target_is_directory=True)
    if where == "eval/day01":  # one day's folder: that day is skipped with its reason, the other runs
        b = wd.load_bench(gen.root)
        assert [d.id for d in b.days] == ["day02"]
        assert b.skipped == [{"day": "day01", "reason": "its eval folder 'day01' leaves the benchmark folder"}]
    else:
        with pytest.raises(wd.BenchFormatError, match="outside the benchmark folder") as e:
            wd.load_bench(gen.root)
        assert where in str(e.value) and str(outside) in str(e.value)
    # the same folder linked from inside the benchmark is read as usual
    moved.unlink()
    inside = gen.root / "elsewhere-inside"
    outside.rename(inside)
    moved.symlink_to(Path("../" * where.count("/") + inside.name), target_is_directory=True)
    assert [d.id for d in wd.load_bench(gen.root).days] == ["day01", "day02"]


def test_a_session_named_with_its_file_suffix_and_an_eval_folder_named_by_its_path_are_found(tmp_path: Path) -> None:
    """Fails before: ``session`` written as the file's name (``<id>.jsonl``) lost the day's opening conversation,
    and ``eval`` written as a path with the checkout's prefix (as the manifest's own folders are) skipped the day."""
    root = tmp_path / "example-bench"
    shutil.copytree(EXAMPLE, root)
    m = json.loads((root / "all_tests.json").read_text())
    m["test"][0]["session"] += ".jsonl"
    m["test"][1]["eval"] = f"./benchmark/data/{root.name}/eval/{m['test'][1]['eval']}"
    (root / "all_tests.json").write_text(json.dumps(m))
    b = wd.load_bench(root)
    assert b.skipped == [] and [d.id for d in b.days] == ["day01", "day02"]
    assert all(d.history and not d.notes for d in b.days), [(d.id, d.notes) for d in b.days]
    assert b.days[1].path == root / "eval" / "day02"


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32"])
def test_questions_and_sessions_saved_as_utf16_or_utf32_are_read(tmp_path: Path, encoding: str) -> None:
    """Fails before: a ``questions.json`` saved by a Windows tool (UTF-16 with its BOM, or without one) was 'cannot
    read' and the day was skipped; such a session file gave no opening conversation."""
    root = tmp_path / "example-bench"
    shutil.copytree(EXAMPLE, root)
    want = wd.load_bench(root)
    paths = [root / "eval" / "day01" / "questions.json", *sorted((root / "openclaw_state").rglob("day01*.jsonl"))]
    assert len(paths) == 2
    for p in paths:
        p.write_bytes(p.read_text(encoding="utf-8").encode(encoding))
    got = wd.load_bench(root)
    assert got.skipped == [] and [d.id for d in got.days] == ["day01", "day02"]
    d, w = got.days[0], want.days[0]
    assert [r.question for r in d.rounds] == [r.question for r in w.rounds] and d.history == w.history and d.history
    assert not d.notes
