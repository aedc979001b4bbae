"""Lesson reach: how often a lesson learned from one correction reaches the later rounds it governs.

A *lesson* is what one corrective feedback teaches (a user's convention, or a procedure for one kind of
task). The harness plays a multi-day scenario through the real plugin and its real learning loop:

1. A fresh plugin home (the starter skills), the evolver pointed at a **scripted** local server
   (:class:`ScriptedEvolver`), promotion ``auto``, lexical dedup, no reward judge.
2. Each day is a session of the scenario's tenant. Each round is a main turn: ``on_request`` with the
   round's question (the day's earlier rounds as history), the skills it got are recorded, then a
   neutral scripted reply (``on_response``). With the second ranking stage on (a ``hybrid+rerank`` mode), the
   harness waits for it to rank the round before the next one, as a person's next message comes seconds later
   and the ranking takes a fraction of one. Before it, a side turn (a title for the request, as hosts
   make) checks that side turns get no skills; ``side_turns="after"`` puts it between the round and the
   correction instead, which today hides the correction from the evolver (see the tests).
3. The first round that teaches a lesson is followed by the round's corrective feedback as the next
   user message; that session then ends with a failed outcome, and the learning loop is drained
   (forced ticks: review -> evolution queue -> evolver call -> dedup -> screening -> promotion). The
   day goes on in a new session.
4. The skills evolved from a lesson are the ones whose ``source_sessions`` hold the teaching session.
   A governed round is *reached* when one of them was injected into it.

Counted rounds: the rounds of days *after* the teaching day that the lesson governs (same-day rounds
are not counted). The scripted evolver sees only the evolver request (failed turns, existing skills):
it writes the skill from the correction text alone, and takes the kind from the scenario's annotation
of the lesson when there is one, else from :func:`kind_by_rule`. It is not a model: the figures measure
retrieval and injection of a skill as written from the correction, not the quality of an evolver.

Scenario sets:

- the public MetaClaw-Bench layout (``all_tests.json``, ``eval/<day>/questions.json``), read by
  :func:`load_metaclaw_bench`; the governance rule is in its docstring;
- our own YAML scenarios (``benchmarks/scenarios/reach/*.yaml``), read by :func:`load_reach_yaml`,
  where each round lists the lessons that govern it.

    python benchmarks/lesson_reach.py                       # both sets, keyword and hybrid (if installed)
    python benchmarks/lesson_reach.py --bench tests/data/metaclaw-bench-example --modes keyword
"""

from __future__ import annotations

import json
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from .common import BENCH_ROOT
from .public_layout import load_public, resolve_in
from .scripted_evolver import (
    EVOLVER_NOTE,
    KIND_RULE,
    REPLY,
    ScriptedEvolver,
    _same,
    kind_by_rule,
    mode_settings,
    scripted_evolution,
    skill_from_correction,
)

__all__ = ["KIND_RULE", "kind_by_rule", "resolve_in", "skill_from_correction"]

KINDS = ("convention", "procedure")
SYSTEM_PROMPT = (
    "You are a careful assistant working in the user's workspace. Do the task, then say briefly what you did."
)
ACK = "Understood. I have redone it that way."


# The scenario model -------------------------------------------------------------------------------
@dataclass
class Lesson:
    id: str
    correction: str  # the feedback text that teaches it (the next user message after the teaching round)
    day: str  # the teaching round
    round: str
    kind: str | None = None  # the scenario's annotation; None where the scenario has none
    # The lesson as an ordinary skill (name, description, body: no kind), as another evolver or a person would
    # store it; what an unmarked run stores. None: the rule-written skill without its kind.
    as_skill: dict[str, str] | None = None


@dataclass
class ReachRound:
    day: str
    id: str
    question: str
    governed_by: list[str] = field(default_factory=list)


@dataclass
class Scenario:
    name: str
    tenant: str
    days: list[tuple[str, list[ReachRound]]]
    lessons: dict[str, Lesson]
    source: str = ""
    governance: str = ""

    def teaching(self, day: str, rid: str) -> list[Lesson]:
        return [le for le in self.lessons.values() if le.day == day and le.round == rid]

    def day_index(self) -> dict[str, int]:
        return {d: i for i, (d, _) in enumerate(self.days)}

    def governed(self, lesson: Lesson) -> list[ReachRound]:
        """The later rounds a lesson governs: rounds of days after its teaching day that list it."""
        idx = self.day_index()
        return [r for d, rounds in self.days if idx[d] > idx[lesson.day] for r in rounds if lesson.id in r.governed_by]


# Readers ----------------------------------------------------------------------------------------------
def load_metaclaw_bench(folder: Path | str, tenant: str = "bench") -> Scenario:
    """Read a benchmark in the public MetaClaw-Bench layout (read-only).

    Governance rule (the layout labels days, not rounds): every ``preference_tags`` tag is a lesson. It
    is taught on the first day that carries the tag, by that day's first round with corrective feedback
    (``feedback.incorrect`` of a ``file_check`` round; for a ``multi_choice`` round ``feedback.correct``
    and the ``feedback.options`` explanations). It governs every round of every later day that carries
    the tag. Tags first shown on the same day share that day's teaching round (one correction, one
    skill). The kind is not annotated: the scripted evolver decides it with :func:`kind_by_rule`."""
    bench = load_public(folder)
    days: list[tuple[str, list[ReachRound]]] = []
    lessons: dict[str, Lesson] = {}
    for day in bench.days:
        rounds = [ReachRound(day.id, r.id, r.question, list(day.tags)) for r in day.rounds]
        teacher = next(
            ((r.id, _teaching_text(r)) for r in day.rounds if _teaching_text(r)),
            None,
        )
        for t in day.tags:
            if t not in lessons and teacher is not None:
                lessons[t] = Lesson(t, teacher[1], day.id, teacher[0])
        days.append((day.id, rounds))
    return Scenario(
        name=bench.name,
        tenant=tenant,
        days=days,
        lessons=lessons,
        source=str(folder),
        governance="later days carrying the lesson's preference tag",
    )


def _teaching_text(r: Any) -> str:
    """A round's corrective feedback: ``feedback.incorrect`` of a file_check round; for a multi_choice
    round ``feedback.correct`` and the per-option explanations."""
    if r.type == "file_check":
        return str(r.feedback_incorrect).strip()
    return "\n".join(x for x in (r.feedback_correct.strip(), r.feedback_incorrect.strip()) if x)


def load_reach_yaml(path: Path | str) -> Scenario:
    """Read one of our scenarios: ``name``, ``tenant``, ``lessons`` (id -> ``kind``, ``taught`` (``day``,
    ``round``), ``correction``, optionally ``as_skill``: ``name``, ``description``, ``body``) and ``days`` (``id``,
    ``rounds``: ``id``, ``question``, ``governed_by``)."""
    p = Path(path)
    data = yaml.safe_load(p.read_text(encoding="utf-8"))
    days = [
        (
            str(d["id"]),
            [
                ReachRound(str(d["id"]), str(r["id"]), str(r["question"]).strip(), list(r.get("governed_by") or []))
                for r in d["rounds"]
            ],
        )
        for d in data["days"]
    ]
    lessons = {}
    for lid, le in data["lessons"].items():
        kind = le.get("kind")
        if kind not in (None, *KINDS):
            raise ValueError(f"{p}: lesson {lid}: kind must be convention or procedure")
        lessons[str(lid)] = Lesson(
            str(lid),
            " ".join(str(le["correction"]).split()),
            str(le["taught"]["day"]),
            str(le["taught"]["round"]),
            kind,
            _as_skill(p, str(lid), le.get("as_skill")),
        )
    sc = Scenario(
        str(data.get("name") or p.stem),
        str(data.get("tenant") or p.stem),
        days,
        lessons,
        source=str(p),
        governance="later-day rounds labelled with the lesson (governed_by)",
    )
    known = {(d, r.id) for d, rounds in days for r in rounds}
    for le in lessons.values():
        if (le.day, le.round) not in known:
            raise ValueError(f"{p}: lesson {le.id} is taught in {le.day}/{le.round}, which is not a round")
    for _, rounds in days:
        for r in rounds:
            unknown = set(r.governed_by) - set(lessons)
            if unknown:
                raise ValueError(f"{p}: {r.day}/{r.id} is governed by unknown lessons {sorted(unknown)}")
    return sc


def _as_skill(p: Path, lid: str, raw: Any) -> dict[str, str] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or any(not str(raw.get(k) or "").strip() for k in ("name", "description", "body")):
        raise ValueError(f"{p}: lesson {lid}: as_skill needs name, description and body")
    return {k: str(raw[k]) for k in ("name", "description", "body")}


def default_reach_dir() -> Path | None:
    """benchmarks/scenarios/reach."""
    p = BENCH_ROOT / "scenarios" / "reach"
    return p if p.is_dir() else None


def load_reach_scenarios(folder: Path | str | None = None) -> list[Scenario]:
    d = Path(folder) if folder is not None else default_reach_dir()
    if d is None:
        return []
    return [load_reach_yaml(f) for f in sorted(d.glob("*.yaml"))]


# The run ------------------------------------------------------------------------------------------------
@dataclass
class RoundRecord:
    day: str
    round: str
    session: str
    injected: list[str]
    governed_by: list[str]


@dataclass
class LessonResult:
    lesson: str
    kind: str  # the kind of the evolved skill (the evolver's); "none" when nothing was written
    annotated: str | None
    kind_source: str
    skills: list[str]
    decisions: list[dict[str, Any]]
    governed: int
    reached: int
    missed: list[str] = field(default_factory=list)
    taught_day: str = ""

    @property
    def share(self) -> float | None:
        return None if self.governed == 0 else self.reached / self.governed


@dataclass
class ReachResult:
    scenario: str
    mode: str
    lessons: list[LessonResult]
    rounds: list[RoundRecord]
    side_turns: int = 0
    side_turns_with_skills: int = 0
    evolver_calls: int = 0
    seconds: float = 0.0
    skills: dict[str, dict[str, Any]] = field(default_factory=dict)  # evolved skills: name -> facts
    unmarked: bool = False  # the lessons were stored as ordinary skills (no kind)

    def ungoverned(self) -> tuple[int, int]:
        """Later-day rounds no lesson governs that got a learned skill anyway, and how many there are (a round of
        the teaching day or before counts from the first lesson's next day)."""
        learned = {n for le in self.lessons for n in le.skills}
        days = list(dict.fromkeys(r.day for r in self.rounds))
        taught = [days.index(le.taught_day) for le in self.lessons if le.taught_day in days]
        if not taught:
            return 0, 0
        start = min(taught) + 1
        later = [r for r in self.rounds if days.index(r.day) >= start and not r.governed_by]
        return sum(bool(learned & set(r.injected)) for r in later), len(later)

    def by_kind(self) -> dict[str, tuple[int, int]]:
        out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for le in self.lessons:
            k = le.annotated or le.kind
            out[k][0] += le.reached
            out[k][1] += le.governed
        return {k: (v[0], v[1]) for k, v in out.items()}

    def overall(self) -> tuple[int, int]:
        return sum(le.reached for le in self.lessons), sum(le.governed for le in self.lessons)


def embeddings_available() -> bool:
    try:
        import chromadb  # noqa: F401
        import sentence_transformers  # noqa: F401
    except Exception:
        return False
    return True


def run_scenario(
    scenario: Scenario,
    mode: str = "keyword",
    *,
    home: Path | None = None,
    side_turns: Literal["before", "after", "none"] = "before",
    settings_extra: dict[str, Any] | None = None,
    use_annotations: bool = True,
    unmarked: bool = False,
    from_corrections: bool = False,
) -> ReachResult:
    """Play one scenario through a fresh plugin home and its learning loop; count the reach. ``unmarked``: the
    evolver stores each lesson as an ordinary skill (its ``as_skill``, with no kind), as another evolver would;
    with ``from_corrections``, as the scripted evolver writes it from the correction (the scenario's ``as_skill``
    left out), with no kind."""
    if home is None:
        with tempfile.TemporaryDirectory(prefix="metaclaw-reach-") as tmp:
            return run_scenario(
                scenario,
                mode,
                home=Path(tmp),
                side_turns=side_turns,
                settings_extra=settings_extra,
                use_annotations=use_annotations,
                unmarked=unmarked,
                from_corrections=from_corrections,
            )
    from metaclaw_plugin.devtools.upstream import Upstream
    from metaclaw_plugin.plugin import MetaClawPlugin
    from metaclaw_plugin.types import TurnContext

    t0 = time.perf_counter()
    kinds = {le.correction: le.kind for le in scenario.lessons.values() if le.kind} if use_annotations else {}
    written = (
        {le.correction: le.as_skill for le in scenario.lessons.values() if le.as_skill and not from_corrections}
        if unmarked
        else None
    )
    evolver = ScriptedEvolver(kinds, written)
    records: list[RoundRecord] = []
    teaching_sessions: dict[str, str] = {}
    side = side_with = 0
    tenant = scenario.tenant
    with Upstream(script=evolver) as up:
        settings = _settings(home, up.url, mode, settings_extra)
        p = MetaClawPlugin(settings).start()
        try:
            if p.learning is None:
                raise RuntimeError("the learning loop did not attach (is litellm installed?)")
            for day, rounds in scenario.days:
                sid = f"{scenario.name}/{day}"
                part = 1
                history: list[dict[str, Any]] = []
                ctx = None
                for r in rounds:
                    msgs = [
                        {"role": "system", "content": SYSTEM_PROMPT},
                        *history,
                        {"role": "user", "content": r.question},
                    ]
                    if side_turns in ("before", "after"):
                        side += 1
                        side_with += _side_turn(p, sid, tenant, r.question) if side_turns == "before" else 0
                    ctx = TurnContext(sid, tenant=tenant, host="reach")
                    p.on_request(ctx, msgs)
                    records.append(RoundRecord(day, r.id, sid, list(ctx.injected_skills), list(r.governed_by)))
                    p.on_response(ctx, {"role": "assistant", "content": REPLY})
                    if p.skills.reranker is not None:
                        p.skills.reranker.wait_idle(300)
                    if side_turns == "after":
                        side_with += _side_turn(p, sid, tenant, r.question)
                    history += [{"role": "user", "content": r.question}, {"role": "assistant", "content": REPLY}]
                    taught = scenario.teaching(day, r.id)
                    if not taught:
                        continue
                    correction = taught[0].correction
                    c2 = TurnContext(sid, tenant=tenant, host="reach")
                    p.on_request(
                        c2, [*msgs, {"role": "assistant", "content": REPLY}, {"role": "user", "content": correction}]
                    )
                    p.on_response(c2, {"role": "assistant", "content": ACK})
                    p.on_session_end(c2, {"success": False})
                    for le in taught:
                        teaching_sessions[le.id] = sid
                    drain(p, tenant, sid)
                    part += 1
                    sid = f"{scenario.name}/{day}#{part}"
                    history = []
                    ctx = None
                if ctx is not None:
                    p.on_session_end(ctx)
            p.flush(10)
            loaded = p.skills.store.load().skills
            reports = list(p.learning.reports)
            evolved: dict[str, dict[str, Any]] = {
                n: {
                    "kind": s.kind,
                    "status": s.status,
                    "origin": s.origin,
                    "tenant": s.tenant,
                    "source_sessions": list(s.source_sessions),
                    "screening": s.extra_metadata.get("screening"),
                    "description": s.description,
                }
                for n, s in loaded.items()
                if s.origin == "evolved"
            }
        finally:
            p.stop()
    results = []
    for le in scenario.lessons.values():
        taught_in = teaching_sessions.get(le.id)
        names = sorted(n for n, f in evolved.items() if taught_in is not None and taught_in in f["source_sessions"])
        call = next((c for c in evolver.calls if c.get("correction") and _same(c["correction"], le.correction)), None)
        proposed = {c["name"] for c in call["skills"]} if call else set()
        decisions = [
            {k: d.get(k) for k in ("name", "action", "verdict", "decision", "reasons")}
            for rep in reports
            for d in rep.get("decisions", [])
            if d.get("name") in set(names) | proposed
        ]
        governed = scenario.governed(le)
        got = {(rec.day, rec.round): rec for rec in records}
        reached = [g for g in governed if set(names) & set(got[(g.day, g.id)].injected)]
        results.append(
            LessonResult(
                lesson=le.id,
                kind=str(evolved[names[0]]["kind"]) if names else "none",
                annotated=le.kind,
                kind_source=str(call.get("kind_source")) if call else "n/a",
                skills=names,
                decisions=decisions,
                governed=len(governed),
                reached=len(reached),
                missed=[f"{g.day}/{g.id}" for g in governed if g not in reached],
                taught_day=le.day,
            )
        )
    return ReachResult(
        scenario=scenario.name,
        mode=mode,
        lessons=results,
        rounds=records,
        side_turns=side,
        side_turns_with_skills=side_with,
        evolver_calls=len(evolver.calls),
        seconds=round(time.perf_counter() - t0, 2),
        skills=evolved,
        unmarked=unmarked,
    )


def _side_turn(p: Any, sid: str, tenant: str, question: str) -> int:
    """A side call of the host (a title for the request): 1 when it was given skills (it must not be)."""
    from metaclaw_plugin.types import TurnContext

    ctx = TurnContext(sid, tenant=tenant, host="reach", kind="side")
    p.on_request(ctx, [{"role": "user", "content": f"Write a five-word title for this request: {question[:300]}"}])
    p.on_response(ctx, {"role": "assistant", "content": "A title"})
    return int(bool(ctx.injected_skills))


def _settings(home: Path, url: str, mode: str, extra: dict[str, Any] | None) -> Any:
    from metaclaw_plugin.config import Settings

    extra = dict(extra or {})
    evo = {**scripted_evolution(url), **extra.pop("evolution", {})}
    retrieval = {**mode_settings(mode), **extra.pop("retrieval", {})}
    return Settings(home=home, evolution=evo, reward={"enabled": False}, retrieval=retrieval, **extra)


def drain(p: Any, tenant: str, sid: str, timeout: float = 60.0) -> None:
    """Run the learning loop until the ended session is reviewed and its evolution job is done."""
    db = p.learning.db
    deadline = time.monotonic() + timeout
    while True:
        p.flush(10)
        p.learning.tick(force=True)
        srow = db.query("SELECT ended, review_due FROM fl_sessions WHERE tenant = ? AND session_id = ?", [tenant, sid])
        pending = db.query("SELECT id FROM fl_evolve_queue WHERE tenant = ? AND state = 'pending'", [tenant])
        if srow and srow[0]["ended"] and srow[0]["review_due"] is None and not pending:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"learning did not settle for {sid}: {json.dumps(p.learning.status(), default=str)[:800]}"
            )
        time.sleep(0.05)


# Figures -----------------------------------------------------------------------------------------------
def _share(a: int, b: int) -> str:
    return "n/a" if b == 0 else f"{a}/{b} ({100.0 * a / b:.0f}%)"


def table(results: Iterable[ReachResult]) -> str:
    out: list[str] = []
    for res in results:
        stored = "lessons stored as ordinary skills (no kind)" if res.unmarked else "kinds written by the evolver"
        out.append(f"## {res.scenario} — retrieval {res.mode}; {stored}")
        out.append("")
        out.append("| lesson | kind | kind from | evolved skill | governed later rounds | reached | share |")
        out.append("|---|---|---|---|---:|---:|---:|")
        for le in res.lessons:
            kind = le.annotated or le.kind
            out.append(
                f"| {le.lesson} | {kind} | {le.kind_source} | {', '.join(le.skills) or '(none)'} | {le.governed} "
                f"| {le.reached} | {_share(le.reached, le.governed)} |"
            )
        for k, (a, b) in sorted(res.by_kind().items()):
            out.append(f"| **all {k}s** | {k} | | | {b} | {a} | {_share(a, b)} |")
        a, b = res.overall()
        out.append(f"| **overall** | | | | {b} | {a} | {_share(a, b)} |")
        out.append("")
        ua, ub = res.ungoverned()
        out.append(
            f"later rounds no lesson governs that got a learned skill: {_share(ua, ub)}; "
            f"side turns with skills: {res.side_turns_with_skills}/{res.side_turns}; evolver calls: "
            f"{res.evolver_calls}; {res.seconds} s"
        )
        out.append("")
    out.append(EVOLVER_NOTE)
    return "\n".join(out)


def as_dict(res: ReachResult) -> dict[str, Any]:
    a, b = res.overall()
    ua, ub = res.ungoverned()
    return {
        "scenario": res.scenario,
        "mode": res.mode,
        "unmarked": res.unmarked,
        "overall": {"reached": a, "governed": b},
        "ungoverned_with_lesson": {"got": ua, "rounds": ub},
        "by_kind": {k: {"reached": x, "governed": y} for k, (x, y) in res.by_kind().items()},
        "lessons": [
            {
                "lesson": le.lesson,
                "kind": le.kind,
                "annotated": le.annotated,
                "kind_source": le.kind_source,
                "skills": le.skills,
                "decisions": le.decisions,
                "governed": le.governed,
                "reached": le.reached,
                "missed": le.missed,
            }
            for le in res.lessons
        ],
        "side_turns": res.side_turns,
        "side_turns_with_skills": res.side_turns_with_skills,
        "evolver_calls": res.evolver_calls,
        "seconds": res.seconds,
        "evolver": EVOLVER_NOTE,
    }


def run_all(
    modes: Sequence[str] | None = None,
    benches: Sequence[str | Path] = (),
    scenarios_dir: str | Path | None = None,
    ours: bool = True,
    use_annotations: bool = True,
    unmarked: bool = False,
    from_corrections: bool = False,
) -> list[ReachResult]:
    """Every scenario (ours, then each benchmark folder) under every retrieval mode (default: keyword, and hybrid
    with and without the second ranking stage when the embeddings extra imports)."""
    modes = list(modes) if modes else ["keyword"] + (["hybrid", "hybrid+rerank"] if embeddings_available() else [])
    scenarios = load_reach_scenarios(scenarios_dir) if ours else []
    scenarios += [load_metaclaw_bench(b) for b in benches]
    return [
        run_scenario(sc, mode, use_annotations=use_annotations, unmarked=unmarked, from_corrections=from_corrections)
        for mode in modes
        for sc in scenarios
    ]
