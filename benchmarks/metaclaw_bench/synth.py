"""Synthetic skill libraries for the benchmarks.

Skills are generated from a fixed vocabulary with a fixed seed, so every run and every machine
gets the same library. The vocabulary mixes ~400 common English words from the domains that real
skills cover (files, data, code, security, writing...) with a long tail of made-up names (projects,
services, tools), drawn with a Zipf-like skew. That is how real libraries look to a keyword index:
a few terms in thousands of skills, most terms in a handful. Skills look like the starter ones: a
one-sentence description that says when the skill applies, then a short numbered procedure (about
1.2 KB per SKILL.md).

Categories are the reference proxy's own (``coding``, ``research``, ``data_analysis``, ...), so the
same library can be handed to both sides in the overhead benchmark.
"""

from __future__ import annotations

import random
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path

from metaclaw_plugin.skillbank.skillmd import render_skill_md
from metaclaw_plugin.types import Skill

CATEGORIES = [
    "general",
    "coding",
    "research",
    "data_analysis",
    "security",
    "communication",
    "automation",
    "agentic",
    "productivity",
    "common_mistakes",
]

VERBS = [
    "validate",
    "check",
    "back-up",
    "verify",
    "normalise",
    "convert",
    "summarise",
    "escape",
    "quote",
    "parse",
    "rotate",
    "archive",
    "migrate",
    "document",
    "review",
    "test",
    "lint",
    "profile",
    "index",
    "cache",
    "retry",
    "throttle",
    "paginate",
    "dedupe",
    "reconcile",
    "schedule",
    "notify",
    "tag",
    "label",
    "sanitise",
    "redact",
    "encrypt",
    "compress",
    "split",
    "merge",
    "sort",
    "filter",
    "audit",
    "monitor",
    "benchmark",
    "sample",
    "version",
    "pin",
    "rollback",
    "snapshot",
    "restore",
    "bisect",
    "trace",
    "log",
    "annotate",
    "cite",
    "draft",
]

DOMAIN_WORDS = {
    "general": [
        "task",
        "request",
        "answer",
        "question",
        "result",
        "step",
        "plan",
        "note",
        "detail",
        "context",
        "assumption",
        "goal",
    ],
    "coding": [
        "function",
        "class",
        "module",
        "test",
        "build",
        "compile",
        "commit",
        "branch",
        "merge",
        "refactor",
        "dependency",
        "import",
        "exception",
        "traceback",
        "type",
        "signature",
        "interface",
        "endpoint",
        "handler",
        "config",
        "variable",
        "loop",
        "recursion",
        "python",
        "javascript",
        "typescript",
        "rust",
        "sql",
        "regex",
        "script",
        "library",
        "package",
        "docker",
        "makefile",
    ],
    "research": [
        "paper",
        "source",
        "citation",
        "claim",
        "evidence",
        "study",
        "survey",
        "dataset",
        "author",
        "journal",
        "reference",
        "quote",
        "statistic",
        "abstract",
        "method",
        "sample",
        "bias",
        "replication",
        "preprint",
        "arxiv",
        "footnote",
        "bibliography",
    ],
    "data_analysis": [
        "csv",
        "json",
        "yaml",
        "table",
        "column",
        "row",
        "schema",
        "field",
        "record",
        "query",
        "aggregate",
        "metric",
        "chart",
        "plot",
        "dashboard",
        "pipeline",
        "dataframe",
        "join",
        "null",
        "duplicate",
        "outlier",
        "timestamp",
        "timezone",
        "unit",
        "currency",
    ],
    "security": [
        "secret",
        "token",
        "password",
        "key",
        "credential",
        "permission",
        "sudo",
        "certificate",
        "tls",
        "input",
        "injection",
        "upload",
        "path",
        "traversal",
        "audit",
        "log",
        "access",
        "role",
        "policy",
        "firewall",
        "vulnerability",
        "patch",
    ],
    "communication": [
        "email",
        "message",
        "reply",
        "summary",
        "meeting",
        "minutes",
        "agenda",
        "stakeholder",
        "customer",
        "announcement",
        "draft",
        "tone",
        "audience",
        "update",
        "report",
        "status",
        "decision",
        "deadline",
        "owner",
        "action",
    ],
    "automation": [
        "cron",
        "job",
        "schedule",
        "webhook",
        "trigger",
        "batch",
        "queue",
        "worker",
        "retry",
        "backoff",
        "timeout",
        "idempotent",
        "pipeline",
        "workflow",
        "deploy",
        "release",
        "rollout",
        "staging",
        "production",
        "artifact",
    ],
    "agentic": [
        "tool",
        "agent",
        "subagent",
        "memory",
        "session",
        "context",
        "window",
        "plan",
        "checklist",
        "handoff",
        "delegate",
        "verification",
        "observation",
        "sandbox",
        "shell",
        "command",
        "workspace",
        "file",
        "directory",
    ],
    "productivity": [
        "todo",
        "calendar",
        "priority",
        "deadline",
        "milestone",
        "estimate",
        "timebox",
        "reminder",
        "backlog",
        "sprint",
        "board",
        "ticket",
        "issue",
        "review",
        "checklist",
        "template",
        "habit",
        "focus",
    ],
    "common_mistakes": [
        "overwrite",
        "delete",
        "truncate",
        "forget",
        "skip",
        "assume",
        "guess",
        "hallucinate",
        "ignore",
        "drop",
        "lose",
        "mismatch",
        "stale",
        "wrong",
        "missing",
        "partial",
        "silent",
        "duplicate",
    ],
}
COMMON = sorted({w for ws in DOMAIN_WORDS.values() for w in ws})

_SYL_A = [
    "ka",
    "lo",
    "mi",
    "ne",
    "ru",
    "sa",
    "te",
    "vo",
    "zi",
    "ba",
    "de",
    "fu",
    "gi",
    "ho",
    "ju",
    "ky",
    "pa",
    "qui",
    "re",
    "so",
    "tu",
    "va",
    "we",
    "xo",
    "ya",
]
_SYL_B = [
    "rn",
    "x",
    "lt",
    "nd",
    "sk",
    "mp",
    "rv",
    "th",
    "ck",
    "ng",
    "st",
    "ll",
    "rd",
    "nt",
    "sh",
    "ph",
    "tr",
    "gl",
    "br",
    "cr",
]
_SYL_C = ["a", "e", "i", "o", "u", "an", "en", "in", "on", "ar", "er", "or", "ix", "ex", "ax"]

STEP_TEMPLATES = [
    "Before you {verb} the {w1}, read the current {w2} and note what must not change.",
    "Confirm the {w1} format with a small sample first; {w2} and {w3} often differ from what the request implies.",
    "Keep a copy of the original {w1} (for example `{name}.bak`) until the {w2} is verified.",
    "Write the new {w1} to a temporary file, then rename it over the old one.",
    "Check every {w1} against the {w2} rules; report the ones that fail instead of dropping them.",
    "Use the {entity} conventions for {w1} names and {w2} values, as the team already does.",
    "State the {w1} and the {w2} you assumed in one line at the end of the answer.",
    "If the {w1} is larger than expected, process it in batches and log progress per {w2}.",
    "Run the {entity} check after the change and quote its output, not a paraphrase.",
    "Ask one short question when the {w1} is ambiguous; do not guess the {w2}.",
]
DESCRIPTION_TEMPLATES = [
    "When a task asks to {verb} {w1} or {w2} data in {entity}, follow these steps so the {w3} stays consistent.",
    "Use when working with the {entity} {w1} and its {w2}: {verb} before changing anything and keep the {w3} valid.",
    "Applies to requests that touch {w1} files, {w2} records or the {entity} {w3}; {verb} them the way {entity2} expects.",
    "When the user mentions {entity} together with {w1} or {w2}, {verb} the {w3} and report what changed.",
]


def _pseudo_words(rng: random.Random, n: int) -> list[str]:
    out: set[str] = set()
    while len(out) < n:
        w = rng.choice(_SYL_A) + rng.choice(_SYL_B) + rng.choice(_SYL_C)
        if rng.random() < 0.5:
            w += rng.choice(_SYL_A)
        out.add(w)
    return sorted(out)


class Vocabulary:
    """Common domain words plus a Zipf-weighted tail of made-up entity names."""

    def __init__(self, seed: int = 7, entities: int = 5000):
        self.rng = random.Random(seed)
        self.entities = _pseudo_words(random.Random(seed + 1), entities)
        # Zipf-like weights: entity k has weight 1/(k+1)^0.9.
        self._cum: list[float] = []
        total = 0.0
        for k in range(len(self.entities)):
            total += 1.0 / (k + 1) ** 0.9
            self._cum.append(total)

    def entity(self, rng: random.Random) -> str:
        import bisect

        x = rng.random() * self._cum[-1]
        return self.entities[min(bisect.bisect_left(self._cum, x), len(self.entities) - 1)]


def generate_skills(n: int, *, seed: int = 7, start: int = 0) -> Iterator[Skill]:
    """Yield ``n`` deterministic synthetic skills."""
    vocab = Vocabulary(seed)
    for i in range(start, start + n):
        rng = random.Random(seed * 1_000_003 + i)
        cat = CATEGORIES[i % len(CATEGORIES)]
        words = DOMAIN_WORDS[cat] + rng.sample(COMMON, 8)
        verb = rng.choice(VERBS)
        w = rng.sample(words, 3)
        ent, ent2 = vocab.entity(rng), vocab.entity(rng)
        name = f"{verb}-{w[0]}-{ent}-{i:06d}"[:64].strip("-")
        desc = rng.choice(DESCRIPTION_TEMPLATES).format(verb=verb, w1=w[0], w2=w[1], w3=w[2], entity=ent, entity2=ent2)
        steps = []
        for j, t in enumerate(rng.sample(STEP_TEMPLATES, 7), 1):
            a, b, c = rng.sample(words, 3)
            steps.append(f"{j}. " + t.format(verb=verb, w1=a, w2=b, w3=c, entity=rng.choice([ent, ent2]), name=a))
        title = f"# {verb.capitalize()} {w[0]} for {ent}"
        example = (
            f"**Example:** for `{ent}/{w[1]}.{rng.choice(['json', 'csv', 'yaml', 'md'])}`, "
            f"{verb} the {w[0]} first, then update the {w[2]} and say so in the reply."
        )
        body = "\n".join([title, "", *steps, "", example])
        yield Skill(
            name=name,
            description=desc,
            body=body,
            category=cat,
            origin="user",
            generation=0,
            status="active",
            created_at="2026-11-29T00:00:00Z",
        )


def write_library(
    dest: Path | str, n: int, *, seed: int = 7, include_builtin: bool = True, builtin_dir: Path | None = None
) -> dict[str, int]:
    """Write a library of ``n`` skills to ``dest``: the starter skills first (when asked), then synthetic ones.

    Plain writes (no fsync per file): this is scratch data for a benchmark, not the user's library.
    """
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    written = builtin = 0
    if include_builtin:
        from metaclaw_plugin.skillbank.bank import bundled_skills_dir

        src = builtin_dir or bundled_skills_dir()
        for d in sorted(Path(src).iterdir()):
            if written >= n:
                break
            md = d / "SKILL.md"
            if d.name.startswith(".") or not md.is_file():
                continue
            (dest / d.name).mkdir(exist_ok=True)
            shutil.copyfile(md, dest / d.name / "SKILL.md")
            written += 1
            builtin += 1
    for s in generate_skills(n - written, seed=seed):
        d = dest / s.name
        d.mkdir(exist_ok=True)
        (d / "SKILL.md").write_text(render_skill_md(s), "utf-8")
        written += 1
    return {"skills": written, "builtin": builtin, "synthetic": written - builtin}


def synthetic_queries(n: int, *, seed: int = 11) -> list[str]:
    """User requests phrased like real ones, mentioning the library's words and entity names."""
    vocab = Vocabulary(7)
    rng = random.Random(seed)
    forms = [
        "Please {verb} the {w1} in {entity} and update the {w2} afterwards.",
        "Can you {verb} all {w1} records from the {entity} export? Some of the {w2} look wrong.",
        "The {entity} {w1} failed again last night; {verb} it and tell me what happened to the {w2}.",
        "I need a quick {w1} summary for {entity}, with the {w2} and the {w3} for each item.",
    ]
    out = []
    for _ in range(n):
        cat = rng.choice(CATEGORIES)
        w = rng.sample(DOMAIN_WORDS[cat], 3)
        out.append(
            rng.choice(forms).format(verb=rng.choice(VERBS), w1=w[0], w2=w[1], w3=w[2], entity=vocab.entity(rng))
        )
    return out


def iter_names(skills: Iterable[Skill]) -> list[str]:
    return [s.name for s in skills]
