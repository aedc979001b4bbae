"""``bench learning``: does the served model follow its user's rules more often after the slow loop has run on
its own traffic, on requests it has not seen?

A multi-day run of the whole loop on a pretrained model (default ``smollm2``, the packaged SmolLM2-135M-Instruct,
on CPU). Each day, per task family, the user opens a conversation by stating their rule once (e.g. "put the final
answer in \\boxed{}"); every request of the day is a new turn of that conversation, which the host sends as the
opening exchange and the request (the turns in between trimmed, as hosts trim context). The served policy
(``metaclaw/policy``) answers each one; the answer's success is the family's checker (``learning_checks``).

Everything else is the plugin's own path:

* **rewards**: the same checker, registered as a verifier command (``reward.verifiers``), scores each captured
  turn; the session review turns scored turns into query samples;
* **samples**: the served policy's token records (its own ids and behaviour logprobs);
* **training**: the real scheduler (:class:`~metaclaw_plugin.scheduling.omls.Omls`) opens an idle window after
  the day (only the idle signal is scripted, as in the demo) and runs the plugin's own trainer
  (``scheduling.attach.scheduler_trainer``), which publishes;
* **weights**: the served policy hot-swaps to what the trainer published, so day *n+1* (new requests of the same
  families, held apart by seed) is answered by the new LoRA weights. Nothing here calls the trainer.

Arms: ``base`` (no learning), ``skills`` (the fast loop, with a *scripted* evolver that turns a failed turn's
stated rule into a skill: labelled, it is not a model), ``rl`` (the slow loop) and ``skills+rl``.
"""

from __future__ import annotations

import itertools
import math
import os
import random
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from metaclaw_plugin.memory.dates import MONTHS

from . import learning_checks
from .common import provenance, rnd

ARMS = ("base", "skills", "rl", "skills+rl")
EVOLVER_NOTE = (
    "the skills arms' evolver is scripted (not a model): from a failed turn it writes one skill whose text is "
    "the rule the user stated at the start of that conversation"
)


# Task families ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Family:
    name: str
    rule: str  # what the user says once, at the start of the conversation
    ask: Callable[[random.Random], str]  # a new request of the family

    def check(self, text: str) -> bool:
        return learning_checks.CHECKS[self.name](text)


_TOPICS = ["budget", "meeting notes", "invoice", "travel plan", "report", "contract", "photos", "slides"]
# 8 questions about 32 countries: 256 requests, so four days of 48 never repeat one
_QUESTIONS = [
    "What is the capital of {c}?",
    "Which continent is {c} in?",
    "What language is spoken in {c}?",
    "What currency does {c} use?",
    "What is the largest city in {c}?",
    "What is {c} famous for?",
    "Which countries border {c}?",
    "What is a traditional dish from {c}?",
]
_COUNTRIES = [
    "France",
    "Japan",
    "Brazil",
    "Kenya",
    "Canada",
    "Italy",
    "Egypt",
    "Peru",
    "Norway",
    "India",
    "Mexico",
    "Spain",
    "Germany",
    "Chile",
    "Vietnam",
    "Morocco",
    "Greece",
    "Sweden",
    "Turkey",
    "Argentina",
    "Ghana",
    "Poland",
    "Thailand",
    "Portugal",
    "Australia",
    "Nigeria",
    "Ireland",
    "Colombia",
    "Indonesia",
    "Finland",
    "Austria",
    "Cuba",
]


def _arith(r: random.Random) -> str:
    a, b = r.randint(2, 99), r.randint(2, 99)
    return r.choice(
        [
            f"What is {a} plus {b}?",
            f"What is {a} times {r.randint(2, 9)}?",
            f"I had {a} apples and bought {b} more. How many apples do I have?",
            f"What is {max(a, b)} minus {min(a, b)}?",
        ]
    )


def _when(r: random.Random) -> str:
    m, d, h = r.choice(MONTHS), r.randint(1, 28), r.randint(8, 17)
    return r.choice(
        [
            f"Schedule a call with Anna on {m} {d} at {h}:00 Berlin time. When is it?",
            f"When does the train leave? It leaves on {m} {d}, 2025 at {h}:30 in Paris.",
            f"Book the dentist for {m} {d} at {h}:15 London time and tell me the date.",
        ]
    )


def _file(r: random.Random) -> str:
    m, d, t = r.choice(MONTHS), r.randint(1, 28), r.choice(_TOPICS)
    return r.choice(
        [
            f"Suggest a file name for my {t} from {m} {d}, 2024.",
            f"How should I name the file with the {t} of {m} {d}, 2025?",
        ]
    )


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family("boxed", "From now on, always put your final answer in \\boxed{}, like \\boxed{42}.", _arith),
        Family(
            "json",
            'Please always reply with only a JSON object like {"answer": "..."} and nothing else.',
            lambda r: r.choice(_QUESTIONS).format(c=r.choice(_COUNTRIES)),
        ),
        Family(
            "iso_date",
            "Whenever you write a date, use ISO 8601 with the time and the UTC offset, like 2024-03-01T09:00:00+01:00.",
            _when,
        ),
        Family(
            "file_name",
            "Name every file as YYYY-MM-DD_topic.ext in lowercase, for example 2024-03-01_budget.xlsx.",
            _file,
        ),
        Family(
            "short",
            "Keep your answers short, please: one sentence of at most 12 words.",
            lambda r: r.choice(_QUESTIONS).format(c=r.choice(_COUNTRIES)),
        ),
        Family(
            "french",
            "Je préfère que tu me répondes toujours en français, s'il te plaît.",
            lambda r: r.choice(_QUESTIONS).format(c=r.choice(_COUNTRIES)),
        ),
    )
}
ACK = "Understood."  # the assistant's reply to the rule, in the conversation's opening exchange


def requests_for(day: int, seed: int, families: list[str], per_family: int) -> list[tuple[str, str]]:
    """Day ``day``'s requests, ``per_family`` of each family: the same for every arm, new each day (its own
    seed), and never a repeat of an earlier day's request."""
    seen: set[str] = set()
    for earlier in range(1, day):
        seen.update(q for _, q in _draw(earlier, seed, families, per_family, set()))
    return _draw(day, seed, families, per_family, seen)


def _draw(day: int, seed: int, families: list[str], per_family: int, seen: set[str]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for name in families:
        r = random.Random(f"bench-learning:{seed}:{day}:{name}")
        got = 0
        for _ in range(per_family * 200):
            q = FAMILIES[name].ask(r)
            if q not in seen:
                seen.add(q)
                out.append((name, q))
                got += 1
                if got == per_family:
                    break
    return out


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a rate k/n (sound at 0 and 1, unlike the normal one)."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (max(0.0, mid - half), min(1.0, mid + half))


# Options ------------------------------------------------------------------------------------------------------
@dataclass
class Options:
    # SmolLM2 follows each of these now and then, so rl has a signal (docs/bench-learning.md, "Families")
    families: list[str] = field(default_factory=lambda: ["short", "french", "file_name"])
    arms: list[str] = field(default_factory=lambda: list(ARMS))
    days: int = 4
    per_family: int = 16  # requests per family per day
    steps_per_day: int = 2  # the day's samples are split into this many batches (one optimiser step each)
    seed: int = 0
    base_model: str = "smollm2"
    device: str = "cpu"
    max_tokens: int = 32  # per answer: the rules are about form, short answers show it
    temperature: float = 1.0  # the policy samples (a greedy policy gives every answer to a prompt one reward)
    learning_rate: float = 2e-3
    lora_rank: int = 16
    advantage: str = "task"  # groups by task family: see docs/bench-learning.md
    kl_coef: float = 0.01
    threads: int = 1  # torch's CPU threads: on a shared machine more threads spin against each other (an answer
    # took 67 s with torch's default 2 threads under a load of 9 on 2 cores, 5 s with one)
    rule_days: int | None = None  # the rule opens the conversations of the first N days only (None: every day)
    jobs: int = 1  # arms run at once, each in a process of its own (its own model copies, freed when it ends)
    training: dict[str, Any] = field(default_factory=dict)  # any other training.* setting

    def check(self) -> None:
        bad = [f for f in self.families if f not in FAMILIES]
        if bad:
            raise ValueError(f"unknown task families {bad}; known: {sorted(FAMILIES)}")
        bad = [a for a in self.arms if a not in ARMS]
        if bad:
            raise ValueError(f"unknown arms {bad}; known: {list(ARMS)}")
        if self.days < 2 or self.per_family < 2 or self.steps_per_day < 1:
            raise ValueError("days and per_family must be at least 2, steps_per_day at least 1")
        if self.rule_days is not None and self.rule_days < 1:
            raise ValueError("rule_days must be at least 1 (the rule is stated on day 1)")

    @property
    def batch_size(self) -> int:
        return max(2, len(self.families) * self.per_family // self.steps_per_day)


def arm_settings(
    arm: str, opts: Options, upstream_url: str | None, verifiers: dict[str, list[str]] | None = None
) -> dict[str, Any]:
    """The plugin settings of one arm: verifier rewards everywhere (``verifiers``, else each family's
    ``learning_checks`` command); the trainer for the rl arms (the scheduler's own signals off: the bench opens the
    window); the scripted evolver for the skills arms."""
    from .scripted_evolver import scripted_evolution

    check = Path(learning_checks.__file__).resolve()
    if verifiers is None:
        verifiers = {f: [sys.executable, "-I", str(check), f] for f in opts.families}
    out: dict[str, Any] = {
        "mode": "auto" if "rl" in arm else "skills_only",
        "scheduler": {"sleep_enabled": False, "idle_sources": [], "calendar_enabled": False},
        "reward": {
            "enabled": True,
            "verifiers": verifiers,
        },
        "serving": {"max_new_tokens": opts.max_tokens, "device": opts.device, "poll_interval": 3600.0},
        "training": {
            "backend": "local",
            "base_model": opts.base_model,
            "device": opts.device,
            "batch_size": opts.batch_size,
            "micro_batch_size": 4,
            "learning_rate": opts.learning_rate,
            "lora_rank": opts.lora_rank,
            "advantage": opts.advantage,
            "kl_coef": opts.kl_coef,
            "seed": opts.seed,
            "checkpoint_every": 1000,
            "evolve_on_failed_batch": False,
            **opts.training,
        },
        "evolution": {"enabled": False},
        "retrieval": {"mode": "keyword"},
    }
    if arm.startswith("skills"):
        assert upstream_url is not None
        per_day = len(opts.families) * opts.per_family
        out["evolution"] = {
            **scripted_evolution(upstream_url, promotion="auto"),
            # a day's failed turns stay query samples (the rl arm's signal); the batch trigger evolves
            "min_failures": 10**6,
            "batch_turns": max(2, min(10, per_day)),
            "success_rate_threshold": 1.0,
        }
    return out


class RuleEvolver:
    """The skills arms' scripted evolver (see :data:`EVOLVER_NOTE`): the rule is the first user message in the
    failed turn's context; the skill is built from it by the workday bench's scripted rules. ``rules``: the texts it
    knows as conventions (default: the families' rules)."""

    def __init__(self, rules: list[str] | None = None) -> None:
        from .scripted_evolver import ScriptedEvolver

        class _Evolver(ScriptedEvolver):
            def correction_of(self, doc: dict[str, Any]) -> str | None:
                for t in doc.get("failed_turns") or []:
                    for m in t.get("context") or []:
                        if m.get("role") == "user" and str(m.get("content") or "").strip():
                            return str(m["content"])
                return None

        known = rules if rules is not None else [f.rule for f in FAMILIES.values()]
        self.script = _Evolver(kinds=dict.fromkeys(known, "convention"))


def conversation(family: Family, request: str, day: int, rule_days: int | None) -> list[dict[str, str]]:
    """What the host sends for one request of day ``day``: the opening exchange (the user's rule and the
    assistant's :data:`ACK`) and the request; after ``rule_days`` days, the request alone (a new conversation in
    which the user does not say the rule again)."""
    opening = [{"role": "user", "content": family.rule}, {"role": "assistant", "content": ACK}]
    return [*(opening if rule_days is None or day <= rule_days else []), {"role": "user", "content": request}]


# One arm ------------------------------------------------------------------------------------------------------
class ArmRun:
    """One arm's plugin home, served policy, scheduler and (skills arms) scripted evolver upstream."""

    def __init__(
        self,
        arm: str,
        opts: Options,
        home: Path,
        log: Callable[[str], None],
        *,
        rules: list[str] | None = None,
        settings: Callable[[str | None], dict[str, Any]] | None = None,
    ):
        """``rules``: the scripted evolver's conventions; ``settings``: the arm's plugin settings, given the skills
        arms' upstream URL (default: :func:`arm_settings`)."""
        from metaclaw_plugin.config import Settings
        from metaclaw_plugin.devtools.demo_train import ScriptedIdle
        from metaclaw_plugin.devtools.upstream import Upstream
        from metaclaw_plugin.plugin import MetaClawPlugin
        from metaclaw_plugin.scheduling.attach import file_activity, scheduler_trainer
        from metaclaw_plugin.scheduling.lock import TrainerLock
        from metaclaw_plugin.scheduling.omls import Omls
        from metaclaw_plugin.scheduling.signals import Gate
        from metaclaw_plugin.serving import shared_policy
        from metaclaw_plugin.store import open_database

        self.arm, self.opts, self.log = arm, opts, log
        self.upstream = Upstream(script=RuleEvolver(rules).script).__enter__() if arm.startswith("skills") else None
        url = self.upstream.url if self.upstream else None
        self.settings = Settings(home=home, **(settings(url) if settings else arm_settings(arm, opts, url)))
        self.plugin = MetaClawPlugin(self.settings).start()
        assert self.plugin.learning is not None, "the verifiers attach the learning loop"
        self.policy = shared_policy(settings=self.settings)
        self.policy.wait_ready(1800)
        self.db = open_database(self.settings)
        self.idle = ScriptedIdle()
        self.omls: Omls | None = None
        if "rl" in arm:
            s = self.settings
            self.omls = Omls(
                self.db,
                Gate([self.idle], s.scheduler.min_window_minutes * 60),
                lambda: scheduler_trainer(s),
                mode=lambda: "auto",
                lock=TrainerLock(s.home_dir),
                last_activity=file_activity(s.activity_path),
                interval_s=s.scheduler.interval_seconds,
            )

    def close(self) -> None:
        if self.omls is not None:
            self.omls.stop(60)
        self.policy.close()
        self.plugin.stop()
        if self.upstream is not None:
            self.upstream.__exit__(None, None, None)

    # the day: answer, judge, train, evolve
    def day(self, n: int) -> dict[str, Any]:
        from metaclaw_plugin.types import TurnContext

        fl = self.plugin.learning
        assert fl is not None
        reqs = requests_for(n, self.opts.seed, self.opts.families, self.opts.per_family)
        results: list[dict[str, Any]] = []
        weights: list[str] = []
        t0 = time.perf_counter()
        with fl.held():  # no evolution before the day's samples are trained (a new skill makes them stale)
            for i, (fam, q) in enumerate(reqs):
                family = FAMILIES[fam]
                convo = conversation(family, q, n, self.opts.rule_days)
                ctx = TurnContext(f"day{n}-{fam}", host="bench-learning", metadata={"task_type": fam})
                messages = self.plugin.on_request(ctx, convo)
                g = self.policy.generate(
                    messages,
                    max_tokens=self.opts.max_tokens,
                    temperature=self.opts.temperature,
                    seed=self.opts.seed * 1_000_003 + n * 10_007 + i,
                )
                self.plugin.on_response(ctx, g.message())
                weights.append(g.weights)
                results.append({"family": fam, "request": q, "answer": g.content, "ok": family.check(g.content)})
            answered_s = time.perf_counter() - t0
            for fam in self.opts.families:
                self.plugin.on_session_end(TurnContext(f"day{n}-{fam}", host="bench-learning"))
            samples = self._judged(len(reqs))
            # the last day's answers are the last measurement: a window after it would train for nothing
            window = self._window() if self.omls is not None and n < self.opts.days else None
        evolved = self._evolve() if self.arm.startswith("skills") else []
        return self._day_doc(n, results, weights, samples, window, evolved, answered_s)

    def _judged(self, expected: int, timeout: float = 600.0) -> dict[str, int]:
        """Judge (the verifier commands) every one of the day's turns, then review them into samples. The review
        waits for the judge: a forced review of a turn whose score is still coming makes no sample of it."""
        fl = self.plugin.learning
        assert fl is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.plugin.flush(10)
            fl.tick(force=True, only=("judge",))
            q = fl.status()["queues"]["judge"]
            if sum(q.values()) >= self._judged_turns + expected and not q.get("pending"):
                break
            time.sleep(0.2)
        else:
            raise RuntimeError(f"the day's {expected} turns were not judged within {timeout:.0f}s")
        self._judged_turns += expected
        fl.tick(force=True, only=("reviews",))
        total = _rows(fl.buffer)
        got, self._seen = total - self._seen, total
        return {"samples": got, "fresh": fl.buffer.fresh_count()}

    _seen = 0
    _judged_turns = 0

    def _window(self, timeout: float = 3600.0) -> dict[str, Any]:
        """The user's away time: the scheduler opens a window (scripted idle signal), its trainer steps on the
        fresh batches and publishes; the window closes when they are done; the policy swaps."""
        from metaclaw_plugin.scheduling.signals import Reading
        from metaclaw_plugin.training.trainer import last_steps
        from metaclaw_plugin.training.weights import by_tenant, latest

        omls = self.omls
        assert omls is not None
        before = last_steps(self.db, 1)
        last = before[0]["step"] if before else 0
        omls.tick()  # the user is at the machine: no window
        self.idle.reading = Reading(away=True, until=time.time() + 3600, detail="scripted: the user left")
        t0 = time.perf_counter()
        omls.tick()  # the window opens; with a fresh batch, the trainer runs in the scheduler's thread
        if not omls.wait_idle(timeout):
            raise RuntimeError(f"the window's training did not finish within {timeout:.0f}s")
        seconds = time.perf_counter() - t0
        self.idle.reading = Reading(away=False, present=True, detail="scripted: the user is back")
        omls.tick()
        if omls.errors:
            raise RuntimeError(f"the scheduler counted errors: {omls.errors} ({omls.note})")
        # the trainer published through publish_in_process: wait for the swap (each tenant's own weights under
        # scope tenant, the one set for all under global)
        refs = by_tenant(self.db) if self.policy.scope == "tenant" else {None: latest(self.db)}
        deadline = time.monotonic() + 600
        for whose, ref in refs.items():
            while ref is not None and not _serves(self.policy.weights_for(whose), ref):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the served policy did not swap to {ref.path}")
                time.sleep(0.1)
        steps = [s for s in last_steps(self.db, 1000) if s["step"] > last]
        rep = omls.last_report
        return {
            "steps": len(steps),
            "skipped_batches": rep.skipped_batches if rep is not None else 0,
            "held_back": rep.held_back if rep is not None else 0,
            "samples_used": sum(int(s["samples_used"]) for s in steps),
            "samples_dropped": sum(int(s["samples_dropped"] or 0) for s in steps)
            + (rep.samples_dropped if rep is not None and not steps else 0),
            "loss": _mean([s["loss"] for s in steps]),
            "mean_reward": _mean([s["mean_reward"] for s in steps]),
            "kl_to_base": _mean([(s["detail"] or {}).get("kl") for s in steps]),
            "seconds_per_step": _mean([s["step_seconds"] for s in steps]),
            "window_seconds": round(seconds, 2),
            "weights_after": self.policy.current.label if self.policy.current else None,
        }

    def _evolve(self, timeout: float = 300.0) -> list[str]:
        """After the window: the learning loop's own tick runs the evolution the review queued."""
        fl = self.plugin.learning
        assert fl is not None
        before = set(self.plugin.skills.store.load().skills)
        fl.tick(force=True)
        deadline = time.monotonic() + timeout
        while fl.status()["queues"].get("evolution", {}).get("pending") and time.monotonic() < deadline:
            fl.tick(force=True)
            time.sleep(0.2)
        return sorted(set(self.plugin.skills.store.load().skills) - before)

    def _day_doc(
        self,
        n: int,
        results: list[dict[str, Any]],
        weights: list[str],
        samples: dict[str, int],
        window: dict[str, Any] | None,
        evolved: list[str],
        answered_s: float,
    ) -> dict[str, Any]:
        k, total = sum(r["ok"] for r in results), len(results)
        lo, hi = wilson(k, total)
        fams: dict[str, Any] = {}
        for f in self.opts.families:
            rs = [r for r in results if r["family"] == f]
            fk = sum(r["ok"] for r in rs)
            fams[f] = {"success": rnd(fk / len(rs)), "n": len(rs), "ci95": [rnd(x) for x in wilson(fk, len(rs))]}
        return {
            "day": n,
            "success": rnd(k / total, 4),
            "n": total,
            "ci95": [rnd(lo, 4), rnd(hi, 4)],
            "families": fams,
            "weights_answered": list(dict.fromkeys(weights)),
            "answer_seconds": round(answered_s, 2),
            "samples": samples,
            "training": window,
            "evolved_skills": evolved,
            "examples": [
                {k: r[k] for k in ("family", "request", "answer", "ok")} for r in results[:: max(1, total // 4)]
            ],
        }


def _serves(weights: Any, ref: Any) -> bool:
    return weights is not None and weights.ref == ref


def _rows(buffer: Any) -> int:
    """Every sample the buffer has seen, whatever became of it."""
    st = buffer.stats().as_dict()
    return sum(v for k, v in st.items() if k != "generation")


def _mean(xs: list[Any]) -> float | None:
    vals = [float(x) for x in xs if x is not None]
    return rnd(sum(vals) / len(vals), 5) if vals else None


# The run ------------------------------------------------------------------------------------------------------
def _exit_with_parent(parent: int) -> None:
    """An arm's process ends when the run's process does: a run killed with SIGTERM left its arms training on,
    competing for the cores with the next run."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(2.0)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="bench-parent-watch").start()


def run(opts: Options, work: Path, log: Callable[[str], None] = lambda m: None) -> dict[str, Any]:
    """Every arm of ``opts`` for ``opts.days`` days under ``work``; the result document."""
    opts.check()
    t_run = time.perf_counter()
    if opts.jobs > 1 and len(opts.arms) > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # spawn, one arm per process: a fresh interpreter for each (no torch state or threads forked from this
        # one, and an arm's memory is the system's again when it ends)
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(
            min(opts.jobs, len(opts.arms)),
            mp_context=ctx,
            max_tasks_per_child=1,
            initializer=_exit_with_parent,
            initargs=(os.getpid(),),
        ) as ex:
            futures = {arm: ex.submit(run_arm, arm, opts, work, _print_log) for arm in opts.arms}
            arms = {arm: f.result() for arm, f in futures.items()}
    else:
        arms = {arm: run_arm(arm, opts, work, log) for arm in opts.arms}
    doc = {
        **provenance("bench learning"),
        "what": "bench learning",
        "options": {**asdict(opts), "batch_size": opts.batch_size},
        "setup": {
            "families": {f: FAMILIES[f].rule for f in opts.families},
            "requests": "per day and family, new requests (seeded by day, never an earlier day's); the user's "
            "rule opens each day's conversation once; each request is sent as that opening exchange and itself"
            + ("" if opts.rule_days is None else f"; from day {opts.rule_days + 1} the requests come alone"),
            "success": "the family's checker (benchmarks/metaclaw_bench/learning_checks.py) on the served answer",
            "reward": "the same checker as the plugin's verifier command (reward.verifiers): +1 / -1",
            "evolver": EVOLVER_NOTE,
        },
        "arms": arms,
        "seconds": round(time.perf_counter() - t_run, 1),
    }
    doc["comparison"] = compare(doc)
    return doc


def run_arm(arm: str, opts: Options, work: Path, log: Callable[[str], None]) -> dict[str, Any]:
    """One arm's days, start to end, in its own home under ``work``: its document."""
    if opts.threads > 0:
        import torch  # before the arm starts a thread that loads a model: no import race to guard against

        torch.set_num_threads(opts.threads)
    t_arm = time.perf_counter()
    log(f"arm {arm}: loading {opts.base_model} on {opts.device}")
    ar = ArmRun(arm, opts, work / arm.replace("+", "-") / "home", log)
    days: list[dict[str, Any]] = []
    try:
        for n in range(1, opts.days + 1):
            d = ar.day(n)
            days.append(d)
            tr = d["training"] or {}
            log(
                f"arm {arm} day {n}: success {d['success']:.3f} {d['ci95']} "
                f"steps {tr.get('steps', '-')} loss {tr.get('loss')} kl {tr.get('kl_to_base')} "
                f"skills {d['evolved_skills']}"
            )
    finally:
        ar.close()
    return _arm_doc(arm, days, time.perf_counter() - t_arm)


def _print_log(message: str) -> None:
    """The log of an arm in a process of its own: stderr, as the CLI's."""
    print(message, file=sys.stderr, flush=True)


def _arm_doc(arm: str, days: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    worse = [d["day"] for prev, d in itertools.pairwise(days) if d["ci95"][1] < prev["ci95"][0]]
    return {
        "days": days,
        "first": days[0]["success"],
        "last": days[-1]["success"],
        "gain": rnd(days[-1]["success"] - days[0]["success"], 4),
        "worse_days": worse,  # days whose interval lies wholly below the previous day's
        "lower_days": [d["day"] for prev, d in itertools.pairwise(days) if d["success"] < prev["success"]],
        "seconds": round(seconds, 1),
        **({"note": EVOLVER_NOTE} if arm.startswith("skills") else {}),
    }


def compare(doc: dict[str, Any]) -> dict[str, Any]:
    """Each learning arm against ``base``: the gain from day 1 to the last day over base's, whether the last
    day's intervals overlap, and the families whose last day is below their first."""
    arms = doc["arms"]
    if "base" not in arms:
        return {}
    base = arms["base"]
    out: dict[str, Any] = {}
    for arm, a in arms.items():
        if arm == "base":
            continue
        last, blast = a["days"][-1], base["days"][-1]
        worse_fams = [
            f
            for f, v in last["families"].items()
            if v["success"] < a["days"][0]["families"][f]["success"] or v["success"] < blast["families"][f]["success"]
        ]
        out[arm] = {
            "gain_over_base_points": rnd(100 * (a["gain"] - base["gain"]), 1),
            "last_day_vs_base_points": rnd(100 * (last["success"] - blast["success"]), 1),
            "intervals_apart": last["ci95"][0] > blast["ci95"][1],
            "families_worse": worse_fams,
        }
    return out


def markdown(doc: dict[str, Any]) -> str:
    fams = list(doc["setup"]["families"])
    lines = [
        f"bench learning: {doc['options']['base_model']} on {doc['options']['device']}, "
        f"{doc['options']['per_family']} requests per family per day, families {', '.join(fams)}, "
        f"seed {doc['options']['seed']}, {doc['seconds']:.0f} s",
        "",
        "| arm | day | success (95% CI) | "
        + " | ".join(fams)
        + " | steps | used/dropped | loss | reward | KL | s/step |",
        "|---|---|---|" + "---|" * len(fams) + "---|---|---|---|---|---|",
    ]
    for arm, a in doc["arms"].items():
        for d in a["days"]:
            tr = d["training"] or {}
            lines.append(
                f"| {arm} | {d['day']} | {d['success']:.3f} ({d['ci95'][0]:.3f}-{d['ci95'][1]:.3f}) | "
                + " | ".join(f"{d['families'][f]['success']:.2f}" for f in fams)
                + f" | {tr.get('steps', '-')} | {tr.get('samples_used', '-')}/{tr.get('samples_dropped', '-')} | "
                f"{_f(tr.get('loss'))} | {_f(tr.get('mean_reward'))} | {_f(tr.get('kl_to_base'))} | "
                f"{_f(tr.get('seconds_per_step'), 1)} |"
            )
    lines.append("")
    for arm, a in doc["arms"].items():
        worse = f"worse days {a['worse_days']}" if a["worse_days"] else "no day significantly worse"
        worse += f", lower days {a['lower_days']}" if a["lower_days"] else ", no day lower"
        lines.append(f"- {arm}: day 1 {a['first']:.3f} -> day {len(a['days'])} {a['last']:.3f}; {worse}")
    for arm, c in doc.get("comparison", {}).items():
        lines.append(
            f"- {arm} vs base: gain {c['gain_over_base_points']:+.1f} points over base's, last day "
            f"{c['last_day_vs_base_points']:+.1f} points, intervals apart: {c['intervals_apart']}, "
            f"families worse: {c['families_worse'] or 'none'}"
        )
    lines.append(f"- {EVOLVER_NOTE}")
    return "\n".join(lines)


def _f(x: Any, nd: int = 3) -> str:
    return "-" if x is None else f"{x:.{nd}f}"
