"""The public MetaClaw-Bench layout, read as it is published (never modified).

``all_tests.json`` names the benchmark's folders (``eval_dir``, ``workspace_src``, ``openclaw_state_dir``)
with a prefix of wherever it was checked out (``./benchmark/data/...``): they are resolved inside the
benchmark folder, whatever the prefix (:func:`resolve_in`). Its ``test`` list gives the days in order:
``id``, ``agent``, ``session`` (the day's opening conversation, an OpenClaw session file), ``eval`` (the
folder of ``questions.json``) and ``preference_tags``. Rounds are ``file_check`` (``eval.command`` and
``eval.expect_exit``; run in the day's workspace with ``scripts/`` being ``eval/scripts``) or
``multi_choice`` (``eval.options``, ``eval.answer``; the question already lists the options and asks for
``\\bbox{...}``). The result is the same :class:`~metaclaw_bench.workday.Bench` our own variant
loads into, so one runner plays both.

Folders we have never seen must still run to the end, so only an unreadable ``all_tests.json`` (or one
with no runnable day) is an error. Everything else is tolerated and recorded: a day whose questions are
missing, unreadable, empty or outside the folder is skipped with its reason (``Bench.skipped``); a round
that cannot be scored (unknown type, no command, no answer key...) is still asked but marked
``unscored`` with its reason; a missing or empty session file, lines that are not JSON and bytes that are
not UTF-8 are notes on the day. Unknown fields are ignored everywhere.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from metaclaw_plugin.text import content_text

from .model import Bench, BenchFormatError, Day, Round, assign_folders, option_letters

KNOWN_TYPES = ("file_check", "multi_choice")


def is_public(folder: Path) -> bool:
    return (folder / "all_tests.json").is_file()


def resolve_in(folder: Path, p: str) -> Path:
    """A path from ``all_tests.json`` (``./benchmark/data/<bench>/eval``, ``./example-bench/eval``...)
    resolved inside the benchmark folder, whatever the prefix: the longest tail of it that exists."""
    parts = [x for x in Path(p).parts if x not in (".", "..", "/")]  # never above the folder
    for i in range(len(parts)):
        cand = folder.joinpath(*parts[i:])
        if cand.exists():
            return cand
    raise FileNotFoundError(f"{p!r} does not resolve inside {folder}")


def read_text(path: Path) -> tuple[str, list[str]]:
    """The file's text (a UTF-8 BOM dropped); UTF-16 or UTF-32 (what Windows tools write, told by their BOM or
    zero bytes, as JSON's own reader tells them) decoded as such; bytes that are not UTF-8 become U+FFFD, with a note."""
    data = path.read_bytes()
    enc = json.detect_encoding(data[:4])
    if enc.startswith(("utf-16", "utf-32")):
        with contextlib.suppress(UnicodeDecodeError):
            return data.decode(enc).removeprefix("\ufeff"), []
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError:
        text = data.decode("utf-8", "replace").removeprefix("\ufeff")
        return text, [f"{path.name}: {text.count(chr(0xFFFD))} byte(s) not UTF-8, read as U+FFFD"]


def _json(path: Path) -> tuple[Any, list[str]]:
    try:
        text, notes = read_text(path)
        return json.loads(text), notes
    except FileNotFoundError:
        raise BenchFormatError(f"{path}: missing") from None
    except (OSError, ValueError) as e:
        raise BenchFormatError(f"{path}: cannot read: {e}") from None


def _inside(root: Path, p: Path) -> bool:
    r, q = root.resolve(), p.resolve()
    return q == r or r in q.parents


def mc_feedback_incorrect(fb: dict[str, Any]) -> str:
    """What a wrong multi-choice answer is told: the per-option explanations (the layout has no
    ``feedback.incorrect`` for these rounds)."""
    raw = fb.get("options")
    opts: dict[str, Any] = raw if isinstance(raw, dict) else {}
    return "\n".join(f"{k}: {v}" for k, v in opts.items()) or str(fb.get("correct") or "")


def _answer_letters(ans: Any) -> list[str]:
    """``["A", "C"]``, ``"A"``, ``"A,C"`` or ``"AC"``: the letters, upper case, sorted."""
    items = [ans] if isinstance(ans, str) else ans if isinstance(ans, list) else []
    return sorted(set().union(*(option_letters(str(a)) for a in items)))


def _question_text(q: Any) -> str | None:
    if isinstance(q, str):
        return q
    if isinstance(q, list) and q:  # content parts or lines
        parts = [p if isinstance(p, str) else p.get("text") if isinstance(p, dict) else None for p in q]
        if all(isinstance(p, str) for p in parts):
            return "\n".join(str(p) for p in parts)
    return None


def parse_public_round(raw: Any, where: str, index: int = 0) -> Round:
    """A round as the runner plays it. Never raises: what cannot be scored is ``unscored``, with why."""
    if not isinstance(raw, dict):
        return Round(id=f"round{index + 1}", type="?", question="", unscored="the round is not an object")
    rid = str(raw.get("id") or "").strip() or f"round{index + 1}"
    rtype = str(raw.get("type") or "")
    question = _question_text(raw.get("question"))
    fb_raw, ev_raw = raw.get("feedback"), raw.get("eval")
    fb: dict[str, Any] = (
        fb_raw
        if isinstance(fb_raw, dict)
        else {"correct": fb_raw, "incorrect": fb_raw}
        if isinstance(fb_raw, str)
        else {}
    )
    ev: dict[str, Any] = ev_raw if isinstance(ev_raw, dict) else {}
    r = Round(
        id=rid,
        type=rtype or "?",
        question=question or "",
        variant="public",
        feedback_correct=str(fb.get("correct") or ""),
    )
    if question is None or not question.strip():
        r.unscored = "the round has no question text (not asked)"
    if isinstance(raw.get("update"), list) and raw["update"]:
        r.notes.append(f"`update` has {len(raw['update'])} item(s); the runner does not apply updates")
    if rtype == "file_check":
        cmd = ev.get("command")
        r.feedback_incorrect = str(fb.get("incorrect") or "")
        if not isinstance(cmd, str) or not cmd.strip():
            r.unscored = r.unscored or "eval.command is missing"
            return r
        r.check = cmd.strip()
        try:
            r.expect_exit = int(ev.get("expect_exit", 0))
        except (TypeError, ValueError):
            r.unscored = r.unscored or f"eval.expect_exit {ev.get('expect_exit')!r} is not an integer"
        if isinstance(ev.get("timeout"), (int, float)) and ev["timeout"] > 0:
            r.timeout = float(ev["timeout"])
    elif rtype == "multi_choice":
        opts = ev.get("options")
        r.feedback_incorrect = mc_feedback_incorrect(fb)
        if not isinstance(opts, dict) or len(opts) < 2:
            r.unscored = r.unscored or "eval.options needs at least two letters"
            return r
        r.options = {str(k).strip().upper(): str(v) for k, v in opts.items()}
        r.answer = _answer_letters(ev.get("answer"))
        if not r.answer:
            r.unscored = r.unscored or "eval.answer is missing"
        elif set(r.answer) - set(r.options):
            r.unscored = r.unscored or f"eval.answer {r.answer} is not among the options {sorted(r.options)}"
    else:
        r.unscored = r.unscored or f"unknown round type {rtype!r} (scored types: {', '.join(KNOWN_TYPES)})"
    return r


def opening_conversation(path: Path) -> tuple[list[dict[str, str]], list[str]]:
    """The user and assistant text messages of an OpenClaw session file, in order, and notes on what was
    skipped (lines that are not JSON: a session cut off mid-write)."""
    text, notes = read_text(path)
    out: list[dict[str, str]] = []
    bad = 0
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            ev = json.loads(line)
        except ValueError:
            bad += 1
            continue
        msg = ev.get("message") if isinstance(ev, dict) and ev.get("type") == "message" else None
        if not isinstance(msg, dict) or msg.get("role") not in ("user", "assistant"):
            continue
        content = msg.get("content")
        if isinstance(content, str):
            body = content
        else:
            body = content_text(content)
        if body.strip():
            out.append({"role": str(msg["role"]), "content": body})
    if bad:
        notes.append(f"{path.name}: {bad} line(s) not JSON, skipped")
    if not out:
        notes.append(f"{path.name}: no user or assistant text; no opening conversation")
    return out, notes


def _session_history(state: Path | None, entry: dict[str, Any]) -> tuple[list[dict[str, str]], list[str]]:
    session, agent = str(entry.get("session") or ""), str(entry.get("agent") or "")
    if not session:
        return [], []
    if state is None or not agent:
        return [], [f"session {session!r}: no openclaw_state_dir or agent to find it in"]
    sf = state / "agents" / agent / "sessions" / (session if session.endswith(".jsonl") else f"{session}.jsonl")
    if not _inside(state, sf):
        return [], [f"session {session!r}: its path leaves openclaw_state_dir (ignored)"]
    if not sf.is_file():
        return [], [f"session file {sf.name} is missing; no opening conversation"]
    return opening_conversation(sf)


def _tags(raw: Any) -> list[str]:
    if isinstance(raw, str):
        return [raw]
    return [str(t) for t in raw] if isinstance(raw, list) else []


def _load_day(root: Path, eval_dir: Path, state: Path | None, scripts: Path | None, n: int, entry: Any) -> Day:
    """One ``test`` entry as a day; a :class:`BenchFormatError` says why it cannot run."""
    if not isinstance(entry, dict):
        raise BenchFormatError(f"test entry {n} is not an object")
    did = str(entry.get("id") or "").strip()
    if not did:
        raise BenchFormatError(f"test entry {n} has no id")
    ev = str(entry.get("eval") or did)
    qf = eval_dir / ev / "questions.json"
    if not _inside(root, qf):
        raise BenchFormatError(f"its eval folder {entry.get('eval')!r} leaves the benchmark folder")
    if not qf.is_file():  # ``eval`` written as a path with a checkout prefix, like the manifest's folders
        with contextlib.suppress(FileNotFoundError):
            alt = resolve_in(eval_dir, ev) / "questions.json"
            if alt.is_file() and _inside(root, alt):
                qf = alt
    if not qf.is_file():
        raise BenchFormatError(f"{qf.relative_to(root)} is missing")
    q, notes = _json(qf)
    rounds_raw = q.get("rounds") if isinstance(q, dict) else q if isinstance(q, list) else None
    if not isinstance(rounds_raw, list) or not rounds_raw:
        raise BenchFormatError(f"{qf.relative_to(root)} has no rounds")
    history, more = _session_history(state, entry)
    desc = entry.get("desc") or (q.get("desc") if isinstance(q, dict) else "")
    return Day(
        id=did,
        path=qf.parent,
        rounds=[parse_public_round(r, str(qf), i) for i, r in enumerate(rounds_raw)],
        title=str(desc or ""),
        history=history,
        tags=_tags(entry.get("preference_tags")),
        session=str(entry.get("session") or ""),
        scripts=scripts,
        notes=notes + more,
    )


def load_public(folder: Path | str) -> Bench:
    root = Path(folder)
    manifest, _ = _json(root / "all_tests.json")
    tests = manifest.get("test") if isinstance(manifest, dict) else None
    if not isinstance(tests, list) or not tests:
        raise BenchFormatError(f"{root / 'all_tests.json'}: needs a non-empty `test` list")
    try:
        eval_dir = resolve_in(root, str(manifest.get("eval_dir") or "eval"))
        ws_src = resolve_in(root, str(manifest.get("workspace_src") or "workspaces/shared"))
        state = resolve_in(root, str(manifest["openclaw_state_dir"])) if manifest.get("openclaw_state_dir") else None
    except FileNotFoundError as e:
        raise BenchFormatError(f"{root / 'all_tests.json'}: {e}") from None
    scripts = eval_dir / "scripts" if (eval_dir / "scripts").is_dir() else None
    for what, p in (("eval_dir", eval_dir), ("workspace_src", ws_src), ("openclaw_state_dir", state), ("", scripts)):
        if p is not None and not _inside(root, p):  # a link out: its files would be copied, run or read
            raise BenchFormatError(
                f"{p.relative_to(root)}{f' ({what})' if what else ''} resolves to {p.resolve()}, outside the "
                "benchmark folder (a link leads out of it); copy it in, or link the whole benchmark folder instead"
            )
    days: list[Day] = []
    skipped: list[dict[str, str]] = []
    for n, entry in enumerate(tests, 1):
        try:
            days.append(_load_day(root, eval_dir, state, scripts, n, entry))
        except BenchFormatError as e:
            did = str(entry.get("id") or f"#{n}") if isinstance(entry, dict) else f"#{n}"
            skipped.append({"day": did, "reason": str(e)})
    if not days:
        why = "; ".join(f"{s['day']}: {s['reason']}" for s in skipped)
        raise BenchFormatError(f"{root / 'all_tests.json'}: no day can run ({why})")
    assign_folders(days)
    return Bench(
        path=root,
        name=str(manifest.get("name") or root.name),
        description="public MetaClaw-Bench layout",
        days=days,
        layout="public",
        workspace_src=ws_src,
        skipped=skipped,
    )
