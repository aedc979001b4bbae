"""``metaclaw-plugin bench workday``: a runner for benchmarks in the MetaClaw-Bench format.

A benchmark is a folder of simulated workdays, in the public MetaClaw-Bench layout (read unchanged by
:mod:`metaclaw_bench.public_layout`) or in our own variant (validated by :func:`load_bench`; see
``benchmarks/README.md``). Each day is one session of rounds; each round is a user request, scored by a
checker command (``file_check``) or against an answer key (``multi_choice``), and followed by its
feedback as the next user message. Each day works in a fresh copy of the workspace as the day before
left it, after the day's opening conversation (if the benchmark has one) is replayed as history.

The agent is a minimal LangChain ``create_agent`` agent with four tools (read, write, list, shell)
confined to the day's workspace. It runs in the arms of :data:`ARMS`: ``baseline`` (no plugin),
``skills`` (``MetaClawMiddleware`` in front of the model, a fresh plugin home with an empty library or
``--skills DIR``, and an evolver), ``skills+rl`` (the skills arm with the served trainable policy as
the agent's model, trained between days: :mod:`metaclaw_bench.rl_arm`), and the reference's memory arms:
``memory`` (the user's memory across days, no skill injected or evolved) and ``skills+memory``; memory is off in
the other arms, and extracted by the rules offline. The fast loop and extraction are drained after each day, so
what was learned on day *n* is in place on day *n+1*.

The model is any LiteLLM model string (``--model``). Without one, a scripted policy plays the agent
(``scripted``: fixed rules, :mod:`metaclaw_bench.scripted_policy`; ``oracle``: our rounds'
reference solutions; ``naive``) and a scripted evolver writes the skills: such a run exercises the
plumbing only, says ``plumbing_run: true`` and is not a model's score.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from metaclaw_plugin.text import approx_tokens, message_text

from . import _progress
from ._proc import run_bounded
from ._scripts import is_checker_link, runnable_scripts
from ._workspace import copy_workspace
from .common import BENCH_ROOT, provenance
from .model import Bench, BenchFormatError, Day, Round, assign_folders, natural_key, option_letters
from .scripted_policy import FEEDBACK_PREFIX

if TYPE_CHECKING:
    from metaclaw_plugin.plugin import MetaClawPlugin

FORMAT = "metaclaw-bench/1"
ROUND_TYPES = ("file_check", "multi_choice")
BOX_OPEN = re.compile(r"\\(bbox|boxed)\s*\{")
BOX_JOIN = re.compile(r"^(?:\s|[,;&+/$]|and)*$", re.I)  # what may stand between boxes that form one answer
SCORE_LINE = re.compile(r"^\s*SCORE\s*[=:]\s*([0-9]*\.?[0-9]+)\s*$", re.M)
SHELL_TIMEOUT = 30.0
MAX_TOOL_OUTPUT = 6000
AGENT_PROMPT = (
    "You are a careful assistant working in the user's workspace (the current directory). Use the tools to "
    "read, write and list files and to run shell commands there; paths are relative to the workspace. Do the "
    "task completely, then reply briefly with what you did. For a multiple-choice question, end your reply "
    "with your choice(s) as \\bbox{X} or \\bbox{X,Y} (option letters, all that apply)."
)


def _read_structured(path: Path) -> Any:
    text = path.read_text("utf-8")
    try:
        return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as e:
        raise BenchFormatError(f"{path}: cannot parse: {e}") from None


def _feedback(raw: Any, where: str) -> tuple[str, str]:
    if raw is None:
        return "", ""
    if isinstance(raw, str):
        return raw, raw
    if isinstance(raw, dict):
        c, i = raw.get("correct", ""), raw.get("incorrect", "")
        if not isinstance(c, str) or not isinstance(i, str):
            raise BenchFormatError(f"{where}: feedback.correct/incorrect must be strings")
        return c, i
    raise BenchFormatError(f"{where}: feedback must be a string or {{correct, incorrect}}")


def parse_round(raw: Any, where: str) -> Round:
    if not isinstance(raw, dict):
        raise BenchFormatError(f"{where}: a round must be a mapping")
    rid = str(raw.get("id") or "").strip()
    if not rid:
        raise BenchFormatError(f"{where}: round without an id")
    where = f"{where} round {rid}"
    rtype = raw.get("type")
    if rtype not in ROUND_TYPES:
        raise BenchFormatError(f"{where}: type must be one of {', '.join(ROUND_TYPES)}, got {rtype!r}")
    q = raw.get("question")
    if not isinstance(q, str) or not q.strip():
        raise BenchFormatError(f"{where}: question is missing")
    fc, fi = _feedback(raw.get("feedback"), where)
    r = Round(
        id=rid,
        type=rtype,
        question=q.strip(),
        feedback_correct=fc,
        feedback_incorrect=fi,
        timeout=float(raw.get("timeout", 30)),
    )
    if rtype == "file_check":
        check = raw.get("check")
        if not isinstance(check, str) or not check.strip():
            raise BenchFormatError(f"{where}: a file_check round needs a check command")
        r.check = check.strip()
    else:
        opts = raw.get("options")
        if not isinstance(opts, dict) or len(opts) < 2:
            raise BenchFormatError(f"{where}: a multi_choice round needs at least two options (letter: text)")
        r.options = {str(k).strip().upper(): str(v) for k, v in opts.items()}
        ans = raw.get("answer")
        ans_list = [ans] if isinstance(ans, str) else ans
        if not isinstance(ans_list, list) or not ans_list:
            raise BenchFormatError(f"{where}: a multi_choice round needs an answer (a letter or a list of letters)")
        r.answer = sorted({str(a).strip().upper() for a in ans_list})
        bad = [a for a in r.answer if a not in r.options]
        if bad:
            raise BenchFormatError(f"{where}: answer {bad} is not among the options {sorted(r.options)}")
    sol = raw.get("solution") or []
    if not isinstance(sol, list):
        raise BenchFormatError(f"{where}: solution must be a list of steps")
    for i, step in enumerate(sol):
        if not isinstance(step, dict) or not ({"tool", "answer"} & set(step)):
            raise BenchFormatError(f"{where}: solution step {i + 1} needs `tool` (+ `args`) or `answer`")
    r.solution = sol
    return r


def load_bench(path: Path | str) -> Bench:
    """Read and validate a benchmark folder: the public layout (``all_tests.json``) or our own."""
    root = Path(path)
    from .public_layout import is_public, load_public

    if is_public(root):
        return load_public(root)
    manifest = next((root / n for n in ("bench.yaml", "bench.yml", "bench.json") if (root / n).is_file()), None)
    meta: dict[str, Any] = {}
    if manifest is not None:
        meta = _read_structured(manifest) or {}
        if not isinstance(meta, dict):
            raise BenchFormatError(f"{manifest}: must be a mapping")
        fmt = meta.get("format", FORMAT)
        if fmt != FORMAT:
            raise BenchFormatError(f"{manifest}: format {fmt!r} is not supported (expected {FORMAT!r})")
    day_ids = meta.get("days")
    if day_ids is None:
        found = [d.name for d in root.iterdir() if d.is_dir() and _questions_file(d) is not None]
        day_ids = sorted(found, key=natural_key)  # day2 before day10
    if not day_ids:
        raise BenchFormatError(f"{root}: no days (folders with questions.yaml or questions.json)")
    days = []
    seen: set[str] = set()
    for did in day_ids:
        d = root / str(did)
        qf = _questions_file(d)
        if qf is None:
            raise BenchFormatError(f"{d}: no questions.yaml or questions.json")
        data = _read_structured(qf)
        if isinstance(data, list):
            data = {"rounds": data}
        if not isinstance(data, dict) or not isinstance(data.get("rounds"), list) or not data["rounds"]:
            raise BenchFormatError(f"{qf}: needs a non-empty `rounds` list")
        rounds = [parse_round(r, f"{qf}") for r in data["rounds"]]
        for r in rounds:
            if r.id in seen:
                raise BenchFormatError(f"{qf}: round id {r.id!r} is used twice in the benchmark")
            seen.add(r.id)
        days.append(Day(id=str(did), path=d, rounds=rounds, title=str(data.get("title", ""))))
    assign_folders(days)
    return Bench(
        path=root, name=str(meta.get("name") or root.name), description=str(meta.get("description", "")), days=days
    )


def _questions_file(d: Path) -> Path | None:
    for n in ("questions.yaml", "questions.yml", "questions.json"):
        if (d / n).is_file():
            return d / n
    return None


def default_scenarios() -> Path | None:
    """benchmarks/scenarios."""
    p = BENCH_ROOT / "scenarios"
    return p if p.is_dir() else None


# Scoring ------------------------------------------------------------------------------------------
def _boxes(text: str) -> list[tuple[str, int, int, str | None]]:
    """Every ``\\bbox{...}``/``\\boxed{...}``: (kind, start, end, content; None when never closed).
    Braces nest (``\\bbox{\\text{A}, C}``)."""
    out: list[tuple[str, int, int, str | None]] = []
    pos = 0
    while m := BOX_OPEN.search(text, pos):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        content = text[m.end() : i - 1] if depth == 0 else None
        out.append((m.group(1), m.start(), i, content))
        pos = i if depth == 0 else m.end()
    return out


def parse_bbox(text: str, options: Sequence[str] | None = None) -> set[str] | None:
    """The option letters of the answer's last ``\\bbox{...}``; None when there is none (or it is never
    closed). Boxes right before it, with only spaces, commas or "and" between (``\\bbox{A}\\bbox{C}``,
    ``\\bbox{A}, \\bbox{C}``), are the same answer and add their letters; an earlier box followed by prose
    is a draft and does not count. Case, order, spaces, separators, joiners and ``AC`` do not matter.
    ``\\boxed{}`` is not the format's box and never counts."""
    text = text or ""
    boxes = [b for b in _boxes(text) if b[0] == "bbox"]
    if not boxes or boxes[-1][3] is None:
        return None
    out: set[str] = set()
    end = None
    for _kind, start, stop, content in reversed(boxes):
        if content is None or (end is not None and not BOX_JOIN.match(text[stop:end])):
            break
        out |= option_letters(re.sub(r"\\[A-Za-z]+", " ", content), options)
        end = start
    return out


def score_multi_choice(rnd: Round, answer_text: str) -> dict[str, Any]:
    """1 - (fp + fn) / n over the options, floored at 0; ``passed`` is the exact match. No (closed)
    ``\\bbox{}`` at all scores 0, and the detail says why (a ``\\boxed{}`` instead is named)."""
    chosen = parse_bbox(answer_text, list(rnd.options))
    n = len(rnd.options)
    if chosen is None:
        found = [b for b in _boxes(answer_text or "") if b[0] == "bbox"]
        why = "malformed \\bbox (not closed)" if found else "no \\bbox{...}"
        if not found and any(b[0] == "boxed" for b in _boxes(answer_text or "")):
            why += " (a \\boxed{...}, which the format does not accept)"
        return {"score": 0.0, "passed": False, "chosen": None, "detail": f"{why} in the answer"}
    truth = set(rnd.answer)
    fp = len(chosen - truth)
    fn = len(truth - chosen)
    score = max(0.0, 1.0 - (fp + fn) / n)
    return {"score": round(score, 4), "passed": fp == 0 and fn == 0, "chosen": sorted(chosen), "fp": fp, "fn": fn}


def run_check(rnd: Round, day: Day, workspace: Path) -> dict[str, Any]:
    """Run the checker in the workspace; it passes when it exits with ``expect_exit`` (0 by default).
    Our variant's commands may use ``{checks}``/``{workspace}``... and a ``SCORE=<0..1>`` line gives
    partial credit; the public layout's run as written, with ``scripts/`` linked in for the check only."""
    assert rnd.check is not None
    ours = rnd.variant == "ours"
    cmd = (
        rnd.check.format(
            checks=str(day.checks), workspace=str(workspace), day=str(day.path), bench=str(day.path.parent)
        )
        if ours
        else rnd.check
    )
    env = {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
        "LANG": "C.UTF-8",
        "HOME": str(workspace),
        "WORKSPACE": str(workspace),
        "CHECKS": str(day.checks),
    }
    with _scripts_linked(workspace, day.scripts):
        p = run_bounded(cmd, cwd=str(workspace), env=env, timeout=rnd.timeout)
    if p.timed_out:
        return {
            "score": 0.0,
            "passed": False,
            "exit_code": None,
            "detail": f"checker timed out after {rnd.timeout:g} s (killed with its children); "
            + _tail(p.output, p.output_bytes, 300),
        }
    passed = p.exit_code == rnd.expect_exit
    score = 1.0 if passed else 0.0
    m = SCORE_LINE.findall(p.output) if ours else []
    if m:
        score = max(0.0, min(1.0, float(m[-1])))
        if passed:
            score = 1.0
    return {"score": score, "passed": passed, "exit_code": p.exit_code, "detail": _tail(p.output, p.output_bytes)}


def _tail(output: str, n_bytes: int, keep: int = 500) -> str:
    out = output.strip()
    if len(out) <= keep:
        return out
    return f"({n_bytes} bytes of output, the last {keep} characters) " + out[-keep:]


@contextlib.contextmanager
def _scripts_linked(workspace: Path, scripts: Path | None) -> Iterator[None]:
    """``scripts/`` in the workspace is the benchmark's checker scripts while a check runs (an agent's own
    ``scripts/`` is set aside meanwhile), so the agent never sees or edits them. Scripts that could not start as
    shipped (no executable bit, ``\\r\\n`` line ends) are run from a fixed copy (``_scripts``)."""
    if scripts is None:
        yield
        return
    heal_scripts(workspace, scripts)
    link, aside = workspace / "scripts", workspace / ".scripts.agent"
    moved = link.exists() or link.is_symlink()
    if moved:
        link.rename(aside)
    link.symlink_to(runnable_scripts(scripts).resolve(), target_is_directory=True)
    try:
        yield
    finally:
        link.unlink()
        if moved:
            aside.rename(link)


def heal_scripts(workspace: Path, scripts: Path | None) -> None:
    """Undo what a check interrupted by a kill left behind: the link to the checker scripts removed, the
    agent's own ``scripts/`` put back."""
    link, aside = workspace / "scripts", workspace / ".scripts.agent"
    if scripts is not None and is_checker_link(link, scripts):
        link.unlink()
    if (aside.exists() or aside.is_symlink()) and not (link.exists() or link.is_symlink()):
        aside.rename(link)


# The sandboxed tools ------------------------------------------------------------------------------------
class Sandbox:
    """File and shell tools confined to one workspace folder.

    Paths are resolved and must stay inside the workspace (``..`` and symlinks out are refused). The
    shell runs with the workspace as its working directory and HOME, a minimal environment (no API keys
    from the caller's environment) and a timeout. It is a guard against accidents, not a security
    boundary: run untrusted models in a container.
    """

    def __init__(self, root: Path):
        self.root = root.resolve()
        self.calls: list[dict[str, Any]] = []

    def _path(self, rel: str) -> Path:
        p = (self.root / (rel or ".")).resolve()
        if p != self.root and self.root not in p.parents:
            raise ValueError(f"path {rel!r} is outside the workspace")
        return p

    def read_file(self, path: str) -> str:
        p = self._path(path)
        if not p.is_file():
            return f"error: {path} does not exist"
        data = p.read_text("utf-8", errors="replace")
        return (
            data if len(data) <= MAX_TOOL_OUTPUT else data[:MAX_TOOL_OUTPUT] + f"\n... ({len(data)} characters in all)"
        )

    def write_file(self, path: str, content: str) -> str:
        p = self._path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content, "utf-8")
        return f"wrote {len(content)} characters to {path}"

    def list_files(self, path: str = ".") -> str:
        p = self._path(path)
        if not p.is_dir():
            return f"error: {path} is not a directory"
        out = []
        for f in sorted(p.rglob("*")):
            if f.is_file():
                out.append(str(f.relative_to(self.root)))
            if len(out) >= 500:
                out.append("...")
                break
        return "\n".join(out) or "(empty)"

    def run_shell(self, command: str) -> str:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.root),
            "LANG": "C.UTF-8",
            "TMPDIR": str(self.root),
        }
        p = run_bounded(command, cwd=str(self.root), env=env, timeout=SHELL_TIMEOUT, keep=MAX_TOOL_OUTPUT // 2)
        if p.timed_out:
            return f"error: timed out after {SHELL_TIMEOUT:.0f} s\n{p.output}".strip()
        return f"exit code {p.exit_code}\n{p.output}".strip()

    def tools(self) -> list[Any]:
        from langchain_core.tools import StructuredTool

        def wrap(fn: Callable[..., str], name: str, doc: str) -> Any:
            def call(**kw: Any) -> str:
                try:
                    res = fn(**kw)
                except Exception as e:
                    res = f"error: {e}"
                self.calls.append(
                    {
                        "tool": name,
                        "args": {k: (v if len(str(v)) < 200 else str(v)[:200] + "...") for k, v in kw.items()},
                    }
                )
                return res

            call.__name__ = name
            return StructuredTool.from_function(call, name=name, description=doc, args_schema=_schema(name))

        return [
            wrap(self.read_file, "read_file", "Read a text file from the workspace."),
            wrap(
                self.write_file,
                "write_file",
                "Create or overwrite a text file in the workspace with the given content.",
            ),
            wrap(self.list_files, "list_files", "List the files under a folder of the workspace (default: all)."),
            wrap(
                self.run_shell, "run_shell", "Run a shell command in the workspace and return its exit code and output."
            ),
        ]


def _schema(name: str) -> Any:
    from pydantic import BaseModel, Field

    if name == "read_file":

        class ReadArgs(BaseModel):
            path: str = Field(description="Path relative to the workspace")

        return ReadArgs
    if name == "write_file":

        class WriteArgs(BaseModel):
            path: str = Field(description="Path relative to the workspace")
            content: str = Field(description="The full new content of the file")

        return WriteArgs
    if name == "list_files":

        class ListArgs(BaseModel):
            path: str = Field(".", description="Folder relative to the workspace")

        return ListArgs

    class ShellArgs(BaseModel):
        command: str = Field(description="A shell command, run in the workspace")

    return ShellArgs


# Models --------------------------------------------------------------------------------------------------
def scripted_model(policy: str = "oracle") -> Any:
    """A chat model that plays the agent offline (plumbing runs; never a model's score).

    ``oracle``: one tool call per step of the round's ``solution``, then its ``answer``. ``naive``: no
    tool calls, a non-answer (a multi-choice round gets ``\\bbox{A}``). ``scripted``: the fixed rules of
    :mod:`metaclaw_bench.scripted_policy` (for rounds without a solution, e.g. the public
    layout). The runner sets ``.round`` and ``.workspace`` before each round. Every call's messages
    are kept in ``.seen`` (tests read them); usage is estimated at four characters a token.
    """
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    from . import scripted_policy as sp

    def role(m: Any) -> str:
        return "system" if isinstance(m, SystemMessage) else "user" if isinstance(m, HumanMessage) else "other"

    class ScriptedPolicy(BaseChatModel):
        policy: str = "oracle"
        round: Any = None
        workspace: Any = None
        seen: list = []

        @property
        def _llm_type(self) -> str:
            return "metaclaw-scripted"

        def bind_tools(self, tools: Any, **kw: Any) -> Any:
            return self

        def _call(self, name: str, args: dict[str, Any], rid: str, n: int) -> AIMessage:
            return AIMessage(
                content="", tool_calls=[{"name": name, "args": args, "id": f"call_{rid}_{n}", "type": "tool_call"}]
            )

        def _scripted(self, rnd: Round, messages: list, done: int) -> AIMessage:
            guide = sp.guidance([(role(m), message_text(m)) for m in messages])
            if rnd.type == "multi_choice":
                return AIMessage(content="\\bbox{" + ",".join(sp.choose_options(rnd.options, guide)) + "}")
            ws = Path(self.workspace or ".")
            inp, out = sp.paths_in(rnd.question, ws)
            if out is None:
                return AIMessage(content="I could not tell which file to write.")
            if done == 0 and inp is not None:
                return self._call("read_file", {"path": inp}, rnd.id, done)
            if done <= (1 if inp is not None else 0):
                tool = next((message_text(m) for m in reversed(messages) if isinstance(m, ToolMessage)), "")
                content = sp.output_text(rnd.question, tool if inp is not None else "", guide)
                return self._call("write_file", {"path": out, "content": content}, rnd.id, done)
            return AIMessage(content=f"Wrote {out}.")

        def _generate(self, messages: list, stop: Any = None, run_manager: Any = None, **kw: Any) -> ChatResult:
            self.seen.append(list(messages))
            rnd: Round | None = self.round
            last_h = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
            done = sum(1 for m in messages[last_h + 1 :] if isinstance(m, AIMessage))
            steps = [s for s in (rnd.solution if rnd else []) if "tool" in s]
            answer = next((s["answer"] for s in (rnd.solution if rnd else []) if "answer" in s), "Done.")
            if rnd is None:
                msg = AIMessage(content="Noted.")
            elif self.policy == "scripted":
                msg = self._scripted(rnd, messages, done)
            elif self.policy == "naive":
                msg = AIMessage(content="\\bbox{A}" if rnd.type == "multi_choice" else "I have looked at it.")
            elif done < len(steps):
                st = steps[done]
                msg = self._call(st["tool"], dict(st.get("args") or {}), rnd.id, done)
            else:
                msg = AIMessage(content=str(answer))
            prompt = sum(approx_tokens(message_text(m)) for m in messages) + 1
            completion = approx_tokens(message_text(msg) + json.dumps(msg.tool_calls)) + 1
            msg.usage_metadata = {
                "input_tokens": prompt,
                "output_tokens": completion,
                "total_tokens": prompt + completion,
            }
            return ChatResult(generations=[ChatGeneration(message=msg)])

    return ScriptedPolicy(policy=policy, seen=[])


def litellm_model(model: str, api_base: str | None = None, api_key: str | None = None, temperature: float = 0.0) -> Any:
    """A LangChain chat model over ``litellm.completion`` (any provider LiteLLM knows), with tool calling."""
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, convert_to_openai_messages
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.utils.function_calling import convert_to_openai_tool

    class LiteLLMChat(BaseChatModel):
        model: str
        api_base: str | None = None
        api_key: str | None = None
        temperature: float = 0.0

        @property
        def _llm_type(self) -> str:
            return "litellm"

        def bind_tools(self, tools: Any, **kw: Any) -> Any:
            return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kw)

        def _generate(self, messages: list, stop: Any = None, run_manager: Any = None, **kw: Any) -> ChatResult:
            import litellm

            params: dict[str, Any] = {
                "model": self.model,
                "messages": convert_to_openai_messages(messages),
                "temperature": self.temperature,
            }
            if self.api_base:
                params["api_base"] = self.api_base
            if self.api_key:
                params["api_key"] = self.api_key
            if kw.get("tools"):
                params["tools"] = kw["tools"]
            if stop:
                params["stop"] = stop
            resp = litellm.completion(**params)
            m = resp.choices[0].message
            calls = []
            for tc in getattr(m, "tool_calls", None) or []:
                try:
                    args = json.loads(tc.function.arguments or "{}")
                except ValueError:
                    args = {"_raw": tc.function.arguments}
                calls.append({"name": tc.function.name, "args": args, "id": tc.id, "type": "tool_call"})
            usage = getattr(resp, "usage", None)
            meta = (
                {
                    "input_tokens": getattr(usage, "prompt_tokens", 0) or 0,
                    "output_tokens": getattr(usage, "completion_tokens", 0) or 0,
                    "total_tokens": getattr(usage, "total_tokens", 0) or 0,
                }
                if usage
                else None
            )
            msg = AIMessage(
                content=m.content or "",
                tool_calls=calls,
                usage_metadata=meta,
                response_metadata={"model_name": self.model},
            )
            return ChatResult(generations=[ChatGeneration(message=msg)])

    return LiteLLMChat(model=model, api_base=api_base, api_key=api_key, temperature=temperature)


# The runner --------------------------------------------------------------------------------------------------
def copy_overlay(src: Path, dest: Path) -> int:
    """Copy the files under ``src`` into ``dest`` (new files and overwrites; nothing is deleted)."""
    n = 0
    if not src.is_dir():
        return 0
    for f in sorted(src.rglob("*")):
        if f.is_file():
            t = dest / f.relative_to(src)
            t.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, t)
            n += 1
    return n


def feedback_message(feedback: str) -> str:
    """The user message that carries a round's feedback (its own message, after the round)."""
    return f"{FEEDBACK_PREFIX} {feedback}"


@dataclass
class RoundResult:
    id: str
    type: str
    score: float | None = 0.0  # None: unscored (the reason in ``unscored``)
    passed: bool | None = False
    answer: str = ""
    feedback: str = ""
    detail: Any = None
    error: str | None = None
    tool_calls: int = 0
    seconds: float = 0.0
    tokens: int = 0
    injected_skills: list[str] = field(default_factory=list)
    injected_memories: list[str] = field(default_factory=list)  # the memory lines the model received (memory arms)
    unscored: str | None = None
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["answer"] = self.answer[-400:]
        if not self.unscored:
            del d["unscored"]
        if not self.notes:
            del d["notes"]
        if not self.injected_memories:
            del d["injected_memories"]
        return d


def drain_learning(plugin: MetaClawPlugin, timeout: float = 300.0) -> dict[str, Any]:
    """Wait until the plugin's background work and learning jobs (judge, evolution) have nothing pending."""
    t0 = time.monotonic()
    plugin.flush(30)
    fl = getattr(plugin, "learning", None)
    if fl is None:
        return {"waited_s": round(time.monotonic() - t0, 2)}
    idle = 0
    while time.monotonic() - t0 < timeout and idle < 2:  # two quiet checks in a row: reviews may enqueue work
        try:
            fl.tick(force=True)
        except Exception:
            pass
        plugin.flush(10)
        q = (fl.status().get("queues") or {}) if hasattr(fl, "status") else {}
        pending = sum(n for qq in q.values() for st, n in (qq or {}).items() if st in ("pending", "running", "queued"))
        idle = idle + 1 if not pending else 0
        time.sleep(0.2)
    return {"waited_s": round(time.monotonic() - t0, 2)}


# Arms ------------------------------------------------------------------------------------------------
def _policy_missing() -> str | None:
    """Why the served policy cannot run here (the ``train-local`` extra: torch, transformers, peft)."""
    import importlib.util

    missing = [m for m in ("torch", "transformers", "peft") if importlib.util.find_spec(m) is None]
    return f"{', '.join(missing)} not installed: pip install 'metaclaw-plugin[train-local]'" if missing else None


@dataclass(frozen=True)
class ArmSpec:
    name: str
    plugin: bool
    description: str
    unavailable: Callable[[], str | None] = lambda: None
    skills: bool = True  # a plugin arm that injects and evolves skills
    memory: bool = False  # a plugin arm that remembers the user across days (metaclaw_plugin.memory)


ARMS: dict[str, ArmSpec] = {
    a.name: a
    for a in (
        ArmSpec("baseline", False, "no plugin"),
        ArmSpec("skills", True, "skill injection + evolution (the fast loop)"),
        ArmSpec("skills+rl", True, "skills + the slow loop (RL on the policy's weights)", _policy_missing),
        ArmSpec("memory", True, "memory of the user across days, no skills", skills=False, memory=True),
        ArmSpec("skills+memory", True, "skills + memory of the user across days", memory=True),
    )
}
ARM_ALIASES = {"plugin": "skills"}


def prepare_library(skills: Path, seed: Path | None) -> str:
    """The skills arm's starting library: ``seed`` copied in, or empty (the starter skills retired, so
    that a hand-written skill cannot stand in for a learned one). Returns what it is, in words."""
    from metaclaw_plugin.skillbank.bank import bundled_skills_dir
    from metaclaw_plugin.skillbank.files import SkillStore

    if seed is not None:
        shutil.copytree(seed, skills, ignore=shutil.ignore_patterns(".metaclaw"))
        return f"seeded from {seed}"
    store = SkillStore(skills)
    store.seed_from(bundled_skills_dir(), actor="bench")
    for name in list(store.load().skills):
        store.set_status(name, "retired", actor="bench", reason="the learning figure starts from an empty library")
    return "empty (the starter skills retired)"


class ArmRunner:
    """One arm of a run: its per-day workspaces, and for a plugin arm the plugin home, under ``work``."""

    def __init__(
        self,
        bench: Bench,
        arm: str,
        work: Path,
        model_factory: Callable[[], Any],
        *,
        max_steps: int,
        plugin_settings: dict[str, Any] | None = None,
        skills_dir: Path | None = None,
        session_suffix: str = "",
        policy_max_tokens: int = 16,
        log: Callable[[str], Any] = print,
    ):
        self.bench = bench
        self.arm = arm
        self.session_suffix = session_suffix  # a resumed run's sessions are new ones
        self.spec = ARMS[ARM_ALIASES.get(arm, arm)]
        self.work = work
        self.workspace = work / "days"
        self.model = model_factory()
        self.max_steps = max_steps
        self.log = log
        self.plugin: MetaClawPlugin | None = None
        self.middleware = None
        self.library: str | None = None
        self.slow: Any = None  # the skills+rl arm's served policy and trainer (rl_arm.SlowLoop)
        self._turns_seen: dict[str, int] = {}
        work.mkdir(parents=True, exist_ok=True)
        if self.spec.plugin:
            from metaclaw_plugin.config import Settings
            from metaclaw_plugin.plugin import MetaClawPlugin

            home = work / "home"
            marker = home / "library.txt"
            if not marker.exists():
                home.mkdir(parents=True, exist_ok=True)
                marker.write_text(prepare_library(home / "skills", skills_dir), "utf-8")
            self.library = marker.read_text("utf-8")
            settings = Settings(home=home, **(plugin_settings or {}))
            self.plugin = MetaClawPlugin(settings).start()
            from metaclaw_langchain import MetaClawMiddleware

            # The runner ends each day's session itself, with the day's outcome.
            self.middleware = MetaClawMiddleware(self.plugin, end_sessions=False)
            if self.spec.name == "skills+rl":
                from .rl_arm import SlowLoop

                self.slow = SlowLoop(self.plugin, max_tokens=policy_max_tokens)
                self.model = self.slow.model

    def _agent(self, sandbox: Sandbox) -> Any:
        from langchain.agents import create_agent
        from langgraph.checkpoint.memory import InMemorySaver

        return create_agent(
            self.model,
            sandbox.tools(),
            system_prompt=AGENT_PROMPT,
            middleware=[self.middleware] if self.middleware else [],
            checkpointer=InMemorySaver(),
        )

    def _invoke(self, agent: Any, messages: list[Any], thread: str) -> tuple[Any, int, str | None]:
        """(state, tokens of this call's model replies, error)."""
        from langchain_core.messages import AIMessage

        cfg = {
            "configurable": {"thread_id": thread},
            "metadata": {"session_id": thread},
            "recursion_limit": 2 * self.max_steps + 3,
        }
        before = len((agent.get_state(cfg).values or {}).get("messages") or [])
        try:
            state = agent.invoke({"messages": messages}, config=cfg)
        except Exception as e:
            return None, 0, f"{type(e).__name__}: {str(e)[:300]}"
        new = (state.get("messages") or [])[before:]
        if self.slow is not None:
            for m in new:
                self.slow.note(m)
        usage: list[dict[str, Any]] = [dict(m.usage_metadata or {}) for m in new if isinstance(m, AIMessage)]
        tokens = sum(int(u.get("total_tokens") or 0) for u in usage)
        return state, tokens, None

    def _set(self, rnd: Round | None) -> None:
        if hasattr(self.model, "round"):
            self.model.round = rnd

    def _fresh_workspace(self, ws: Path, prev: Path | None, day: Day) -> tuple[int, list[str]]:
        if ws.exists() or ws.is_symlink():
            shutil.rmtree(ws)  # a day run again starts from the previous day's copy
        notes = copy_workspace(prev if prev is not None else self.bench.workspace, ws)
        return copy_overlay(day.workspace, ws), notes

    def run_day(
        self,
        day: Day,
        prev: Path | None,
        *,
        resume: dict[str, Any] | None = None,
        on_round: Callable[[dict[str, Any]], Any] | None = None,
    ) -> dict[str, Any]:
        """Play one day in a fresh copy of the workspace as the previous day (``prev``) left it.

        ``resume`` (a partial day from ``progress.json``: its finished rounds and transcript) continues the
        day in its workspace as the interruption left it, the transcript replayed as history, without
        asking the finished rounds again. ``on_round`` gets the partial day after every round."""
        from langchain_core.messages import AIMessage, HumanMessage

        ws = self.workspace / (day.folder or day.id)
        notes = list(day.notes)
        done: list[dict[str, Any]] = []
        transcript: list[dict[str, str]] = []
        if resume is not None and ws.is_dir():
            heal_scripts(ws, day.scripts)
            done, transcript = list(resume["rounds"]), list(resume["transcript"])
            copied = int(resume.get("files_added", 0))
            notes += list(resume.get("notes", []))
            notes.append(
                f"resumed after round {len(done)} of {len(day.rounds)}; the workspace is as the interruption left it"
            )
        else:
            copied, left_out = self._fresh_workspace(ws, prev, day)
            notes += left_out
        if hasattr(self.model, "workspace"):
            self.model.workspace = ws
        sandbox = Sandbox(ws)
        agent = self._agent(sandbox)
        thread = f"{self.arm}-{day.id}{self.session_suffix}"
        opening: list[Any] = [
            HumanMessage(content=m["content"]) if m["role"] == "user" else AIMessage(content=m["content"])
            for m in [*day.history, *transcript]
        ]
        results: list[dict[str, Any]] = list(done)
        for rnd in day.rounds[len(done) :]:
            res, talk = self._round(rnd, day, ws, agent, sandbox, thread, opening)
            if talk:
                opening = []  # replayed once, before the day's first asked round
            transcript += talk
            results.append(res.as_dict())
            if on_round is not None:
                on_round(
                    {"day": day.id, "rounds": results, "transcript": transcript, "files_added": copied, "notes": notes}
                )
            self.log(
                f"  [{self.arm}] {day.id}/{rnd.id} ({rnd.type}): "
                + (f"unscored ({res.unscored})" if res.unscored else f"score {res.score:.2f}")
                + (f"  error: {res.error}" if res.error else "")
            )
        return self._end_day(day, thread, ws, copied, notes, results)

    def _round(
        self, rnd: Round, day: Day, ws: Path, agent: Any, sandbox: Sandbox, thread: str, opening: list[Any]
    ) -> tuple[RoundResult, list[dict[str, str]]]:
        """Ask one round, score it (or say why not), give its feedback. Returns the result and the text
        exchanged (for a resumed day's history)."""
        from langchain_core.messages import HumanMessage

        res = RoundResult(id=rnd.id, type=rnd.type, unscored=rnd.unscored, notes=list(rnd.notes))
        if not rnd.question.strip():
            res.score = res.passed = None
            return res, []
        self._set(rnd)
        n_calls = len(sandbox.calls)
        t0 = time.perf_counter()
        state, tokens, err = self._invoke(agent, [*opening, HumanMessage(content=rnd.prompt())], thread)
        msgs = (state or {}).get("messages") or []
        res.answer, res.error = (message_text(msgs[-1]) if msgs else ""), err
        res.tool_calls = len(sandbox.calls) - n_calls
        talk = [{"role": "user", "content": rnd.prompt()}, {"role": "assistant", "content": res.answer}]
        if rnd.unscored is None:
            try:
                sc = score_multi_choice(rnd, res.answer) if rnd.type == "multi_choice" else run_check(rnd, day, ws)
            except Exception as e:  # the harness's failure, not the agent's: recorded, never the run's end
                res.unscored = f"the scorer failed: {type(e).__name__}: {str(e)[:200]}"
            else:
                res.score, res.passed = float(sc["score"]), bool(sc["passed"])
                res.detail = {k: v for k, v in sc.items() if k not in ("score", "passed")}
        if res.unscored is not None:
            res.score = res.passed = None
        else:
            res.feedback = rnd.feedback_correct if res.passed else rnd.feedback_incorrect
        if self.plugin is not None:
            res.injected_skills, res.injected_memories = self._last_injected(thread)
            if res.passed is not None:
                from metaclaw_plugin.types import TurnContext

                self.plugin.on_feedback(TurnContext(thread, host="bench"), 1.0 if res.passed else -1.0)
        if res.feedback:  # the round's feedback is the next user message of the day
            self._set(None)
            fb_state, fb_tokens, _ = self._invoke(agent, [HumanMessage(content=feedback_message(res.feedback))], thread)
            tokens += fb_tokens
            fb_msgs = (fb_state or {}).get("messages") or []
            talk += [
                {"role": "user", "content": feedback_message(res.feedback)},
                {"role": "assistant", "content": message_text(fb_msgs[-1]) if fb_msgs else ""},
            ]
            if self.plugin is not None:
                self._last_injected(thread)
        res.tokens = tokens
        res.seconds = round(time.perf_counter() - t0, 2)
        return res, talk

    def _end_day(
        self, day: Day, thread: str, ws: Path, copied: int, notes: list[str], results: list[dict[str, Any]]
    ) -> dict[str, Any]:
        self._set(None)
        day_out: dict[str, Any] = {
            "day": day.id,
            "folder": ws.name,
            "title": day.title,
            "tags": day.tags,
            "session": thread,
            "opening_messages": len(day.history),
            "files_added": copied,
            **summarise_rounds(results),
            "rounds": results,
            **({"notes": notes} if notes else {}),
        }
        plugin = self.plugin
        if plugin is not None:
            from metaclaw_plugin.types import TurnContext

            outcome = {"success": all(r["passed"] is not False for r in results), "score": day_out["accuracy"]}

            def end() -> None:
                plugin.on_session_end(TurnContext(thread, host="bench"), outcome, reason="bench day end")

            if self.slow is not None:
                day_out["weights_answered"] = self.slow.take_weights()
                day_out["slow_loop"] = self.slow.away(end)
            else:
                end()
            day_out["learning"] = drain_learning(plugin)
            st = plugin.status()
            day_out["skills_active"] = st["skills"]["active"]
            day_out["skills_quarantined"] = st["skills"].get("quarantined")
            day_out["skill_generation"] = st["skill_generation"]
            day_out["evolved_skills"] = self.evolved_skills()
            if self.spec.memory:
                mem = plugin.memory_status()
                day_out["memories_active"] = (mem.get("counts") or {}).get("active", {})
                day_out["memory_extractor"] = mem.get("extractor")
        return day_out

    def evolved_skills(self) -> dict[str, list[str]]:
        """The evolved skills in the library, by name: the sessions they were learned from."""
        if self.plugin is None:
            return {}
        loaded = self.plugin.skills.store.load().skills
        return {n: list(s.source_sessions) for n, s in sorted(loaded.items()) if s.origin == "evolved"}

    def _last_injected(self, thread: str) -> tuple[list[str], list[str]]:
        """The skills and the memory lines this round's model calls carried (read from the recorded turns, whose
        messages are the ones the model received)."""
        names: list[str] = []
        memories: list[str] = []
        if self.plugin is None:
            return names, memories
        try:
            self.plugin.store.flush(5)
            sess = self.plugin.store.get_session(thread)
            if sess and sess.turns:
                start = self._turns_seen.get(thread, 0)
                self._turns_seen[thread] = len(sess.turns)
                for t in sess.turns[start:]:  # this round's model calls
                    names += [n for n in t.injected_skills if n not in names]
                    memories += [m for m in memory_lines(t.messages) if m not in memories]
        except Exception:
            pass
        return names, memories

    def close(self) -> None:
        if self.slow is not None:
            self.slow.close()
        if self.plugin is not None:
            self.plugin.stop()


def memory_lines(messages: Sequence[Any]) -> list[str]:
    """The memory lines of the ``<metaclaw-memory>`` section in ``messages`` (as a model received them)."""
    from metaclaw_plugin.memory.view import CLOSE, OPEN

    out: list[str] = []
    for m in messages:
        if not isinstance(m, dict) or m.get("role") != "system":
            continue
        text = message_text(m)
        while OPEN in text:
            body, _, text = text.partition(OPEN)[2].partition(CLOSE)
            out += [line[2:] for line in body.splitlines() if line.startswith("- ")]
    return out


def summarise_rounds(results: Sequence[RoundResult] | Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Accuracy and the rest over the scored rounds; unscored rounds are counted apart."""
    rows: list[dict[str, Any]] = [r.as_dict() if isinstance(r, RoundResult) else r for r in results]
    n = len(rows)
    scored = [r for r in rows if r.get("score") is not None]
    fc = [r for r in scored if r["type"] == "file_check"]
    mc = [r for r in scored if r["type"] == "multi_choice"]
    return {
        "rounds_n": n,
        "scored_n": len(scored),
        "unscored_n": n - len(scored),
        "accuracy": round(sum(r["score"] for r in scored) / len(scored), 4) if scored else None,
        "completion": round(sum(1 for r in fc if r["passed"]) / len(fc), 4) if fc else None,
        "tokens_per_round": round(sum(r.get("tokens", 0) for r in rows) / n, 1) if n else None,
        "file_check_n": len(fc),
        "multi_choice_n": len(mc),
        "multi_choice_accuracy": round(sum(r["score"] for r in mc) / len(mc), 4) if mc else None,
        "multi_choice_exact": round(sum(1 for r in mc if r["passed"]) / len(mc), 4) if mc else None,
        "errors": sum(1 for r in rows if r.get("error")),
    }


# Lesson reach from a run ------------------------------------------------------------------------------
def lesson_reach(arm: dict[str, Any]) -> dict[str, Any]:
    """For each round whose day carries a ``preference_tags`` tag that an earlier day carried and failed
    a round under: was a skill learned from that day's session (its feedback) injected into it? Rates
    per tag and overall (a round counts once overall: reached when any of its lessons reached it)."""
    days = arm["days"]
    learned: dict[str, set[str]] = {}  # session -> skills learned from it (by the end of the run)
    for d in days:
        for name, sources in (d.get("evolved_skills") or {}).items():
            for s in sources:
                learned.setdefault(s, set()).add(name)
    per_tag: dict[str, list[int]] = {}
    overall = [0, 0]
    missed: list[str] = []
    for j, d in enumerate(days):
        teachers = {
            t: [e["session"] for e in days[:j] if t in e["tags"] and any(r["passed"] is False for r in e["rounds"])]
            for t in d["tags"]
        }
        teachers = {t: s for t, s in teachers.items() if s}
        if not teachers:
            continue
        for r in d["rounds"]:
            any_hit = False
            for t, sessions in teachers.items():
                skills = set().union(*(learned.get(s, set()) for s in sessions))
                hit = bool(skills & set(r.get("injected_skills") or []))
                any_hit |= hit
                c = per_tag.setdefault(t, [0, 0])
                c[0] += hit
                c[1] += 1
            overall[0] += any_hit
            overall[1] += 1
            if not any_hit:
                missed.append(f"{d['day']}/{r['id']}")
    rate = lambda a, b: None if b == 0 else round(a / b, 4)  # noqa: E731
    return {
        "per_tag": {t: {"reached": a, "rounds": b, "rate": rate(a, b)} for t, (a, b) in sorted(per_tag.items())},
        "overall": {"reached": overall[0], "rounds": overall[1], "rate": rate(*overall)},
        "missed": missed,
    }


def run(
    bench_dir: Path | str,
    *,
    model: str | None = None,
    evolver_model: str | None = None,
    judge_model: str | None = None,
    api_base: str | None = None,
    api_key: str | None = None,
    policy: str = "auto",
    arms: Sequence[str] = ("baseline", "skills"),
    days: Sequence[str] | None = None,
    quick: bool = False,
    max_steps: int = 12,
    skills_dir: Path | None = None,
    keep_workspace: bool = False,
    promotion: str = "auto",
    retrieval: str | None = None,
    run_dir: Path | None = None,
    resume: bool = False,
    stop_after_days: int | None = None,
    policy_model: str | None = None,
    policy_max_tokens: int = 16,
    log: Callable[[str], Any] = print,
) -> dict[str, Any]:
    """Run the arms over the benchmark's days. With ``run_dir`` the workspaces, plugin homes and the
    result so far (``progress.json``, written after every round) are kept there, and ``resume`` continues
    an interrupted run from them, mid-day included; ``stop_after_days`` stops after that many days (as an
    interruption). A day's workspace is removed once the next day has finished (only the last finished
    day's is needed to go on) unless ``keep_workspace``.
    ``policy_model`` is the skills+rl arm's trainable policy (a local folder or ``smollm2``; default: a
    tiny random model built in-process), ``policy_max_tokens`` its replies' length."""
    bench = load_bench(bench_dir)
    if days:
        unknown = set(days) - {d.id for d in bench.days}
        if unknown:
            raise BenchFormatError(f"unknown day(s): {', '.join(sorted(unknown))}")
        bench.days = [d for d in bench.days if d.id in set(days)]
    if quick:
        bench.days = bench.days[:2]
    arms = [ARM_ALIASES.get(a, a) for a in arms]
    bad = [a for a in arms if a not in ARMS]
    if bad:
        raise BenchFormatError(f"unknown arm(s) {bad}; known: {', '.join(ARMS)}")
    if policy_model is not None and "skills+rl" not in arms:
        raise BenchFormatError("--policy-model is the skills+rl arm's policy: add --arm skills+rl")
    if policy == "auto":
        policy = "scripted" if bench.layout == "public" else "oracle"
    plumbing = model is None
    progress = run_dir / "progress.json" if run_dir is not None else None
    if progress is not None and progress.exists() and not resume:
        raise BenchFormatError(f"{progress} exists: pass --resume to continue that run, or another --run-dir")
    if resume and (progress is None or not progress.exists()):
        raise BenchFormatError("--resume needs the --run-dir of an interrupted run (no progress.json there)")
    offline_evolver = evolver_model is None and model is None
    argv = (["--quick"] if quick else []) + ([f"--model {model}"] if model else [])
    result: dict[str, Any] = {
        **provenance("workday", argv),
        "plumbing_run": plumbing,
        "note": (
            f"PLUMBING RUN: a scripted policy ({policy}) played the agent, not a model"
            + ("; a scripted evolver wrote the skills" if offline_evolver else "")
            + ". These numbers test the harness, they are not a model's score."
            + (" The skills+rl arm's agent is the served policy (its own note below)." if "skills+rl" in arms else "")
            if plumbing
            else f"Scored run: the agent is {model}."
        ),
        "agent": model or f"scripted:{policy}",
        "models": {
            "agent": model or f"scripted:{policy}",
            "evolver": evolver_model or ("scripted" if offline_evolver else None),
            "judge": judge_model,
            "api_base": api_base,
            **({"policy": policy_model or "tiny"} if "skills+rl" in arms else {}),
        },
        "evolver_model": evolver_model,
        "judge_model": judge_model,
        "retrieval": retrieval or "default",
        "bench": {
            "path": str(bench.path),
            "name": bench.name,
            "layout": bench.layout,
            "days": len(bench.days),
            "rounds": sum(len(d.rounds) for d in bench.days),
            "rounds_unscorable": sum(1 for d in bench.days for r in d.rounds if r.unscored),
            "days_skipped": bench.skipped,
        },
        "arms_requested": list(arms),
        "arms": {},
        "arms_unavailable": {},
        "errors": [f"day {s['day']} skipped: {s['reason']}" for s in bench.skipped],
        "partial": {},
    }
    if resume:
        assert progress is not None
        saved = _progress.read(progress, [d.id for d in bench.days])
        if saved["bench"].get("path") != str(bench.path) or saved["models"] != result["models"]:
            raise BenchFormatError(f"{progress} is a run of another benchmark or other models; not resuming")
        result["arms"] = saved["arms"]
        result["partial"] = saved.get("partial") or {}
        result["resumed"] = saved.get("resumed", 0) + 1
    for a in arms:
        why = ARMS[a].unavailable()
        if why:
            result["arms_unavailable"][a] = why
    if any(ARMS[a].plugin for a in arms):
        import importlib.util

        if importlib.util.find_spec("metaclaw_langchain") is None or importlib.util.find_spec("langchain") is None:
            for a in arms:
                if ARMS[a].plugin:
                    result["arms_unavailable"][a] = "metaclaw_langchain / langchain is not installed"
    run_arms = [a for a in arms if a not in result["arms_unavailable"]]
    if model is not None and evolver_model is None and any(ARMS[a].plugin for a in run_arms):
        result["errors"].append("no --evolver-model: the skills arm injects its library but learns nothing new")

    def factory() -> Any:
        return litellm_model(model, api_base=api_base, api_key=api_key) if model else scripted_model(policy)

    from .common import cache_dir

    if run_dir is None:
        tmp_root = cache_dir() / "tmp"
        tmp_root.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix="workday-", dir=str(tmp_root)))
    else:
        scratch = run_dir
        scratch.mkdir(parents=True, exist_ok=True)
    days_run = 0
    with contextlib.ExitStack() as stack:
        plugin_settings = _plugin_settings(
            stack, evolver_model, judge_model, api_base, api_key, promotion, retrieval, offline_evolver
        )
        arm_settings = {a: arm_plugin_settings(plugin_settings, ARMS[a], offline_evolver) for a in run_arms}
        arm_settings = {a: v for a, v in arm_settings.items() if ARMS[a].plugin}
        rl_summary: dict[str, Any] = {}
        if "skills+rl" in arm_settings:
            arm_settings["skills+rl"], rl_summary = _rl_settings(
                plugin_settings, policy_model, judge_model, scratch / "skills+rl"
            )
        try:
            for arm in run_arms:
                prior = result["arms"].get(arm, {}).get("days", [])
                if len(prior) >= len(bench.days):
                    continue
                log(f"arm {arm}" + (f" (resuming after {prior[-1]['day']})" if prior else ""))
                runner = ArmRunner(
                    bench,
                    arm,
                    scratch / arm,
                    factory,
                    max_steps=max_steps,
                    plugin_settings=arm_settings.get(arm),
                    skills_dir=skills_dir if ARMS[arm].skills else None,
                    session_suffix=f"-resume{result['resumed']}" if resume else "",
                    policy_max_tokens=policy_max_tokens,
                    log=log,
                )
                day_results = list(prior)

                def on_round(partial: dict[str, Any], arm: str = arm) -> None:
                    result["partial"][arm] = partial
                    if progress is not None:
                        _progress.write(progress, result)

                try:
                    for day in bench.days[len(prior) :]:
                        if stop_after_days is not None and days_run >= stop_after_days:
                            result["interrupted"] = f"stopped after {days_run} day(s) (--stop-after-days)"
                            break
                        prev = runner.workspace / _folder(day_results[-1]) if day_results else None
                        partial = result["partial"].pop(arm, None)
                        day_results.append(runner.run_day(day, prev, resume=partial, on_round=on_round))
                        result["partial"].pop(arm, None)
                        days_run += 1
                        if not keep_workspace and len(day_results) >= 2:
                            shutil.rmtree(runner.workspace / _folder(day_results[-2]), ignore_errors=True)
                        result["arms"][arm] = _arm_summary(day_results, runner)
                        if arm == "skills+rl":
                            result["arms"][arm].update(rl_summary)
                        if progress is not None:
                            _progress.write(progress, result)
                finally:
                    runner.close()
                if result.get("interrupted"):
                    break
            _compare(result)
        finally:
            if keep_workspace or run_dir is not None:
                result["workspace"] = str(scratch)
            else:
                shutil.rmtree(scratch, ignore_errors=True)
    if not result["partial"]:
        del result["partial"]
    if progress is not None:
        _progress.write(progress, result)
    return result


def _folder(day_result: dict[str, Any]) -> str:
    """The day's workspace folder (a result from before folders were named apart from ids: the id)."""
    return str(day_result.get("folder") or day_result["day"])


def _plugin_settings(
    stack: contextlib.ExitStack,
    evolver_model: str | None,
    judge_model: str | None,
    api_base: str | None,
    api_key: str | None,
    promotion: str,
    retrieval: str | None,
    offline_evolver: bool,
) -> dict[str, Any]:
    """Settings of the plugin arms. Offline, the evolver is the scripted one on a local upstream (started in
    ``stack``; it also plays the skills+rl arm's judge: :class:`~.rl_arm.ScriptedLearners`); with models, the
    given ones."""
    from .reach import mode_settings, scripted_evolution

    out: dict[str, Any] = {"mode": "skills_only", "evolution": {"promotion": promotion}}
    conn = {**({"api_base": api_base} if api_base else {}), **({"api_key": api_key} if api_key else {})}
    if offline_evolver:
        from metaclaw_plugin.devtools.upstream import Upstream

        from .rl_arm import ScriptedLearners

        up = stack.enter_context(Upstream(script=ScriptedLearners()))  # the judge is for the skills+rl arm
        out["evolution"] = scripted_evolution(up.url, promotion=promotion)
        out["reward"] = {"enabled": False}
    elif evolver_model:
        out["evolution"].update(model=evolver_model, **conn)
    if judge_model:
        out["reward"] = {"model": judge_model, **conn}
    if retrieval:
        out["retrieval"] = mode_settings(retrieval)
    return out


def arm_plugin_settings(base: dict[str, Any], spec: ArmSpec, offline: bool) -> dict[str, Any]:
    """One plugin arm's settings: the skills arm's, with memory on only in the memory arms (the rule extractor
    offline; the evolver's model otherwise) and, in ``memory``, no skill injected or evolved."""
    out = dict(base)
    out["memory"] = {"enabled": spec.memory, **({"extractor": "rules"} if offline else {})}
    if not spec.skills:
        out["evolution"] = {**(base.get("evolution") or {}), "enabled": False}
        out["retrieval"] = {**(base.get("retrieval") or {}), "top_k": 0}
    return out


def _rl_settings(
    skills: dict[str, Any], policy_model: str | None, judge_model: str | None, work: Path
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The skills+rl arm's plugin settings (the skills arm's, plus :func:`.rl_arm.rl_settings`) and what its
    summary says about the policy and the judge. Offline (no judge model) the judge is the scripted one, on
    the scripted evolver's local upstream."""
    from .rl_arm import JUDGE_RULE, RL_NOTE, TINY, base_model, rl_settings

    tiny = policy_model in (None, TINY)
    evo = skills.get("evolution") or {}
    if judge_model:
        judge: dict[str, Any] = dict(skills["reward"])
        judged = judge_model
    elif evo.get("model") == "openai/evolver":  # the scripted upstream is running
        judge = {"model": "openai/judge", "api_base": evo["api_base"], "api_key": "x"}
        judged = f"scripted: {JUDGE_RULE}"
    else:
        judge, judged = {}, "none: turns are scored by the round feedback and the day's outcome only"
    extra = rl_settings(base_model(policy_model, work), judge)
    merged = {k: v for k, v in skills.items()}
    for k, v in extra.items():
        merged[k] = {**merged[k], **v} if isinstance(v, dict) and isinstance(merged.get(k), dict) else v
    if tiny:
        note = RL_NOTE
    elif not judge_model:
        note = f"The policy {policy_model} trained on rewards from {judged}; not a judged model's score."
    else:
        note = f"The policy {policy_model}, trained between days on turns judged by {judge_model}."
    policy = "tiny random model built in-process" if tiny else str(policy_model)
    return merged, {"policy": policy, "judge": judged, "note": note}


def _arm_summary(day_results: list[dict[str, Any]], runner: ArmRunner) -> dict[str, Any]:
    rows = [r for d in day_results for r in d["rounds"]]
    out: dict[str, Any] = {
        "description": runner.spec.description,
        **{k: v for k, v in summarise_rounds(rows).items() if k != "rounds_n"},
        "rounds_n": len(rows),
        "days": day_results,
    }
    if runner.library is not None and runner.spec.skills:
        out["library"] = runner.library
        out["lesson_reach"] = lesson_reach({"days": day_results})
    if runner.spec.memory:
        asked = [r for d in day_results[1:] for r in d["rounds"] if r.get("score") is not None]
        hit = sum(1 for r in asked if r.get("injected_memories"))
        out["memory_reach"] = {
            "rounds_with_memory": hit,
            "rounds": len(asked),  # the scored rounds after day 1: what earlier days' memories could reach
            "rate": round(hit / len(asked), 4) if asked else None,
            "extractor": day_results[-1].get("memory_extractor") if day_results else None,
        }
    return out


def _compare(result: dict[str, Any]) -> None:
    arms = result["arms"]
    if "baseline" not in arms:
        return
    b = arms["baseline"]
    result["comparison"] = {
        a: {
            "accuracy_delta": _delta(x["accuracy"], b["accuracy"]),
            "completion_delta": _delta(x["completion"], b["completion"]),
        }
        for a, x in arms.items()
        if a != "baseline"
    }


def _delta(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else round(a - b, 4)


def markdown(result: dict[str, Any]) -> str:
    lines = []
    if result.get("plumbing_run"):
        lines += [f"> **{result['note']}**", ""]
    arms = list(result.get("arms", {}))
    cols = ("accuracy", "completion", "tokens_per_round")
    head = "| day | " + " | ".join(f"{a} acc | {a} compl | {a} tok/round" for a in arms) + " |"
    lines += [head, "|---|" + "---:|---:|---:|" * len(arms)]
    n_days = max((len(result["arms"][a]["days"]) for a in arms), default=0)
    for i in range(n_days):
        cells, day = [], ""
        for a in arms:
            ds = result["arms"][a]["days"]
            if i < len(ds):
                day = ds[i]["day"]
                cells += [_fmt_cell(k, ds[i].get(k)) for k in cols]
            else:
                cells += ["—"] * 3
        lines.append(f"| {day} | " + " | ".join(cells) + " |")
    if arms:
        cells = [f"**{_fmt_cell(k, result['arms'][a].get(k))}**" for a in arms for k in cols]
        lines.append("| all | " + " | ".join(cells) + " |")
    for a, why in result.get("arms_unavailable", {}).items():
        lines.append(f"\n{a}: {why}")
    for a in arms:
        lr = result["arms"][a].get("lesson_reach")
        if lr and lr["overall"]["rounds"]:
            lines += ["", f"Lesson reach ({a}, retrieval {result.get('retrieval')}): " + _reach_line(lr)]
    for a in arms:
        mr = result["arms"][a].get("memory_reach")
        if mr and mr["rounds"]:
            lines += [
                "",
                f"Memory reach ({a}, {mr['extractor']} extractor): {mr['rounds_with_memory']} of {mr['rounds']} "
                "scored rounds after day 1 carried a memory from an earlier session",
            ]
    for a in arms:
        x = result["arms"][a]
        if x.get("note"):
            lines += ["", f"> **{a}: {x['note']}**"]
        for d in x["days"]:
            if "slow_loop" in d:
                lines.append(_slow_line(a, d))
    unscored = sorted(
        {
            f"{d['day']}/{r['id']}: {r['unscored']}"
            for a in arms
            for d in result["arms"][a]["days"]
            for r in d["rounds"]
            if r.get("unscored")
        },
        key=natural_key,
    )
    if unscored:
        lines += ["", f"UNSCORED ({len(unscored)} round(s), not in the figures):", *(f"- {u}" for u in unscored)]
    if result.get("interrupted"):
        lines.append(f"\nINTERRUPTED: {result['interrupted']}; continue with --resume and the same --run-dir")
    for e in result.get("errors", []):
        lines.append(f"\nnote: {e}")
    return "\n".join(lines)


def _slow_line(arm: str, d: dict[str, Any]) -> str:
    sl = d["slow_loop"]
    return (
        f"- {arm} {d['day']}: answered by {', '.join(map(_weights, d['weights_answered'])) or 'nothing'}; away: "
        f"{sl['steps']} training step(s) on {sl['samples_used']} sample(s) ({sl['samples_dropped']} dropped, "
        f"{sl['samples_left']} left over, mean reward {sl['mean_reward']}), then serving {_weights(sl['weights_after'])}"
    )


def _weights(label: str | None) -> str:
    """An adapter folder by its name (``step-000001``); ``base`` as is."""
    return Path(label).name if label and label != "base" else str(label)


def _reach_line(lr: dict[str, Any]) -> str:
    tags = ", ".join(f"{t} {v['reached']}/{v['rounds']}" for t, v in lr["per_tag"].items())
    o = lr["overall"]
    return f"overall {o['reached']}/{o['rounds']}" + (f" ({tags})" if tags else "")


def _fmt_cell(key: str, x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x:.0f}" if key == "tokens_per_round" else f"{x:.0%}"


# Lesson reach across retrieval modes --------------------------------------------------------------------
REACH_NOTE = (
    "NOT A MODEL'S SCORE: a scripted policy played the agent and a scripted evolver turned each round's "
    "feedback into a skill; this measures the plugin's evolution and retrieval plumbing on the benchmark's "
    "own data, with no LLM."
)


def reach_by_mode(bench_dir: Path | str, modes: Sequence[str], log: Callable[[str], Any] = print) -> dict[str, Any]:
    """The skills arm, offline, once per retrieval mode; its lesson reach per tag and overall."""
    out: dict[str, Any] = {
        **provenance("workday", [str(bench_dir), "--lesson-reach", ",".join(modes)]),
        "note": REACH_NOTE,
        "bench": str(bench_dir),
        "modes": {},
    }
    for mode in modes:
        log(f"retrieval {mode}")
        res = run(bench_dir, arms=["skills"], retrieval=mode, policy="auto", log=log)
        arm = res["arms"].get("skills")
        if arm is None:
            out["modes"][mode] = {"unavailable": res["arms_unavailable"].get("skills")}
            continue
        out["modes"][mode] = {**arm["lesson_reach"], "accuracy": arm["accuracy"], "completion": arm["completion"]}
    return out


def reach_markdown(doc: dict[str, Any]) -> str:
    lines = [
        f"> **{doc['note']}**",
        "",
        "| retrieval | tag | reached | later rounds | rate |",
        "|---|---|---:|---:|---:|",
    ]
    for mode, r in doc["modes"].items():
        if "unavailable" in r:
            lines.append(f"| {mode} | — | — | — | unavailable: {r['unavailable']} |")
            continue
        for t, v in r["per_tag"].items():
            lines.append(f"| {mode} | {t} | {v['reached']} | {v['rounds']} | {_fmt_cell('rate', v['rate'])} |")
        o = r["overall"]
        lines.append(f"| {mode} | **overall** | {o['reached']} | {o['rounds']} | {_fmt_cell('rate', o['rate'])} |")
    return "\n".join(lines)
