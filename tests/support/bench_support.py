"""A generator of benchmark folders in the public MetaClaw-Bench layout, for property-style tests.

``make_public_bench`` writes N days with random round types and the odd inputs a folder we have never
seen may hold: unknown fields everywhere, unknown round types, rounds without a command or with an answer
key outside the options, answers given as ``"A,C"`` or lower case, feedback as a bare string, checkers
that print a lot or bytes that are not UTF-8 or reach ``scripts/`` from a subfolder, session files
missing, empty, cut off mid-line or not UTF-8, non-UTF-8 bytes inside ``questions.json``, days listed but
not on disk, unpadded day ids. It returns what it wrote, so that a test can check every round's fate.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

CHECK_JSON = """import json, sys
try:
    data = json.load(open(sys.argv[1]))
except Exception as e:
    print("FAIL", e)
    sys.exit(1)
sys.exit(0 if isinstance(data, list) and data else 1)
"""
NOISY = "import sys\nsys.stdout.write('n' * 1_000_000)\nsys.exit(1)\n"


@dataclass
class GenRound:
    id: str
    type: str
    unscorable: str | None = None  # a substring of the reason the runner must record


@dataclass
class GenBench:
    root: Path
    listed: list[str]  # day ids in the manifest's order
    missing: list[str]  # listed, but no questions on disk
    rounds: dict[str, list[GenRound]] = field(default_factory=dict)
    notes: dict[str, list[str]] = field(default_factory=dict)  # day -> substrings of its expected notes

    @property
    def runnable(self) -> list[str]:
        return [d for d in self.listed if d not in self.missing]


def _opts(rng: random.Random) -> tuple[dict[str, str], list[str]]:
    letters = "ABCDEF"[: rng.randint(3, 6)]
    opts = {k: f"option {k.lower()} about {rng.choice(['units', 'backups', 'dates', 'quotes'])}" for k in letters}
    return opts, sorted(rng.sample(list(letters), rng.randint(1, 2)))


def _round(rng: random.Random, day: str, k: int, odd: bool) -> tuple[dict, GenRound]:
    rid = f"r{k}"
    kinds = ["file_check", "multi_choice"] + (
        ["unknown", "no_command", "bad_answer", "noisy", "not_utf8", "subdir", "escape"] if odd else []
    )
    kind = rng.choice(kinds)
    extra = {"x_unknown": {"nested": [1, 2]}, "weight": rng.random()}
    fb = {"correct": "Good.", "incorrect": f"On {day} values need units.", "x_hint": "ignored"}
    out = f"{day}/out_{k}.json"
    fc_q = f"Turn {day}/input.txt into {out}: a list of objects."
    if kind in ("multi_choice", "bad_answer"):
        opts, ans = _opts(rng)
        lines = "\n".join(f"{a}. {t}" for a, t in opts.items())
        answer: object = rng.choice([ans, ",".join(ans), [a.lower() for a in ans]]) if odd else ans
        gen = GenRound(rid, "multi_choice")
        if kind == "bad_answer":
            answer, gen.unscorable = ["Z"], "not among the options"
        raw = {
            "id": rid,
            "type": "multi_choice",
            "question": f"Which apply?\n\n{lines}\n\nAnswer using \\bbox{{X}} format.",
            "feedback": {"correct": "Right.", "options": {a: f"{a} explained" for a in opts}},
            "eval": {"options": opts, "answer": answer, "type": "multi", "x": 1},
            "update": [],
            **extra,
        }
        return raw, gen
    if kind == "unknown":
        t = rng.choice(["ranking", "open_ended", ""])
        q = {"id": rid, "type": t, "question": "Rank these.", "eval": {"order": ["A", "B"]}, **extra}
        return q, GenRound(rid, t or "?", "unknown round type")
    command = {
        "file_check": f"python scripts/check_json.py {out}",
        "no_command": None,
        "noisy": "python scripts/noisy.py",
        "not_utf8": "printf '\\377\\376 bad bytes'; exit 1",
        "subdir": f"cd {day} && python ../scripts/check_json.py out_{k}.json",
        "escape": f"test -f ../../escape_{day}_{k}.json",
    }[kind]
    question = fc_q if kind != "escape" else f"Turn {day}/input.txt into ../../escape_{day}_{k}.json."
    ev: dict = {"x_extra": True}
    if command is not None:
        ev["command"] = command
        if rng.random() < 0.7:
            ev["expect_exit"] = 0
    raw = {
        "id": rid,
        "type": "file_check",
        "question": question,
        "feedback": fb if not odd or rng.random() < 0.8 else "A bare-string feedback.",
        "eval": ev,
        "update": [],
        **extra,
    }
    return raw, GenRound(rid, "file_check", "eval.command is missing" if command is None else None)


def _session(path: Path, rng: random.Random, day: str, kind: str) -> str | None:
    """Write the day's session file as ``kind`` says; returns a substring of the note it should cause."""
    lines = [
        {"type": "session", "version": 3, "id": day, "x_new_field": 1},
        {"type": "model_change", "provider": "p", "modelId": "m"},
        {"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": f"Morning, {day}."}]}},
        {"type": "message", "message": {"role": "assistant", "content": "Ready."}, "x": [1]},
    ]
    body = "\n".join(json.dumps(x) for x in lines) + "\n"
    if kind == "missing":
        return "is missing"
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "empty":
        path.write_bytes(b"")
        return "no opening conversation"
    if kind == "cut":
        path.write_text(body + '{"type": "message", "message": {"role": "user", "con', "utf-8")
        return "not JSON"
    if kind == "latin1":
        path.write_bytes(body.encode() + b'{"type": "message", "message": {"role": "user", "content": "caf\xe9"}}\n')
        return "not UTF-8"
    path.write_text(body, "utf-8")
    return None


def make_public_bench(
    root: Path,
    *,
    days: int = 5,
    seed: int = 0,
    missing: tuple[int, ...] = (),
    unpadded: bool = False,
    odd: bool = True,
    rounds: tuple[int, int] = (1, 4),
) -> GenBench:
    """A benchmark in the public layout under ``root`` (the ``all_tests.json`` paths carry a
    ``./benchmark/data/<name>/`` prefix, as the published file's do). ``missing``: 1-based days listed
    in the manifest whose questions are not written."""
    rng = random.Random(seed)
    name = root.name
    ids = [f"day{i}" if unpadded else f"day{i:02d}" for i in range(1, days + 1)]
    gen = GenBench(root, ids, [ids[i - 1] for i in missing])
    shared = root / "workspaces" / "shared"
    shared.mkdir(parents=True)
    (shared / "AGENTS.md").write_text("Be careful.\n")
    scripts = root / "eval" / "scripts"
    scripts.mkdir(parents=True)
    (scripts / "check_json.py").write_text(CHECK_JSON)
    (scripts / "noisy.py").write_text(NOISY)
    sessions = root / "openclaw_state" / "agents" / "ops" / "sessions"
    tests = []
    for n, day in enumerate(ids, 1):
        (shared / day).mkdir()
        (shared / day / "input.txt").write_text(
            "\n".join(f"sensor=s{i} temp={20 + i}" for i in range(rng.randint(1, 4))) + "\n"
        )
        sid = f"{day}_{rng.getrandbits(32):08x}"
        kind = rng.choice(["ok", "ok", "missing", "empty", "cut", "latin1"] if odd else ["ok"])
        note = _session(sessions / f"{sid}.jsonl", rng, day, kind)
        tests.append(
            {
                "id": day,
                "desc": f"Day {n}",
                "agent": "ops",
                "session": sid,
                "eval": day,
                "arc": "A",
                "preference_tags": rng.choice([["units"], "units", []]),
                "x_future_field": {"a": 1},
            }
        )
        if day in gen.missing:
            continue
        gen.notes[day] = [note] if note else []
        raws, gens = [], []
        for k in range(1, rng.randint(*rounds) + 1):
            raw, g = _round(rng, day, k, odd)
            raws.append(raw)
            gens.append(g)
        gen.rounds[day] = gens
        q = root / "eval" / day / "questions.json"
        q.parent.mkdir(parents=True)
        data = json.dumps({"id": day, "desc": f"Day {n}", "rounds": raws, "x_meta": None}, indent=1).encode()
        if odd and rng.random() < 0.3 and b"Turn " in data:  # a stray Latin-1 byte inside a question
            data = data.replace(b"Turn ", b"Turn \xe9 ", 1)
            gen.notes[day].append("questions.json: 1 byte(s) not UTF-8")
        q.write_bytes(data)
    manifest = {
        "name": f"Generated {name}",
        "openclaw_state_dir": f"./benchmark/data/{name}/openclaw_state",
        "openclaw_config_file": f"./benchmark/data/{name}/openclaw_cfg/openclaw.json",
        "eval_dir": f"./benchmark/data/{name}/eval",
        "workspace_src": f"./benchmark/data/{name}/workspaces/shared",
        "test": tests,
        "x_version": "9.9",
    }
    (root / "all_tests.json").write_text(json.dumps(manifest, indent=1))
    return gen
