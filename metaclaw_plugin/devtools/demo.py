"""``metaclaw-plugin demo``: the whole fast loop, offline, in a temporary home, in a couple of minutes.

A real LiteLLM proxy process runs the plugin (``litellm_settings.callbacks: ["metaclaw_litellm.callback"]``) in
front of a local scripted endpoint (:mod:`.upstream`) that plays the agent's model, the evolver, the judge, the
model reviewer of new skills and the memory extractor, and says in every reply that it is scripted. A short workday
goes through the proxy as a client would (``X-Session-Id``, ``X-Session-Done``, the OpenAI ``user``): a good round,
a fact told in one session that comes back in the user's next one, a failed round with a correction, then similar
rounds. Every stage is checked against what the plugin wrote (skills folder, database) and what the upstream
received, never against the script, and the run fails when a stage did not do what it claims.

The stages are a list (:data:`STAGES`). The last, ``train``, is the slow loop's (:mod:`.demo_train`): a scripted
idle window opens, the real scheduler runs a local LoRA step on a tiny model built in-process, and the served
policy hot-swaps to the new LoRA weights. Without the ``train-local`` extra it is *skipped*, says why, and the run's
result (and exit code) is that of the other stages.

With ``model``/``evolver_model``/``judge_model`` (any LiteLLM model strings, keys from the usual environment
variables) the same day runs against real endpoints; a role left unset stays scripted.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import sqlite3
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..infra.logfile import log_file
from ..requestpath.sessions import USER_MARK, given_of
from ..skillbank.bank import bundled_skills_dir
from ..skillbank.files import SkillStore, atomic_write
from ..store import connect
from ..training.buffer import read_stats
from .demo_train import SlowLoopFailed, missing_extra, run_slow_loop
from .proxyrun import ModelSpec, ProxyProcess, proxy_config, start_proxy, write_config
from .upstream import Upstream

AGENT = "demo-agent"  # the model name clients send to the proxy
SCRIPTED = "(scripted)"  # every scripted reply starts with this
SKILL = {
    "action": "create",
    "name": "detect-csv-delimiter",
    "description": "When parsing or splitting CSV exports, detect the delimiter and quoting before splitting rows.",
    "body": "# Detect the CSV delimiter\n\n1. Sniff a sample with csv.Sniffer.\n2. Never split rows on commas by hand.\n"
    "3. Tell the user which delimiter you found.",
    "category": "data",
}
FAILED_TASK = "parse the csv export orders.csv and sum the totals"
CORRECTION = "no, that's wrong: the file uses ';' as delimiter and has quoted fields"
SIMILAR = ["split the csv export invoices-{n}.csv by its delimiter and count the rows"]
WRONG = f"{SCRIPTED} I split each line on ',' and summed column 3."
PROBE = "what is the capital of France?"  # the good round's question: no skill of the story matches it
# The memory stage: a fact stated in one session, needed in a later one (and by the same user only).
FACT = "remember that the metrics database moved to pg-metrics-3"
FACT_VALUE = "pg-metrics-3"
RECALL = "which host do I connect to for the metrics database?"
RECALL_COLLEAGUE = "I am new on the team: which host do I connect to for the metrics database?"
USER, COLLEAGUE = "demo-user", "demo-colleague"
RIGHT = f"{SCRIPTED} Sniffed the delimiter first: it is ';' with quoted fields, so I parsed with csv and summed."
# A round the agent gets wrong for a reason no skill covers: whatever arms the trial drew, the day's query samples
# then carry different rewards, so the slow loop's step has a signal (a step without one is skipped, not taken).
MISS = "which planet is the largest in the solar system?"
MISS_ANSWER = f"{SCRIPTED} Saturn."


class StageFailed(RuntimeError):
    """A stage did not do what it claims (checked against the store)."""


class StageSkipped(RuntimeError):
    """A stage cannot run here (an optional extra is missing); the message says why."""


class ScriptedEndpoint:
    """The local endpoint's script: the agent's model, the evolver, the judge, the skill reviewer and the memory
    extractor. It recognises each role by its system prompt, as a shared model server would see them."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {"agent": 0, "evolver": 0, "judge": 0, "reviewer": 0, "memory": 0}

    def __call__(self, body: dict[str, Any]) -> str:
        msgs = body.get("messages") or [{}]
        system = str(msgs[0].get("content", "")) if msgs[0].get("role") == "system" else ""
        text = json.dumps(msgs)
        if "skill engineer" in system:
            self.calls["evolver"] += 1
            return json.dumps({"skills": [SKILL], "note": f"{SCRIPTED} evolver"})
        if "security reviewer" in system:
            self.calls["reviewer"] += 1
            return json.dumps({"verdict": "safe", "reasons": [f"{SCRIPTED} reviewer"]})
        if "long-term memory about one user" in system:
            self.calls["memory"] += 1
            return _scripted_memory(msgs[-1].get("content"))
        if "strict reviewer" in system:
            self.calls["judge"] += 1
            if "Sniffed the delimiter" in text:
                return f"{SCRIPTED} The answer detected the delimiter.\nScore: 1"
            if "split each line on ','" in text:
                return f"{SCRIPTED} The answer split on the wrong delimiter.\nScore: -1"
            if MISS_ANSWER in text:
                return f"{SCRIPTED} Jupiter is the largest planet, not Saturn.\nScore: -1"
            return f"{SCRIPTED} The answer is right.\nScore: 1"
        self.calls["agent"] += 1
        last = str(msgs[-1].get("content", "")).lower()
        if "csv" in last or "delimiter" in last:
            carried = any(
                "detect-csv-delimiter" in str(m.get("content", "")) for m in msgs if m.get("role") == "system"
            )
            return RIGHT if carried else WRONG
        if "metrics database" in last:
            told = any(FACT_VALUE in str(m.get("content", "")) for m in msgs if m.get("role") == "system")
            return f"{SCRIPTED} Connect to {FACT_VALUE}." if told else f"{SCRIPTED} Which metrics database do you use?"
        if "planet" in last:
            return MISS_ANSWER
        return f"{SCRIPTED} Paris."


def _scripted_memory(content: Any) -> str:
    """The memory extractor's scripted answer (its JSON schema): the demo's fact, when a new turn states it."""
    try:
        turns = json.loads(str(content)).get("new_turns", [])
    except (ValueError, AttributeError):
        turns = []
    ops = [
        {"op": "add", "kind": "fact", "subject": "metrics database", "text": t["user"], "standing": False}
        for t in turns
        if isinstance(t, dict) and FACT_VALUE in str(t.get("user", ""))
    ]
    return json.dumps({"operations": ops, "summary": None, "note": f"{SCRIPTED} memory extractor"})


PROXY_START_S = 120.0  # a proxy starting on a loaded machine: not a stage that waits for learning


@dataclass
class DemoOptions:
    model: str | None = None  # the agent's model (any LiteLLM model); None = scripted
    evolver_model: str | None = None
    judge_model: str | None = None
    keep: bool = False
    home: Path | None = None  # default: a new temporary folder
    timeout: float = 120.0  # per waiting stage


@dataclass
class Stage:
    key: str
    title: str
    run: Callable[[Demo], str]  # returns what it verified, one line; raises StageFailed


@dataclass
class StageResult:
    key: str
    title: str
    ok: bool
    detail: str
    seconds: float
    skipped: bool = False


@dataclass
class Demo:
    """One run: the home, the endpoint, the proxy, and what the stages found."""

    options: DemoOptions
    home: Path = field(init=False)
    upstream: Upstream | None = None
    script: ScriptedEndpoint = field(default_factory=ScriptedEndpoint)
    proxy: ProxyProcess | None = None
    facts: dict[str, Any] = field(default_factory=dict)
    results: list[StageResult] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        if self.options.home is not None:
            self.home = Path(self.options.home).expanduser()
            self.home.mkdir(parents=True, exist_ok=True, mode=0o700)
        else:
            self.home = Path(tempfile.mkdtemp(prefix="metaclaw-demo-"))
        os.chmod(self.home, 0o700)

    # Paths ---------------------------------------------------------------------------------------
    @property
    def db(self) -> Path:
        return self.home / "metaclaw.db"

    @property
    def skills_dir(self) -> Path:
        return self.home / "skills"

    @property
    def scripted_roles(self) -> list[str]:
        o = self.options
        return [r for r, m in (("agent", o.model), ("evolver", o.evolver_model), ("judge", o.judge_model)) if not m]

    # Store reads (what the plugin wrote, not what the script did) ---------------------------------
    def query(self, sql: str, args: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        if not self.db.exists():
            return []
        conn = connect(self.db, readonly=True)
        conn.row_factory = sqlite3.Row
        try:
            return conn.execute(sql, args).fetchall()
        except sqlite3.OperationalError:
            return []  # a table the plugin has not created yet
        finally:
            conn.close()

    def skills(self) -> dict[str, Any]:
        return SkillStore(self.skills_dir).load().skills

    def evolved(self) -> dict[str, Any]:
        return {n: s for n, s in self.skills().items() if s.origin == "evolved"}

    def wait(self, what: str, cond: Callable[[], Any], timeout: float | None = None) -> Any:
        deadline = time.monotonic() + (timeout or self.options.timeout)
        while time.monotonic() < deadline:
            got = cond()
            if got:
                return got
            if self.proxy is not None and not self.proxy.alive():
                raise StageFailed(f"the LiteLLM proxy exited while waiting for {what}:\n{self.proxy.log_tail(2000)}")
            time.sleep(0.25)
        raise StageFailed(f"timed out waiting for {what} (see {log_file(self.home)} and {self.home / 'proxy.log'})")

    # Talking to the proxy as a client does -------------------------------------------------------
    def chat(self, session: str, messages: list[dict[str, Any]], *, done: bool = False, user: str | None = None) -> str:
        assert self.proxy is not None
        headers = self.proxy.headers(**{"Content-Type": "application/json", "X-Session-Id": session})
        if done:
            headers["X-Session-Done"] = "true"
        req = urllib.request.Request(
            self.proxy.url + "/chat/completions",
            data=json.dumps({"model": AGENT, "messages": messages, **({"user": user} if user else {})}).encode(),
            headers=headers,
        )
        with urllib.request.urlopen(req, timeout=120) as r:
            body = json.loads(r.read())
        return str(body["choices"][0]["message"].get("content") or "")

    def session_turns(self, session: str) -> list[sqlite3.Row]:
        """The turns of a session as the demo named it: its own, or a user's part of it (``<id>~u<tag>``)."""
        return self.query(
            "SELECT * FROM turns WHERE session_id = ? OR (length(session_id) = ? AND substr(session_id, 1, ?) = ?) "
            "ORDER BY seq",
            (session, len(session) + 18, len(session) + 2, session + USER_MARK),
        )

    def close(self) -> None:
        if self.proxy is not None:
            self.proxy.stop()
        if self.upstream is not None:
            self.upstream.stop()
        if not self.options.keep and self.options.home is None:
            shutil.rmtree(self.home, ignore_errors=True)


# The stages -------------------------------------------------------------------------------------
def stage_setup(d: Demo) -> str:
    store = SkillStore(d.skills_dir)
    store.seed_from(bundled_skills_dir(), actor="demo")
    d.facts["skills_before"] = _count_status(d.skills())
    d.facts["generation_before"] = store.generation
    if d.scripted_roles:
        d.upstream = Upstream(model="scripted", script=d.script).start()
    o = d.options
    up = d.upstream.url if d.upstream else None

    def role(model: str | None, scripted_name: str) -> dict[str, Any]:
        if model:
            return {"model": model}
        return {"model": f"openai/{scripted_name}", "api_base": up, "api_key": "scripted-no-key"}

    cfg = {
        # Embedded defaults, except: the endpoints; keyword retrieval and lexical dedup (no embedding model to
        # load on a 2-core machine); 75% of matching turns carry a skill on trial (6 rounds: both arms, usually).
        "retrieval": {"mode": "keyword"},
        # min_failures 2: the failed round (two failed turns) evolves; a control-arm round that fails once does not
        # evolve again, so the story stays one skill and one generation bump.
        "evolution": {
            **role(o.evolver_model, "scripted-evolver"),
            "dedup_mode": "lexical",
            "shadow_fraction": 0.75,
            "min_failures": 2,
        },
        "reward": {**role(o.judge_model, "scripted-judge"), "review_wait": 30.0},
    }
    atomic_write(
        d.home / "config.yaml",
        ("# written by `metaclaw-plugin demo`\n" + yaml.safe_dump(cfg, sort_keys=False)).encode(),
        mode=0o600,
    )
    agent = ModelSpec(o.model, name=AGENT) if o.model else ModelSpec("openai/scripted-agent", AGENT, up, "x")
    pcfg = write_config(d.home / "proxy.yaml", proxy_config([agent]))
    env = {k: v for k, v in os.environ.items() if not k.startswith("METACLAW_")}  # the demo's config only
    env["METACLAW_HOME"] = str(d.home)
    d.proxy = start_proxy(
        pcfg, env=env, log_path=d.home / "proxy.log", cwd=d.home, timeout=max(d.options.timeout, PROXY_START_S)
    )
    where = f"scripted endpoint {up} ({', '.join(d.scripted_roles)})" if d.scripted_roles else "real endpoints"
    return f"LiteLLM proxy pid {d.proxy.proc.pid} at {d.proxy.base_url}; {where}"


def stage_good_round(d: Demo) -> str:
    answer = d.chat("demo-good", [{"role": "user", "content": "what is the capital of France?"}], done=True)
    rows = d.wait("the good round on disk", lambda: d.session_turns("demo-good"))
    return f"1 turn recorded (generation {rows[0]['generation']}): {answer[:60]!r}"


def stage_memory(d: Demo) -> str:
    """A fact told in one session comes back in the next session of the same user, and not to another user."""
    if "agent" not in d.scripted_roles or d.upstream is None:
        raise StageSkipped("skipped: the agent is a real model, so what it received is not observable here")
    d.chat("demo-memory-told", [{"role": "user", "content": FACT}], done=True, user=USER)
    rows = d.wait(
        "the fact to be remembered",
        lambda: d.query(
            "SELECT id, kind, text, source FROM memories WHERE user_id = ? AND status = 'active' AND text LIKE ?",
            (USER, f"%{FACT_VALUE}%"),
        ),
    )
    mem = rows[0]
    source = json.loads(mem["source"] or "{}")
    if given_of(str(source.get("session_id"))) != "demo-memory-told":
        raise StageFailed(f"the memory {mem['id']} does not come from the session that told it: {source}")

    # The proxy's view follows the memory tables within about a second: later sessions are asked until one is
    # served from it (the first, usually), as a client coming back later would be.
    deadline = time.monotonic() + d.options.timeout
    tries = 0
    while True:
        tries += 1
        sid = f"demo-memory-later-{tries}"
        answer = d.chat(sid, [{"role": "user", "content": RECALL}], done=True, user=USER)
        seen = _agent_request(d, RECALL)
        if "<metaclaw-memory>" in seen and FACT_VALUE in seen:
            break
        if time.monotonic() > deadline:
            raise StageFailed(f"no later session's request carried the memory {mem['id']} ({tries} sessions asked)")
        time.sleep(0.2)
    d.chat("demo-memory-colleague", [{"role": "user", "content": RECALL_COLLEAGUE}], done=True, user=COLLEAGUE)
    other = _agent_request(d, RECALL_COLLEAGUE)
    if not other and not any(_last_user(b) == RECALL_COLLEAGUE for b in list(d.upstream.requests)):
        raise StageFailed(f"the upstream never received {COLLEAGUE}'s request")
    if FACT_VALUE in other or "<metaclaw-memory>" in other:
        raise StageFailed(f"{COLLEAGUE}'s request carried {USER}'s memory")
    turns = d.wait("the later session on disk", lambda: d.session_turns(sid))
    if turns[0]["user"] != USER:
        raise StageFailed(f"the later turn was recorded for user {turns[0]['user']!r}, not {USER!r}")
    d.facts["memory"] = {"id": mem["id"], "kind": mem["kind"], "extractor": source.get("extractor"), "tries": tries}
    return (
        f"{USER} said {FACT!r}; memory {mem['id']} ({mem['kind']}, {source.get('extractor')} extractor) came back in "
        f"session {sid}: {answer[:50]!r}; {COLLEAGUE} asking the same got none"
    )


def _last_user(body: dict[str, Any]) -> str | None:
    msgs = body.get("messages") or []
    return msgs[-1].get("content") if msgs and msgs[-1].get("role") == "user" else None


def _agent_request(d: Demo, text: str) -> str:
    """The system text of the latest agent request whose last message is ``text``, as the upstream received it
    ("" when there is none). The client asks one at a time, so the latest is the one just answered."""
    assert d.upstream is not None
    found = [b["messages"] for b in list(d.upstream.requests) if _last_user(b) == text]
    return "\n".join(str(m.get("content", "")) for m in found[-1] if m.get("role") == "system") if found else ""


def stage_failed_round(d: Demo) -> str:
    first = [{"role": "user", "content": FAILED_TASK}]
    a1 = d.chat("demo-failed", first)
    second = [*first, {"role": "assistant", "content": a1}, {"role": "user", "content": CORRECTION}]
    d.chat("demo-failed", second, done=True)
    rows = d.wait(
        "the failed round on disk", lambda: len(d.session_turns("demo-failed")) >= 2 and d.session_turns("demo-failed")
    )
    ended = d.query("SELECT ended_at FROM sessions WHERE session_id = 'demo-failed' AND ended_at IS NOT NULL")
    corr = d.wait(
        "the correction to be scored",
        lambda: d.query("SELECT score FROM rewards WHERE source = 'correction' AND turn_id = ?", (rows[0]["turn_id"],)),
    )
    if not ended:
        raise StageFailed("the session did not end with X-Session-Done")
    return f"{len(rows)} turns; the user's correction scored the first answer {corr[0]['score']:+g}; session ended"


def stage_evolve(d: Demo) -> str:
    found = d.wait("an evolved skill", lambda: d.evolved())
    name, skill = next(iter(found.items()))
    hist = [e for e in SkillStore(d.skills_dir).history(name) if e.get("event") == "add"]
    if not hist:
        raise StageFailed(f"{name} has no history entry")
    screening = (hist[-1].get("screening") or {}).get("verdict")
    review = (hist[-1].get("review") or {}).get("verdict")
    trial = skill.status == "quarantined" and skill.extra_metadata.get("promotion") == "shadow"
    if screening != "clean" or not trial:
        raise StageFailed(f"{name}: screening {screening}, status {skill.status}, promotion {skill.extra_metadata}")
    gen = _generation(d)
    if gen <= d.facts["generation_before"]:
        raise StageFailed(f"the skill generation did not move ({gen})")
    d.facts["evolved"] = name
    return f"{name} from session {skill.source_sessions}: screening {screening}, model review {review}, on trial; generation {d.facts['generation_before']} -> {gen}"


def proxy_serves(d: Demo, generation: int) -> int:
    """Wait until the proxy's in-memory skill snapshot is at ``generation`` (so it holds the evolved skill), or the
    first similar round may be served from the old one and miss the trial (seen on a loaded 2-core machine). The
    proof: a probe round that nothing on trial matches, recorded with the generation of the snapshot that served
    it. Probes follow one another until one shows it (the first, usually). Returns how many were sent."""
    deadline = time.monotonic() + d.options.timeout
    n = 0
    while True:
        n += 1
        sid = f"demo-probe-{n}"
        d.chat(sid, [{"role": "user", "content": PROBE}], done=True)
        served = d.wait(f"probe round {n} on disk", functools.partial(d.session_turns, sid))[0]["generation"]
        if served >= generation:
            return n
        if time.monotonic() > deadline:
            raise StageFailed(f"the proxy still serves skill generation {served}, not {generation}")
        time.sleep(0.1)


def stage_similar_rounds(d: Demo) -> str:
    name = d.facts["evolved"]
    gen = _generation(d)
    d.facts["probes"] = probes = proxy_serves(d, gen)
    carried = 0
    sessions = []
    for n in range(1, 7):
        sid = f"demo-similar-{n}"
        sessions.append(sid)
        d.chat(sid, [{"role": "user", "content": SIMILAR[0].format(n=n)}], done=True)
    rows = d.wait(
        "the similar rounds on disk",
        lambda: all(d.session_turns(s) for s in sessions) and [r for s in sessions for r in d.session_turns(s)],
    )
    carried = sum(1 for r in rows if name in json.loads(r["injected"] or "[]"))
    if not carried:
        raise StageFailed(f"none of {len(rows)} similar rounds carried {name}")
    d.facts["similar"] = sessions
    d.chat("demo-miss", [{"role": "user", "content": MISS}], done=True)
    d.wait("the off-story round on disk", functools.partial(d.session_turns, "demo-miss"))
    control = f" (the other {len(rows) - carried}: the trial's control arm)" if carried < len(rows) else ""
    served = f"; the proxy served generation {gen} from probe round {probes} on"
    return (
        f"{carried} of {len(rows)} similar rounds carried {name}{control}{served}; one off-story round answered "
        "wrong (the slow loop's contrast)"
    )


def stage_judged(d: Demo) -> str:
    turns = [r["turn_id"] for r in d.query("SELECT turn_id FROM turns WHERE kind = 'main'")]

    def judged() -> list[sqlite3.Row] | None:
        rows = d.query("SELECT turn_id, source, score FROM rewards")
        # a turn the user corrected is scored by the correction (no judge call needed); the rest by the judge
        return rows if {r["turn_id"] for r in rows} >= set(turns) else None

    rows = d.wait("every turn to be scored", judged)
    judge = [r["score"] for r in rows if r["source"] == "judge"]
    if not judge:
        raise StageFailed("no turn was scored by the judge")
    mean = sum(judge) / len(judge)
    d.facts["rewards"] = {
        r["source"]: r["n"] for r in d.query("SELECT source, COUNT(*) AS n FROM rewards GROUP BY source")
    }
    similar = len(d.facts["similar"])

    def evidence() -> list[sqlite3.Row] | None:
        rows = d.query(
            "SELECT arm, COUNT(*) AS n, AVG(score) AS mean FROM fl_shadow WHERE score IS NOT NULL GROUP BY arm"
        )
        return rows if sum(r["n"] for r in rows) >= similar else None

    arms = d.wait("the trial's evidence from every similar round", evidence)
    d.facts["trial"] = {r["arm"]: {"turns": r["n"], "mean_reward": round(r["mean"], 2)} for r in arms}
    return f"{len(turns)} turns scored ({len(judge)} by the judge, mean {mean:+.2f}); trial: " + ", ".join(
        f"{a} {v['turns']} turns mean {v['mean_reward']:+.2f}" for a, v in d.facts["trial"].items()
    )


def _sampled(d: Demo, turn_ids: list[str]) -> bool:
    """Whether each of ``turn_ids`` has a sample in the buffer (in any state)."""
    marks = ",".join("?" * len(turn_ids))
    return d.query(f"SELECT COUNT(*) AS n FROM buffer_samples WHERE turn_id IN ({marks})", tuple(turn_ids))[0][
        "n"
    ] == len(turn_ids)


def stage_samples(d: Demo) -> str:
    gen = _generation(d)
    # Every scored round since the bump, the off-story one with its -1 included: the step learns from the contrast,
    # and a batch drawn before the last round's sample is queued would hold equal rewards and teach nothing.
    later = [r["turn_id"] for s in [*d.facts["similar"], "demo-miss"] for r in d.session_turns(s)]
    d.wait("a sample for every round since the bump", lambda: _sampled(d, later))
    st = d.wait(
        "query samples of the current generation",
        lambda: (s := read_stats(d.db)) and s["generation"] == gen and s["queued"] and s,
    )
    if st["support"] < 1:
        raise StageFailed("the failed turns were not kept as the support set")
    if st["dropped_stale"] < 1:
        raise StageFailed("the good round's sample (an older generation) was not dropped at the bump")
    d.facts["buffer"] = st
    return (
        f"{st['queued']} query samples at generation {st['generation']}, {st['support']} support turns (never "
        f"trained on), {st['dropped_stale']} stale sample(s) dropped at the generation bump"
    )


def stage_train(d: Demo) -> str:
    missing = missing_extra()
    if missing:
        d.facts["training"] = {"skipped": missing}
        raise StageSkipped(f"skipped: {missing}; the slow loop needs it, the fast loop above does not")
    try:
        r = run_slow_loop(d.home, timeout=d.options.timeout)
    except SlowLoopFailed as e:
        raise StageFailed(str(e)) from None
    d.facts["training"] = r.as_dict()
    return (
        f"idle window -> step {r.step} on {r.samples_used} samples ({r.samples_dropped} dropped), loss {r.loss:.4f}, "
        f"{r.step_seconds}s; the served policy swapped {r.served_before} -> step {r.answer_step} ({r.adapter})"
    )


STAGES: list[Stage] = [
    Stage("setup", "a temporary home, a scripted endpoint and a real LiteLLM proxy with the plugin", stage_setup),
    Stage("good round", "a round that goes well", stage_good_round),
    Stage("memory", "a fact told in one session comes back in the next", stage_memory),
    Stage("failed round", "a round that fails, and the user's correction", stage_failed_round),
    Stage("evolve", "a skill is evolved from it, screened and put on trial", stage_evolve),
    Stage("similar rounds", "similar rounds carry the skill", stage_similar_rounds),
    Stage("judged", "every turn is judged; the trial gathers evidence", stage_judged),
    Stage("samples", "query samples accrue at the current generation", stage_samples),
    Stage("train", "an idle window opens, a local LoRA step runs, the served policy hot-swaps", stage_train),
]


def run_demo(options: DemoOptions, on_stage: Callable[[str, StageResult | None], None] | None = None) -> Demo:
    """Run every stage in order, stopping at the first that fails. ``on_stage(key, None)`` before a stage,
    ``on_stage(key, result)`` after it."""
    d = Demo(options)
    try:
        for st in STAGES:
            if on_stage:
                on_stage(st.key, None)
            t0 = time.monotonic()
            try:
                res = StageResult(st.key, st.title, True, st.run(d), time.monotonic() - t0)
            except StageSkipped as e:
                res = StageResult(st.key, st.title, True, str(e), time.monotonic() - t0, skipped=True)
            except StageFailed as e:
                res = StageResult(st.key, st.title, False, str(e), time.monotonic() - t0)
            except Exception as e:  # a crash is a failed stage too, with what happened
                res = StageResult(st.key, st.title, False, f"{type(e).__name__}: {e}", time.monotonic() - t0)
            d.results.append(res)
            if on_stage:
                on_stage(st.key, res)
            if not res.ok:
                break
        d.facts["skills_after"] = _count_status(d.skills())
        d.facts["generation_after"] = _generation(d)
        d.facts["seconds"] = round(time.monotonic() - d.started, 1)
    finally:
        d.close()
    return d


def summary(d: Demo) -> dict[str, Any]:
    ok = len(d.results) == len(STAGES) and all(r.ok for r in d.results)
    kept = d.options.keep or d.options.home is not None
    env = f"METACLAW_HOME={d.home}"
    return {
        "ok": ok,  # a skipped stage (a missing extra) does not fail the run; "skipped" lists it
        "skipped": [r.key for r in d.results if r.skipped],
        "seconds": d.facts.get("seconds"),
        "scripted": d.scripted_roles,
        "stages": [r.__dict__ for r in d.results],
        "skills_before": d.facts.get("skills_before"),
        "skills_after": d.facts.get("skills_after"),
        "evolved": d.facts.get("evolved"),
        "generation": [d.facts.get("generation_before"), d.facts.get("generation_after")],
        "rewards": d.facts.get("rewards"),
        "trial": d.facts.get("trial"),
        "probes": d.facts.get("probes"),
        "memory": d.facts.get("memory"),  # rounds sent until the proxy served the evolved skill's generation
        "samples": d.facts.get("buffer"),
        "training": d.facts.get("training"),
        "files": {
            "home": str(d.home) + ("" if kept else " (removed; --keep keeps it)"),
            "skills": str(d.skills_dir),
            "database": str(d.db),
            "log": str(log_file(d.home)),
            "proxy config": str(d.home / "proxy.yaml"),
            "proxy log": str(d.home / "proxy.log"),
        },
        "next": (
            f"{env} metaclaw-plugin serve   (the dashboard; then {env} metaclaw-plugin skills list)"
            if kept
            else "metaclaw-plugin demo --keep, then serve its home for the dashboard; or `metaclaw-plugin init` "
            "and point your host at it: it learns with the host's own model"
        ),
    }


def _count_status(skills: dict[str, Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for s in skills.values():
        key = "trial" if s.status == "quarantined" and s.extra_metadata.get("promotion") == "shadow" else s.status
        out[key] = out.get(key, 0) + 1
    return out


def _generation(d: Demo) -> int:
    return SkillStore(d.skills_dir).generation
