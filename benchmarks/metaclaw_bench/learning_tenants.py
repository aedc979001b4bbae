"""``bench learning --preset tenants``: two tenants with opposite rules on one question pool, each rule stated once,
on day 1; do the fast loop (skills) and the slow loop (each tenant's own LoRA weights) carry them to later requests
that do not state them, without losing the asked facts and without one tenant's training moving the other?

* **Tenants** (routed as a host routes them: ``TurnContext.tenant`` and ``metadata.tenant``, and the served policy's
  ``tenant``): ``ana`` wants short answers in French and files named ``YYYY-MM-DD_topic.ext``; ``ben`` detailed
  answers in English and files named ``topic_YYYYMMDD.ext``. Each rule is a task family (``ana-short``...): on day 1
  each family's conversation opens with its rule; its requests are scored by the family's verifier command
  (``tenant_checks.py``: the rule *and* the asked fact).
* **Training traffic**: day 1's requests (the rule stated) and, on each later day but the last, new requests of each
  family without the rule (the verifier still scores the tenant's rule), recorded, judged and trained on (rl arms;
  ``base`` answers day 1's only, as a reference: it learns nothing from the rest).
* **Held-back requests**: a fixed set drawn apart from the pool for the whole run (never a training request), asked
  on days 2 and later, :attr:`TenantOptions.samples` times each, without the rule, with the plugin's injection but
  never recorded (``prepare_turn(record=False)``), so never trained on. Each answer is scored on each of its
  tenant's rules that apply and on content. The sampling seed is the request's, not the tenant's: base answers
  both tenants alike, and the pairs (base, arm) share their draws.
* **Cross-tenant drift**: in the ``rl`` arm a third tenant, ``cara``, that never trains, answers the held-back set
  too; scored under ana's and under ben's rules and compared with base's answers, it is the change training the two
  others made to a tenant that is not theirs.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import tenant_checks as tc
from .common import provenance, rnd
from .learning import ACK, EVOLVER_NOTE, ArmRun, Options, arm_settings

ARMS = ("base", "skills", "rl", "skills+rl")
TRAINED = ("skills", "rl", "skills+rl")
ORDER = ("base", "rl", "skills", "skills+rl")  # the order arms run in
REWARDS = ("rule+fact", "rule")
BYSTANDER = "cara"  # the tenant that never trains (cross-tenant drift)
RULES: dict[str, str] = {
    "short": "Keep your answers short, please: always one sentence of at most 12 words.",
    "detailed": "Please always answer in detail: at least three full sentences, never a one-line answer.",
    "french": "Je préfère que tu me répondes toujours en français, s'il te plaît.",
    "english": "Please always answer in English, with full sentences.",
    "file_date_first": "Name every file as YYYY-MM-DD_topic.ext in lowercase, for example 2024-03-01_budget.xlsx.",
    "file_date_last": "Name every file as topic_YYYYMMDD.ext in lowercase, for example budget_20240301.xlsx.",
}


@dataclass(frozen=True)
class Tenant:
    name: str
    qa: tuple[str, str]  # its rules for questions: length, language
    files: str  # its file-naming rule

    @property
    def rules(self) -> tuple[str, ...]:
        return (*self.qa, self.files)

    def family(self, rule: str) -> str:
        return f"{self.name}-{rule}"


TENANTS = (
    Tenant("ana", ("short", "french"), "file_date_first"),
    Tenant("ben", ("detailed", "english"), "file_date_last"),
)
TOPICS = ["budget", "meeting notes", "invoice", "travel plan", "report", "contract", "photos", "slides"]
QA_POOL = [q for c in tc.FACTS for q in (f"What is the capital of {c}?", f"Which continent is {c} in?")]


def file_request(r: random.Random) -> str:
    return f"Suggest a file name for my {r.choice(TOPICS)} from {r.choice(tc.MONTHS)} {r.randint(1, 28)}, {r.randint(2023, 2025)}."


def applies(rule: str, request: str) -> bool:
    """Whether a rule reads this request's answer: file rules file requests, the others questions."""
    return rule.startswith("file_") == bool(tc.FILE_Q.match(request))


# Options ------------------------------------------------------------------------------------------------------
@dataclass
class TenantOptions:
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2])
    arms: list[str] = field(default_factory=lambda: list(ARMS))
    days: int = 3
    train_per_family: int = 5  # training requests per family per training day
    held_qa: int = 8  # held-back questions
    held_files: int = 4  # held-back file requests
    samples: int = 2  # answers per held-back request per day
    max_tokens: int = 48  # a detailed answer needs room: 20 words
    learning_rate: float = 2e-3
    lora_rank: int = 16
    threads: int = 1
    jobs: int = 1
    base_model: str = "smollm2"
    device: str = "cpu"
    reward: str = "rule+fact"  # the verifiers' reward: the rule and the asked fact, or "rule" alone
    group_size: int | None = None  # training.group_size; None: the plugin's default (resampled groups)

    def check(self) -> None:
        bad = [a for a in self.arms if a not in ARMS]
        if bad or "base" not in self.arms:
            raise ValueError(f"arms must include base and be among {list(ARMS)} (got {self.arms})")
        if self.days < 2 or self.train_per_family < 2 or self.samples < 1 or not self.seeds:
            raise ValueError("days and train_per_family must be at least 2, samples and seeds at least 1")
        if self.reward not in REWARDS:
            raise ValueError(f"reward must be one of {list(REWARDS)}")
        if self.held_qa + self.held_files < 1 or self.held_qa > len(QA_POOL) // 2:
            raise ValueError(f"held_qa must be at most {len(QA_POOL) // 2}, and something must be held back")

    @classmethod
    def quick(cls) -> TenantOptions:
        """The CI form: one seed, two days, fewer requests."""
        return cls(seeds=[0], days=2, train_per_family=4, held_qa=4, held_files=2, samples=2)

    def base_options(self, seed: int) -> Options:
        families = [t.family(r) for t in TENANTS for r in t.rules]
        batch = max(2, 3 * self.train_per_family // 2)  # two steps per tenant a window; the gate's slice takes a spare
        return Options(
            families=families,
            arms=self.arms,
            days=self.days,
            per_family=self.train_per_family,
            steps_per_day=1,
            seed=seed,
            base_model=self.base_model,
            device=self.device,
            max_tokens=self.max_tokens,
            learning_rate=self.learning_rate,
            lora_rank=self.lora_rank,
            threads=self.threads,
            training={
                "batch_size": batch,
                "gate": {"max_new_tokens": self.max_tokens},
                **({} if self.group_size is None else {"group_size": self.group_size}),
            },
        )


def held_back(seed: int, opts: TenantOptions) -> list[str]:
    """The run's fixed held-back requests (never a training request)."""
    r = random.Random(f"tenants-held:{seed}")
    files: list[str] = []
    while len(files) < opts.held_files:
        q = file_request(r)
        if q not in files:
            files.append(q)
    return r.sample(QA_POOL, opts.held_qa) + files


def training_requests(seed: int, day: int, tenant: Tenant, opts: TenantOptions) -> list[tuple[str, str]]:
    """(family, request) of ``tenant``'s training traffic on ``day``: new each day, never held back."""
    used = set(held_back(seed, opts))
    out: list[tuple[str, str]] = []
    for d in range(1, day + 1):
        out = []
        for rule in tenant.rules:
            r = random.Random(f"tenants-train:{seed}:{d}:{tenant.name}:{rule}")
            pool = [q for q in QA_POOL if q not in used] if not rule.startswith("file_") else None
            for _ in range(opts.train_per_family):
                q = r.choice(pool) if pool else file_request(r)
                while q in used:
                    q = r.choice(pool) if pool else file_request(r)
                used.add(q)
                out.append((tenant.family(rule), q))
    return out


def _seed(seed: int, day: int, request: str, sample: int) -> int:
    h = hashlib.blake2b(f"{seed}:{day}:{request}:{sample}".encode(), digest_size=6).digest()
    return int.from_bytes(h, "big")


def verifiers(reward: str) -> dict[str, list[str]]:
    check = str(Path(tc.__file__).resolve())
    extra = ["--rule-only"] if reward == "rule" else []
    return {t.family(r): [sys.executable, "-I", check, r, *extra] for t in TENANTS for r in t.rules}


def settings_of(arm: str, opts: Options, reward: str) -> Callable[[str | None], dict[str, Any]]:
    """The arm's plugin settings: the learning bench's, with the tenants' verifiers, every convention of a tenant
    on each of its main turns (a tenant's rule is about all its work, not one task type), and memory off in every
    arm (its passages of what a user said would carry day 1's words into base's prompts: base would learn, and
    answer each tenant differently; bench memory measures memory)."""

    def build(url: str | None) -> dict[str, Any]:
        out = arm_settings(arm, opts, url, verifiers(reward))
        out["injection"] = {"convention_scope": "tenant"}
        out["memory"] = {"enabled": False}
        return out

    return build


# One arm ------------------------------------------------------------------------------------------------------
class TenantArm(ArmRun):
    """One arm of one seed: the training traffic, the held-back answers, the windows and evolution."""

    def __init__(self, arm: str, topts: TenantOptions, seed: int, home: Path, log: Callable[[str], None]):
        opts = topts.base_options(seed)
        super().__init__(
            arm, opts, home, log, rules=list(RULES.values()), settings=settings_of(arm, opts, topts.reward)
        )
        self.topts, self.seed = topts, seed
        self.held = held_back(seed, topts)

    def tenant_day(self, n: int) -> dict[str, Any]:
        from metaclaw_plugin.types import TurnContext

        fl = self.plugin.learning
        assert fl is not None
        t0 = time.perf_counter()
        traffic: list[dict[str, Any]] = []
        held: list[dict[str, Any]] = []
        train = n == 1 or (self.arm != "base" and n < self.opts.days)
        with fl.held():
            for t in TENANTS if train else ():
                for i, (fam, q) in enumerate(training_requests(self.seed, n, t, self.topts)):
                    rule = fam.split("-", 1)[1]
                    opening = [{"role": "user", "content": RULES[rule]}, {"role": "assistant", "content": ACK}]
                    convo = [*(opening if n == 1 else []), {"role": "user", "content": q}]
                    ctx = TurnContext(f"day{n}-{fam}", tenant=t.name, host="bench-learning", metadata=_md(fam, t.name))
                    messages = self.plugin.on_request(ctx, convo)
                    g = self.policy.generate(
                        messages, max_tokens=self.opts.max_tokens, seed=_seed(self.seed, n, q, i), tenant=t.name
                    )
                    self.plugin.on_response(ctx, g.message())
                    traffic.append(_scored(t.name, fam, q, g.content, [rule], g.weights))
            if n >= 2:
                askers = [t.name for t in TENANTS] + ([BYSTANDER] if self.arm == "rl" else [])
                for who in askers:
                    held += self._held_back(n, who)
            recorded = len(traffic) if train else 0
            for t in TENANTS if train else ():
                for r in t.rules:
                    self.plugin.on_session_end(TurnContext(f"day{n}-{t.family(r)}", tenant=t.name))
            samples = self._judged(recorded)
            window = self._window() if self.omls is not None and n < self.opts.days else None
        evolved = self._evolve() if self.arm.startswith("skills") else []
        self.log(f"seed {self.seed} arm {self.arm} day {n}: {_line(traffic, held)}")
        return {
            "day": n,
            "traffic": traffic,
            "held_back": held,
            "samples": samples,
            "training": window,
            "evolved_skills": evolved,
            "seconds": round(time.perf_counter() - t0, 1),
        }

    def _held_back(self, n: int, who: str) -> list[dict[str, Any]]:
        """``who``'s answers to the held-back requests: injected as any turn, never recorded."""
        from metaclaw_plugin.types import TurnContext

        out = []
        for q in self.held:
            for k in range(self.topts.samples):
                ctx = TurnContext(f"held-{n}-{who}", tenant=who, host="bench-learning", metadata={"tenant": who})
                messages = self.plugin.prepare_turn(ctx, [{"role": "user", "content": q}], record=False).messages
                g = self.policy.generate(
                    messages, max_tokens=self.opts.max_tokens, seed=_seed(self.seed, n, q, 1000 + k), tenant=who
                )
                as_of = [t for t in TENANTS if t.name == who] or list(TENANTS)  # the bystander under both
                for t in as_of:
                    rules = [r for r in t.rules if applies(r, q)]
                    out.append({**_scored(t.name, "held", q, g.content, rules, g.weights), "asker": who, "sample": k})
        return out


def _md(family: str, tenant: str) -> dict[str, Any]:
    return {"task_type": family, "tenant": tenant}


def _scored(tenant: str, fam: str, q: str, answer: str, rules: list[str], weights: str) -> dict[str, Any]:
    return {
        "tenant": tenant,
        "family": fam,
        "request": q,
        "answer": answer,
        "rules": {r: tc.RULES[r](answer) for r in rules},
        "content": bool(tc.content(q, answer)),
        "weights": weights,
    }


def _line(traffic: list[dict[str, Any]], held: list[dict[str, Any]]) -> str:
    def rate(rows: list[dict[str, Any]]) -> str:
        oks = [v for r in rows for v in r["rules"].values()]
        return (
            f"rules {sum(oks) / len(oks):.2f} content {sum(r['content'] for r in rows) / len(rows):.2f}" if oks else "-"
        )

    own = [h for h in held if h["asker"] != BYSTANDER]
    return f"traffic {rate(traffic)}; held-back {rate(own)}"


def run_arm(arm: str, topts: TenantOptions, seed: int, work: Path, log: Callable[[str], None]) -> dict[str, Any]:
    if topts.threads > 0:
        import torch

        torch.set_num_threads(topts.threads)
    t0 = time.perf_counter()
    ar = TenantArm(arm, topts, seed, work / f"seed{seed}" / arm.replace("+", "-") / "home", log)
    try:
        days = [ar.tenant_day(n) for n in range(1, topts.days + 1)]
    finally:
        ar.close()
    out = {"days": days, "seconds": round(time.perf_counter() - t0, 1)}
    # each arm's document as it ends: a long run cut short keeps the arms it finished
    (work / f"seed{seed}" / f"{arm.replace('+', '-')}.json").write_text(json.dumps(out, ensure_ascii=False))
    return out


def _print_log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run(topts: TenantOptions, work: Path, log: Callable[[str], None] = lambda m: None) -> dict[str, Any]:
    """Every arm of every seed: the result document, with its ``summary``."""
    topts.check()
    t0 = time.perf_counter()
    # base and rl of every seed first: a run cut short still has the paired test over its seeds
    jobs = sorted(((seed, arm) for seed in topts.seeds for arm in topts.arms), key=lambda j: (ORDER.index(j[1]), j[0]))
    if topts.jobs > 1:
        import multiprocessing
        import os
        from concurrent.futures import ProcessPoolExecutor

        from .learning import _exit_with_parent

        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(
            topts.jobs, mp_context=ctx, max_tasks_per_child=1, initializer=_exit_with_parent, initargs=(os.getpid(),)
        ) as ex:
            futures = {job: ex.submit(run_arm, job[1], topts, job[0], work, _print_log) for job in jobs}
            done = {job: f.result() for job, f in futures.items()}
    else:
        done = {job: run_arm(job[1], topts, job[0], work, log) for job in jobs}
    runs = {str(seed): {arm: done[(seed, arm)] for arm in topts.arms} for seed in topts.seeds}
    doc: dict[str, Any] = {
        **provenance("bench learning --preset tenants"),
        "what": "bench learning --preset tenants",
        "options": asdict(topts),
        "setup": {
            "tenants": {t.name: {r: RULES[r] for r in t.rules} for t in TENANTS},
            "rule": "stated once, opening each family's day-1 conversation; never again",
            "held_back": "a fixed set per seed, asked on days 2+ without the rule, injected but never recorded or "
            "trained on; each answer scored on each of its tenant's rules that apply and on content",
            "reward": "the family's verifier command (tenant_checks.py), +1 / -1: "
            + ("the rule and the asked fact" if topts.reward == "rule+fact" else "the rule alone (--rule-only)"),
            "memory": "off in every arm (its passages would carry day 1's words into base's prompts)",
            "bystander": f"{BYSTANDER}: a tenant that never trains, asked the held-back set in the rl arm",
            "evolver": EVOLVER_NOTE,
        },
        "runs": runs,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    doc["summary"] = summary(doc)
    return doc


# The figures --------------------------------------------------------------------------------------------------
def _held(arm_doc: dict[str, Any], asker: str | None = None) -> list[dict[str, Any]]:
    rows = [h for d in arm_doc["days"] if d["day"] >= 2 for h in d["held_back"]]
    return [h for h in rows if (h["asker"] != BYSTANDER if asker is None else h["asker"] == asker)]


def _rule_rate(rows: list[dict[str, Any]], tenant: str) -> float:
    oks = [v for r in rows if r["tenant"] == tenant for v in r["rules"].values()]
    return sum(oks) / len(oks) if oks else 0.0


def _units(rows: list[dict[str, Any]], seed: str) -> dict[tuple[Any, ...], bool]:
    """Each (seed, day-ordered row, rule) outcome, keyed so that base and an arm pair up."""
    out: dict[tuple[Any, ...], bool] = {}
    seen: dict[tuple[Any, ...], int] = {}
    for r in rows:
        key = (seed, r["tenant"], r["request"], r["sample"])
        i = seen[key] = seen.get(key, 0) + 1
        for rule, ok in r["rules"].items():
            out[(*key, i, rule)] = ok
    return out


def sign_test(wins: int, losses: int) -> float:
    """The two-sided exact sign test of ``wins`` against ``losses`` (ties dropped): McNemar's exact test."""
    n = wins + losses
    if n == 0:
        return 1.0
    k = min(wins, losses)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def paired(doc: dict[str, Any], arm: str) -> dict[str, Any]:
    """base against ``arm`` on the same held-back draws, pooled over seeds."""
    wins = losses = ties = 0
    for seed, arms in doc["runs"].items():
        b, a = _units(_held(arms["base"]), seed), _units(_held(arms[arm]), seed)
        for key, ok in a.items():
            if key not in b:
                continue
            if ok and not b[key]:
                wins += 1
            elif b[key] and not ok:
                losses += 1
            else:
                ties += 1
    return {"wins": wins, "losses": losses, "ties": ties, "p": sign_test(wins, losses)}


def summary(doc: dict[str, Any]) -> dict[str, Any]:
    """The issue's figures: gains in rule-following over base on days 2+ (per tenant, averaged over tenants and
    seeds), content accuracy, cross-tenant drift (the bystander) and the paired test of rl."""
    runs = doc["runs"]
    names = [t.name for t in TENANTS]
    per: dict[str, Any] = {}
    for arm in next(iter(runs.values())):
        rates = {n: _mean([_rule_rate(_held(r[arm]), n) for r in runs.values()]) for n in names}
        content = _mean([_content(_held(r[arm])) for r in runs.values()])
        per[arm] = {"rule_following": {n: rnd(v, 4) for n, v in rates.items()}, "content": rnd(content, 4)}
    out: dict[str, Any] = {"seeds": len(runs), "arms": per}
    base = per["base"]
    for arm, key in (("skills", "skills_gain"), ("rl", "rl_gain"), ("skills+rl", "skills_rl_gain")):
        if arm in per:
            out[key] = rnd(_mean([per[arm]["rule_following"][n] - base["rule_following"][n] for n in names]), 4)
    trained = [per[a]["content"] for a in TRAINED if a in per]
    out["content_drop"] = rnd(base["content"] - min(trained), 4) if trained else None
    if "rl" in per:
        drift = []
        for r in runs.values():
            by = _held(r["rl"], BYSTANDER)
            drift += [abs(_rule_rate(by, n) - _rule_rate(_held(r["base"]), n)) for n in names]
        out["cross_tenant_drift"] = rnd(max(drift), 4)
        out["p_rl"] = paired(doc, "rl")["p"]
        out["paired_rl"] = paired(doc, "rl")
    out["targets"] = _targets(out)
    return out


def _content(rows: list[dict[str, Any]]) -> float:
    return sum(r["content"] for r in rows) / len(rows) if rows else 0.0


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def _targets(s: dict[str, Any]) -> dict[str, bool | None]:
    """The issue's done-when lines, met or not (None: the arm was not run)."""

    def have(*keys: str) -> bool:
        return all(s.get(k) is not None for k in keys)

    best = max(s.get("skills_gain") or 0.0, s.get("rl_gain") or 0.0)
    return {
        "skills_gain>=0.15": s["skills_gain"] >= 0.15 if have("skills_gain") else None,
        "rl_gain>=0.10": s["rl_gain"] >= 0.10 if have("rl_gain") else None,
        "skills_rl_gain>=best-0.02": s["skills_rl_gain"] >= best - 0.02 if have("skills_rl_gain") else None,
        "content_drop<=0.02": s["content_drop"] <= 0.02 if have("content_drop") else None,
        "cross_tenant_drift<=0.05": s["cross_tenant_drift"] <= 0.05 if have("cross_tenant_drift") else None,
        "p_rl<0.05 over>=3 seeds": (s["p_rl"] < 0.05 and s["seeds"] >= 3) if have("p_rl") else None,
    }


def markdown(doc: dict[str, Any]) -> str:
    s, o = doc["summary"], doc["options"]
    lines = [
        f"bench learning --preset tenants: {o['base_model']} on {o['device']}, seeds {o['seeds']}, {o['days']} days, "
        f"{o['held_qa']}+{o['held_files']} held-back requests x {o['samples']}, reward {o['reward']}, "
        f"{doc['seconds']:.0f} s",
        "",
        "| arm | ana rules | ben rules | content |",
        "|---|---|---|---|",
    ]
    for arm, a in s["arms"].items():
        rf = a["rule_following"]
        lines.append(f"| {arm} | {rf['ana']:.3f} | {rf['ben']:.3f} | {a['content']:.3f} |")
    lines.append("")
    for k in ("skills_gain", "rl_gain", "skills_rl_gain", "content_drop", "cross_tenant_drift", "p_rl", "seeds"):
        if k in s:
            lines.append(f"- {k}: {s[k]}")
    lines.append(
        "- targets: " + ", ".join(f"{k} {'met' if v else 'NOT met'}" for k, v in s["targets"].items() if v is not None)
    )
    lines.append(f"- {EVOLVER_NOTE}")
    return "\n".join(lines)
