"""The public MetaClaw-Bench layout, read as it is published (never modified).

``all_tests.json`` names the benchmark's folders (``eval_dir``, ``workspace_src``, ``openclaw_state_dir``)
with a prefix of wherever it was checked out (``./benchmark/data/...``): they are resolved inside the
benchmark folder, whatever the prefix (:func:`resolve_in`). Its ``test`` list gives the days in order:
``id``, ``agent``, ``session`` (the day's opening conversation, an OpenClaw session file), ``eval`` (the
folder of ``questions.json``) and ``preference_tags``. Rounds are ``file_check`` (``eval.command`` and
``eval.expect_exit``; run in the day's workspace with ``scripts/`` being ``eval/scripts``) or
``multi_choice`` (``eval.options``, ``eval.answer``; the question already lists the options and asks for
``\\bbox{...}``). The result is the same :class:`~metaclaw_plugin.bench.workday.Bench` our own variant
loads into, so one runner plays both.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .model import Bench, BenchFormatError, Day, Round


def is_public(folder: Path) -> bool:
    return (folder / "all_tests.json").is_file()


def resolve_in(folder: Path, p: str) -> Path:
    """A path from ``all_tests.json`` (``./benchmark/data/<bench>/eval``, ``./example-bench/eval``...)
    resolved inside the benchmark folder, whatever the prefix: the longest tail of it that exists."""
    parts = [x for x in Path(p).parts if x not in (".", "/")]
    for i in range(len(parts)):
        cand = folder.joinpath(*parts[i:])
        if cand.exists():
            return cand
    raise FileNotFoundError(f"{p!r} does not resolve inside {folder}")


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise BenchFormatError(f"{path}: missing") from None
    except ValueError as e:
        raise BenchFormatError(f"{path}: cannot parse: {e}") from None


def mc_feedback_incorrect(fb: dict[str, Any]) -> str:
    """What a wrong multi-choice answer is told: the per-option explanations (the layout has no
    ``feedback.incorrect`` for these rounds)."""
    opts = fb.get("options") or {}
    return "\n".join(f"{k}: {v}" for k, v in opts.items()) or str(fb.get("correct") or "")


def parse_public_round(raw: Any, where: str) -> Round:
    if not isinstance(raw, dict):
        raise BenchFormatError(f"{where}: a round must be an object")
    rid = str(raw.get("id") or "").strip()
    rtype = raw.get("type")
    question = raw.get("question")
    if not rid or rtype not in ("file_check", "multi_choice") or not isinstance(question, str):
        raise BenchFormatError(f"{where}: a round needs id, type (file_check|multi_choice) and question")
    where = f"{where} round {rid}"
    fb = raw.get("feedback") or {}
    ev = raw.get("eval") or {}
    if not isinstance(fb, dict) or not isinstance(ev, dict):
        raise BenchFormatError(f"{where}: feedback and eval must be objects")
    r = Round(id=rid, type=rtype, question=question, variant="public", feedback_correct=str(fb.get("correct") or ""))
    if rtype == "file_check":
        cmd = ev.get("command")
        if not isinstance(cmd, str) or not cmd.strip():
            raise BenchFormatError(f"{where}: eval.command is missing")
        r.check = cmd.strip()
        r.expect_exit = int(ev.get("expect_exit", 0))
        r.feedback_incorrect = str(fb.get("incorrect") or "")
    else:
        opts, ans = ev.get("options"), ev.get("answer")
        if not isinstance(opts, dict) or len(opts) < 2:
            raise BenchFormatError(f"{where}: eval.options needs at least two letters")
        r.options = {str(k).strip().upper(): str(v) for k, v in opts.items()}
        ans_list = [ans] if isinstance(ans, str) else ans
        if not isinstance(ans_list, list) or not ans_list:
            raise BenchFormatError(f"{where}: eval.answer is missing")
        r.answer = sorted({str(a).strip().upper() for a in ans_list})
        if set(r.answer) - set(r.options):
            raise BenchFormatError(f"{where}: answer {r.answer} is not among the options {sorted(r.options)}")
        r.feedback_incorrect = mc_feedback_incorrect(fb)
    return r


def opening_conversation(path: Path) -> list[dict[str, str]]:
    """The user and assistant text messages of an OpenClaw session file, in order."""
    out: list[dict[str, str]] = []
    for n, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            ev = json.loads(line)
        except ValueError:
            raise BenchFormatError(f"{path}:{n}: not JSON") from None
        msg = ev.get("message") if ev.get("type") == "message" else None
        if not isinstance(msg, dict) or msg.get("role") not in ("user", "assistant"):
            continue
        content = msg.get("content")
        if isinstance(content, str):
            text = content
        else:
            text = "\n".join(
                str(p.get("text") or "") for p in content or [] if isinstance(p, dict) and p.get("type") == "text"
            )
        if text.strip():
            out.append({"role": str(msg["role"]), "content": text})
    return out


def load_public(folder: Path | str) -> Bench:
    root = Path(folder)
    manifest = _json(root / "all_tests.json")
    if not isinstance(manifest, dict) or not isinstance(manifest.get("test"), list) or not manifest["test"]:
        raise BenchFormatError(f"{root / 'all_tests.json'}: needs a non-empty `test` list")
    try:
        eval_dir = resolve_in(root, str(manifest.get("eval_dir") or "eval"))
        ws_src = resolve_in(root, str(manifest.get("workspace_src") or "workspaces/shared"))
        state = resolve_in(root, str(manifest["openclaw_state_dir"])) if manifest.get("openclaw_state_dir") else None
    except FileNotFoundError as e:
        raise BenchFormatError(f"{root / 'all_tests.json'}: {e}") from None
    scripts = eval_dir / "scripts"
    days: list[Day] = []
    for entry in manifest["test"]:
        did = str(entry.get("id") or "").strip()
        if not did:
            raise BenchFormatError(f"{root / 'all_tests.json'}: a test entry without an id")
        qf = eval_dir / str(entry.get("eval") or did) / "questions.json"
        q = _json(qf)
        if not isinstance(q, dict) or not isinstance(q.get("rounds"), list) or not q["rounds"]:
            raise BenchFormatError(f"{qf}: needs a non-empty `rounds` list")
        history: list[dict[str, str]] = []
        session, agent = str(entry.get("session") or ""), str(entry.get("agent") or "")
        if state is not None and session and agent:
            sf = state / "agents" / agent / "sessions" / f"{session}.jsonl"
            if sf.is_file():
                history = opening_conversation(sf)
        days.append(
            Day(
                id=did,
                path=qf.parent,
                rounds=[parse_public_round(r, str(qf)) for r in q["rounds"]],
                title=str(entry.get("desc") or q.get("desc") or ""),
                history=history,
                tags=[str(t) for t in entry.get("preference_tags") or []],
                session=session,
                scripts=scripts if scripts.is_dir() else None,
            )
        )
    return Bench(
        path=root,
        name=str(manifest.get("name") or root.name),
        description="public MetaClaw-Bench layout",
        days=days,
        layout="public",
        workspace_src=ws_src,
    )
