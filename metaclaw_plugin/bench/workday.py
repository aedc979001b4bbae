"""``metaclaw-plugin bench workday``: a runner for benchmarks in the MetaClaw-Bench format.

A benchmark is a folder of simulated workdays. Each day is one working session of rounds; each round
is a user request, scored by a checker command (``file_check``) or against an answer key
(``multi_choice``), and followed by feedback that the agent receives as the next user message. The
workspace persists from round to round and from day to day, as a user's files do. The format is
described in ``benchmarks/README.md`` and validated by :func:`load_bench`.

The agent is a minimal LangChain ``create_agent`` agent with four tools (read, write, list, shell)
confined to a temporary workspace. It runs in two arms over identical copies of the workspace:
``baseline`` (no plugin) and ``plugin`` (``MetaClawMiddleware`` in front of the model, with a fresh
plugin home seeded with the starter skills, and the evolver and judge when models are given). The
plugin arm's fast loop is drained after each day, so skills learned on day *n* are in place on day
*n+1*.

The model is any LiteLLM model string (``--model``). Without one, a scripted policy plays the agent:
``oracle`` replays each round's reference solution (which checks that the benchmark's own checkers
and solutions agree), ``naive`` answers without doing the work. A scripted run exercises the
plumbing only: the result says ``plumbing_run: true`` and is not a score.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .common import REPO_ROOT, provenance

FORMAT = "metaclaw-bench/1"
ROUND_TYPES = ("file_check", "multi_choice")
BBOX = re.compile(r"\\bbox\{([^{}]*)\}")
SCORE_LINE = re.compile(r"^\s*SCORE\s*[=:]\s*([0-9]*\.?[0-9]+)\s*$", re.M)
SHELL_TIMEOUT = 30.0
MAX_TOOL_OUTPUT = 6000
AGENT_PROMPT = (
    "You are a careful assistant working in the user's workspace (the current directory). Use the tools to "
    "read, write and list files and to run shell commands there; paths are relative to the workspace. Do the "
    "task completely, then reply briefly with what you did. For a multiple-choice question, end your reply "
    "with your choice(s) as \\bbox{X} or \\bbox{X,Y} (option letters, all that apply)."
)


class BenchFormatError(ValueError):
    """A benchmark folder that does not follow the format, and where."""


# The format ---------------------------------------------------------------------------------------
@dataclass
class Round:
    id: str
    type: str
    question: str
    check: str | None = None
    timeout: float = 30.0
    options: dict[str, str] = field(default_factory=dict)
    answer: list[str] = field(default_factory=list)
    feedback_correct: str = ""
    feedback_incorrect: str = ""
    solution: list[dict[str, Any]] = field(default_factory=list)

    def prompt(self) -> str:
        if self.type != "multi_choice" or not self.options:
            return self.question
        opts = "\n".join(f"{k}. {v}" for k, v in self.options.items())
        return f"{self.question}\n\n{opts}\n\nSelect all that apply; end with \\bbox{{...}}."


@dataclass
class Day:
    id: str
    path: Path
    rounds: list[Round]
    title: str = ""

    @property
    def workspace(self) -> Path:
        return self.path / "workspace"

    @property
    def checks(self) -> Path:
        return self.path / "checks"


@dataclass
class Bench:
    path: Path
    name: str
    description: str
    days: list[Day]

    @property
    def workspace(self) -> Path:
        return self.path / "workspace"


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
    """Read and validate a benchmark folder."""
    root = Path(path)
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
        day_ids = sorted(d.name for d in root.iterdir() if d.is_dir() and _questions_file(d) is not None)
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
    return Bench(
        path=root, name=str(meta.get("name") or root.name), description=str(meta.get("description", "")), days=days
    )


def _questions_file(d: Path) -> Path | None:
    for n in ("questions.yaml", "questions.yml", "questions.json"):
        if (d / n).is_file():
            return d / n
    return None


def default_scenarios() -> Path | None:
    """benchmarks/scenarios in a checkout; the copy shipped inside the wheel otherwise."""
    for p in (REPO_ROOT / "benchmarks" / "scenarios", Path(__file__).resolve().parent / "scenarios"):
        if p.is_dir():
            return p
    return None


# Scoring ------------------------------------------------------------------------------------------
def parse_bbox(text: str) -> set[str] | None:
    """The letters in the last ``\\bbox{...}`` of ``text``; None when there is none."""
    found = BBOX.findall(text or "")
    if not found:
        return None
    return {t.strip().upper() for t in re.split(r"[,\s;/]+", found[-1]) if t.strip()}


def score_multi_choice(rnd: Round, answer_text: str) -> dict[str, Any]:
    """1 - (fp + fn) / n over the options, floored at 0; no ``\\bbox{}`` at all scores 0."""
    chosen = parse_bbox(answer_text)
    n = len(rnd.options)
    if chosen is None:
        return {"score": 0.0, "passed": False, "chosen": None, "detail": "no \\bbox{...} in the answer"}
    truth = set(rnd.answer)
    fp = len(chosen - truth)
    fn = len(truth - chosen)
    score = max(0.0, 1.0 - (fp + fn) / n)
    return {"score": round(score, 4), "passed": fp == 0 and fn == 0, "chosen": sorted(chosen), "fp": fp, "fn": fn}


def run_check(rnd: Round, day: Day, workspace: Path) -> dict[str, Any]:
    """Run the checker in the workspace. Exit code 0 passes; a ``SCORE=<0..1>`` line gives partial credit."""
    assert rnd.check is not None
    cmd = rnd.check.format(
        checks=str(day.checks), workspace=str(workspace), day=str(day.path), bench=str(day.path.parent)
    )
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "HOME": str(workspace),
        "WORKSPACE": str(workspace),
        "CHECKS": str(day.checks),
    }
    try:
        p = subprocess.run(cmd, shell=True, cwd=workspace, env=env, capture_output=True, text=True, timeout=rnd.timeout)
    except subprocess.TimeoutExpired:
        return {"score": 0.0, "passed": False, "exit_code": None, "detail": f"checker timed out after {rnd.timeout} s"}
    passed = p.returncode == 0
    score = 1.0 if passed else 0.0
    m = SCORE_LINE.findall(p.stdout or "")
    if m:
        score = max(0.0, min(1.0, float(m[-1])))
        if passed:
            score = 1.0
    detail = ((p.stdout or "") + (p.stderr or "")).strip()[-500:]
    return {"score": score, "passed": passed, "exit_code": p.returncode, "detail": detail}


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
        try:
            p = subprocess.run(
                command, shell=True, cwd=self.root, env=env, capture_output=True, text=True, timeout=SHELL_TIMEOUT
            )
        except subprocess.TimeoutExpired:
            return f"error: timed out after {SHELL_TIMEOUT:.0f} s"
        out = (p.stdout or "") + (("\n[stderr]\n" + p.stderr) if p.stderr else "")
        if len(out) > MAX_TOOL_OUTPUT:
            out = out[:MAX_TOOL_OUTPUT] + "\n... (truncated)"
        return f"exit code {p.returncode}\n{out}".strip()

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
    """A chat model that plays the agent from the rounds' reference solutions (offline plumbing runs).

    ``oracle``: one tool call per step of the round's ``solution``, then its ``answer``. ``naive``: no
    tool calls, a non-answer (a multi-choice round gets ``\\bbox{A}``). The runner sets ``.round`` before
    each round. Every call's messages are kept in ``.seen`` (tests read them).
    """
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class ScriptedPolicy(BaseChatModel):
        policy: str = "oracle"
        round: Any = None
        seen: list = []

        @property
        def _llm_type(self) -> str:
            return "metaclaw-scripted"

        def bind_tools(self, tools: Any, **kw: Any) -> Any:
            return self

        def _generate(self, messages: list, stop: Any = None, run_manager: Any = None, **kw: Any) -> ChatResult:
            self.seen.append(list(messages))
            rnd: Round | None = self.round
            last_h = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
            done = sum(1 for m in messages[last_h + 1 :] if isinstance(m, AIMessage))
            steps = [s for s in (rnd.solution if rnd else []) if "tool" in s]
            answer = next((s["answer"] for s in (rnd.solution if rnd else []) if "answer" in s), "Done.")
            if rnd is None:
                msg = AIMessage(content="Noted.")
            elif self.policy == "naive":
                msg = AIMessage(content="\\bbox{A}" if rnd.type == "multi_choice" else "I have looked at it.")
            elif done < len(steps):
                st = steps[done]
                msg = AIMessage(
                    content="",
                    tool_calls=[
                        {
                            "name": st["tool"],
                            "args": dict(st.get("args") or {}),
                            "id": f"call_{rnd.id}_{done}",
                            "type": "tool_call",
                        }
                    ],
                )
            else:
                msg = AIMessage(content=str(answer))
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


def feedback_message(prev: RoundResult | None, rnd: Round | None) -> str:
    """The next user message: the previous round's feedback, then the next request (if any)."""
    parts = []
    if prev is not None and prev.feedback:
        parts.append(f"Feedback on your previous answer: {prev.feedback}")
    if rnd is not None:
        parts.append(rnd.prompt())
    return "\n\n".join(parts)


@dataclass
class RoundResult:
    id: str
    type: str
    score: float = 0.0
    passed: bool = False
    answer: str = ""
    feedback: str = ""
    detail: Any = None
    error: str | None = None
    tool_calls: int = 0
    seconds: float = 0.0
    user_message: str = ""
    injected_skills: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k != "user_message"}
        d["answer"] = self.answer[-400:]
        return d


def _text(msg: Any) -> str:
    c = getattr(msg, "content", "")
    if isinstance(c, list):
        return "\n".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in c)
    return str(c or "")


def drain_learning(plugin: Any, timeout: float = 300.0) -> dict[str, Any]:
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


class ArmRunner:
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
        log: Callable[[str], Any] = print,
    ):
        self.bench = bench
        self.arm = arm
        self.work = work
        self.workspace = work / "workspace"
        self.model = model_factory()
        self.max_steps = max_steps
        self.log = log
        self.plugin = None
        self.middleware = None
        self.current: Round | None = None
        self.current_day: Day | None = None
        self._scored: dict[str, dict[str, Any]] = {}
        self._turns_seen: dict[str, int] = {}
        self.workspace.mkdir(parents=True, exist_ok=True)
        copy_overlay(bench.workspace, self.workspace)
        if arm == "plugin":
            from ..config import Settings
            from ..plugin import MetaClawPlugin

            home = work / "home"
            if skills_dir is not None:
                shutil.copytree(skills_dir, home / "skills", ignore=shutil.ignore_patterns(".metaclaw"))
            settings = Settings(home=home, **(plugin_settings or {}))
            self.plugin = MetaClawPlugin(settings).start()
            from metaclaw_langchain import MetaClawMiddleware

            self.middleware = MetaClawMiddleware(self.plugin, outcome=self._outcome)

    # The plugin's view of a round's outcome (after_agent): the checker's verdict and the feedback.
    def _outcome(self, state: Any) -> dict[str, Any] | None:
        rnd, day = self.current, self.current_day
        if rnd is None or day is None:
            return None
        msgs = list((state or {}).get("messages") or [])
        sc = self._score(rnd, day, _text(msgs[-1]) if msgs else "")
        fb = rnd.feedback_correct if sc["passed"] else rnd.feedback_incorrect
        return {"success": bool(sc["passed"]), "score": sc["score"], **({"feedback": fb} if fb else {})}

    def _score(self, rnd: Round, day: Day, answer: str) -> dict[str, Any]:
        if rnd.id not in self._scored:
            self._scored[rnd.id] = (
                score_multi_choice(rnd, answer) if rnd.type == "multi_choice" else run_check(rnd, day, self.workspace)
            )
        return self._scored[rnd.id]

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

    def _invoke(self, agent: Any, text: str, thread: str) -> tuple[Any, str | None]:
        from langchain_core.messages import HumanMessage

        cfg = {
            "configurable": {"thread_id": thread},
            "metadata": {"session_id": thread},
            "recursion_limit": 2 * self.max_steps + 3,
        }
        try:
            return agent.invoke({"messages": [HumanMessage(content=text)]}, config=cfg), None
        except Exception as e:
            return None, f"{type(e).__name__}: {str(e)[:300]}"

    def run_day(self, day: Day) -> dict[str, Any]:
        copied = copy_overlay(day.workspace, self.workspace)
        sandbox = Sandbox(self.workspace)
        agent = self._agent(sandbox)
        thread = f"{self.arm}-{day.id}"
        self.current_day = day
        results: list[RoundResult] = []
        prev: RoundResult | None = None
        for rnd in day.rounds:
            self.current = rnd
            if hasattr(self.model, "round"):
                self.model.round = rnd
            text = feedback_message(prev, rnd)
            n_calls = len(sandbox.calls)
            t0 = time.perf_counter()
            state, err = self._invoke(agent, text, thread)
            answer = ""
            if state is not None:
                msgs = state.get("messages") or []
                answer = _text(msgs[-1]) if msgs else ""
            sc = self._score(rnd, day, answer)
            res = RoundResult(
                id=rnd.id,
                type=rnd.type,
                score=float(sc["score"]),
                passed=bool(sc["passed"]),
                answer=answer,
                detail={k: v for k, v in sc.items() if k not in ("score", "passed")},
                error=err,
                tool_calls=len(sandbox.calls) - n_calls,
                seconds=round(time.perf_counter() - t0, 2),
                user_message=text,
            )
            res.feedback = rnd.feedback_correct if res.passed else rnd.feedback_incorrect
            if self.plugin is not None:
                res.injected_skills = self._last_injected(thread)
            results.append(res)
            prev = res
            self.log(
                f"  [{self.arm}] {day.id}/{rnd.id} ({rnd.type}): score {res.score:.2f}"
                + (f"  error: {err}" if err else "")
            )
        # The last round's feedback still reaches the agent, as the next user message of the day.
        if prev is not None and prev.feedback:
            self.current = None
            if hasattr(self.model, "round"):
                self.model.round = None
            self._invoke(agent, feedback_message(prev, None), thread)
        day_out: dict[str, Any] = {
            "day": day.id,
            "title": day.title,
            "files_added": copied,
            **summarise_rounds(results),
            "rounds": [r.as_dict() for r in results],
        }
        if self.plugin is not None:
            day_out["learning"] = drain_learning(self.plugin)
            st = self.plugin.status()
            day_out["skills_active"] = st["skills"]["active"]
            day_out["skills_quarantined"] = st["skills"].get("quarantined")
            day_out["skill_generation"] = st["skill_generation"]
        self._day_messages = [r.user_message for r in results]
        return day_out

    def _last_injected(self, thread: str) -> list[str]:
        try:
            self.plugin.store.flush(5)  # type: ignore[union-attr]
            sess = self.plugin.store.get_session(thread)  # type: ignore[union-attr]
            if sess and sess.turns:
                start = self._turns_seen.get(thread, 0)
                self._turns_seen[thread] = len(sess.turns)
                names: list[str] = []
                for t in sess.turns[start:]:  # this round's model calls
                    names += [n for n in t.injected_skills if n not in names]
                return names
        except Exception:
            pass
        return []

    def close(self) -> None:
        if self.plugin is not None:
            self.plugin.stop()


def summarise_rounds(results: Sequence[RoundResult]) -> dict[str, Any]:
    fc = [r for r in results if r.type == "file_check"]
    mc = [r for r in results if r.type == "multi_choice"]
    return {
        "rounds_n": len(results),
        "accuracy": round(sum(r.score for r in results) / len(results), 4) if results else None,
        "completion": round(sum(1 for r in fc if r.passed) / len(fc), 4) if fc else None,
        "file_check_n": len(fc),
        "multi_choice_n": len(mc),
        "multi_choice_accuracy": round(sum(r.score for r in mc) / len(mc), 4) if mc else None,
        "errors": sum(1 for r in results if r.error),
    }


def run(
    bench_dir: Path | str,
    *,
    model: str | None = None,
    evolver_model: str | None = None,
    judge_model: str | None = None,
    api_base: str | None = None,
    api_key: str | None = None,
    policy: str = "oracle",
    arms: Sequence[str] = ("baseline", "plugin"),
    days: Sequence[str] | None = None,
    quick: bool = False,
    max_steps: int = 12,
    skills_dir: Path | None = None,
    keep_workspace: bool = False,
    promotion: str = "auto",
    log: Callable[[str], Any] = print,
) -> dict[str, Any]:
    bench = load_bench(bench_dir)
    if days:
        unknown = set(days) - {d.id for d in bench.days}
        if unknown:
            raise BenchFormatError(f"unknown day(s): {', '.join(sorted(unknown))}")
        bench.days = [d for d in bench.days if d.id in set(days)]
    if quick:
        bench.days = bench.days[:2]
    plumbing = model is None
    result: dict[str, Any] = {
        **provenance("workday", (["--quick"] if quick else []) + ([f"--model {model}"] if model else [])),
        "plumbing_run": plumbing,
        "note": (
            "PLUMBING RUN: a scripted policy played the agent (no LLM); these numbers test the harness, "
            "they are not a score."
            if plumbing
            else f"Scored run: the agent is {model}."
        ),
        "agent": model or f"scripted:{policy}",
        "evolver_model": evolver_model,
        "judge_model": judge_model,
        "bench": {
            "path": str(bench.path),
            "name": bench.name,
            "days": len(bench.days),
            "rounds": sum(len(d.rounds) for d in bench.days),
        },
        "arms": {},
        "errors": [],
    }
    if "plugin" in arms:
        import importlib.util

        if importlib.util.find_spec("metaclaw_langchain") is None or importlib.util.find_spec("langchain") is None:
            result["errors"].append("plugin arm skipped: metaclaw_langchain / langchain is not installed")
            arms = [a for a in arms if a != "plugin"]

    def factory() -> Any:
        return litellm_model(model, api_base=api_base, api_key=api_key) if model else scripted_model(policy)

    plugin_settings: dict[str, Any] = {"mode": "skills_only", "evolution": {"promotion": promotion}}
    if evolver_model:
        plugin_settings["evolution"].update(
            model=evolver_model,
            **({"api_base": api_base} if api_base else {}),
            **({"api_key": api_key} if api_key else {}),
        )
    if judge_model:
        plugin_settings["reward"] = {
            "model": judge_model,
            **({"api_base": api_base} if api_base else {}),
            **({"api_key": api_key} if api_key else {}),
        }
    from .common import cache_dir

    tmp_root = cache_dir() / "tmp"
    tmp_root.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="workday-", dir=str(tmp_root)))
    try:
        for arm in arms:
            log(f"arm {arm}")
            runner = ArmRunner(
                bench,
                arm,
                scratch / arm,
                factory,
                max_steps=max_steps,
                plugin_settings=plugin_settings if arm == "plugin" else None,
                skills_dir=skills_dir,
                log=log,
            )
            day_results = []
            try:
                for day in bench.days:
                    day_results.append(runner.run_day(day))
            finally:
                runner.close()
            all_rounds = [r for d in day_results for r in d["rounds"]]
            fc = [r for r in all_rounds if r["type"] == "file_check"]
            result["arms"][arm] = {
                "accuracy": round(sum(r["score"] for r in all_rounds) / len(all_rounds), 4) if all_rounds else None,
                "completion": round(sum(1 for r in fc if r["passed"]) / len(fc), 4) if fc else None,
                "days": day_results,
            }
        if "baseline" in result["arms"] and "plugin" in result["arms"]:
            b, p = result["arms"]["baseline"], result["arms"]["plugin"]
            result["comparison"] = {
                "accuracy_delta": _delta(p["accuracy"], b["accuracy"]),
                "completion_delta": _delta(p["completion"], b["completion"]),
                "per_day_accuracy": [
                    {"day": x["day"], "baseline": x["accuracy"], "plugin": y["accuracy"]}
                    for x, y in zip(b["days"], p["days"])
                ],
            }
    finally:
        if keep_workspace:
            result["workspace"] = str(scratch)
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    return result


def _delta(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else round(a - b, 4)


def markdown(result: dict[str, Any]) -> str:
    lines = []
    if result.get("plumbing_run"):
        lines += [f"> **{result['note']}**", ""]
    arms = list(result.get("arms", {}))
    head = "| day | " + " | ".join(f"{a} acc | {a} compl" for a in arms) + " |"
    lines += [head, "|---|" + "---:|---:|" * len(arms)]
    days = [d["day"] for d in (result["arms"][arms[0]]["days"] if arms else [])]
    for i, day in enumerate(days):
        cells = []
        for a in arms:
            d = result["arms"][a]["days"][i]
            cells += [_pct(d["accuracy"]), _pct(d["completion"])]
        lines.append(f"| {day} | " + " | ".join(cells) + " |")
    cells = []
    for a in arms:
        cells += [f"**{_pct(result['arms'][a]['accuracy'])}**", f"**{_pct(result['arms'][a]['completion'])}**"]
    if arms:
        lines.append("| all | " + " | ".join(cells) + " |")
    for e in result.get("errors", []):
        lines.append(f"\nnote: {e}")
    return "\n".join(lines)


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.0%}"
