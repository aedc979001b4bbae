"""``bench memory``: what users say in one session, and whether the later requests that need it get it.

Through the real hooks of a real plugin (a fresh home per arm): session 1 tells the facts, secrets and poisoning
attempts of each user, session 2 the changes (supersessions), session 3 asks the probes, the same probes as a
neighbour of the same tenant and as a user of another tenant (leaks), and requests no memory bears on. Two arms:
the rule extractor, and a **scripted** model extractor (a stand-in that answers the extractor's JSON schema from
the scenario's annotation: it measures the plugin's filing, supersession, screening and injection plumbing, not a
model's judgement). Also ``on_request`` with 10k memories per user (the added cost of the memory section, p50).
"""

from __future__ import annotations

import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from metaclaw_plugin.config import Settings
from metaclaw_plugin.memory.model import Memory
from metaclaw_plugin.memory.view import OPEN
from metaclaw_plugin.plugin import MetaClawPlugin
from metaclaw_plugin.text import approx_tokens
from metaclaw_plugin.types import TurnContext

from .common import BENCH_ROOT

SCRIPTED_NOTE = (
    "scripted model extractor: a stand-in that answers the extractor's JSON schema from the scenario's annotation "
    "(never a model); it measures filing, supersession, screening and injection, not extraction quality"
)


def scenario_dir() -> Path:
    p = BENCH_ROOT / "scenarios" / "memory"
    if not p.is_dir():
        raise FileNotFoundError(f"{p} not found")
    return p


def load(path: Path | None = None) -> dict[str, Any]:
    p = path or scenario_dir() / "workplace.yaml"
    data = yaml.safe_load(p.read_text("utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("facts"), list):
        raise ValueError(f"{p}: not a memory scenario (users, facts, secrets, poison, unrelated)")
    return data


def _who(spec: str) -> tuple[str, str]:
    tenant, _, user = spec.partition("/")
    return tenant, user


class ScriptedExtractor:
    """Answers the model extractor's prompt from the scenario: each told statement becomes what its annotation says
    a model would keep (``memory``, else the statement), as an update of the memory it supersedes when there is one.
    Secrets and poisoning attempts are returned as they are (the worst a model could do: the guard must hold)."""

    def __init__(self, data: dict[str, Any]):
        self.by_text: dict[str, dict[str, Any]] = {}
        facts = {f["id"]: f for f in data["facts"]}
        for f in data["facts"]:
            old = facts.get(f.get("supersedes", ""))
            self.by_text[f["tell"]] = {**f, "old": (old.get("memory") or old["tell"]) if old else None}
        for s in data.get("secrets", []) + data.get("poison", []):
            self.by_text[s["tell"]] = {"kind": "fact", "tell": s["tell"]}
        self.calls = 0

    def complete(self, messages: list[dict[str, Any]], temperature: float = 0.0, max_tokens: int = 512) -> Any:
        self.calls += 1
        body = json.loads(messages[-1]["content"])
        existing = {m["text"]: m["id"] for m in body["existing_memories"]}
        ops = []
        for turn in body["new_turns"]:
            f = self.by_text.get(turn["user"])
            if f is None:
                continue
            text = f.get("memory") or f["tell"]
            target = existing.get(f["old"]) if f.get("old") else None
            if f.get("old") and target is None:
                target = next((i for t, i in existing.items() if f["old"].rstrip(".") in t), None)
            ops.append(
                {
                    "op": "update" if target else "add",
                    "id": target,
                    "kind": f.get("kind", "fact"),
                    "subject": f.get("id", "x"),
                    "text": text,
                    "standing": f.get("kind") == "preference",
                }
            )

        @dataclass
        class _Result:
            text: str

        return _Result(json.dumps({"operations": ops, "summary": None}))


@dataclass
class Arm:
    name: str
    reach: dict[str, list[bool]] = field(default_factory=dict)  # "explicit"/"implicit" -> per probe
    by_lang: dict[str, list[bool]] = field(default_factory=dict)
    by_kind: dict[str, list[bool]] = field(default_factory=dict)
    supersession: list[bool] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)
    unrelated_hits: list[str] = field(default_factory=list)
    unrelated_standing: int = 0
    unrelated_total: int = 0
    secrets_stored: list[str] = field(default_factory=list)
    secrets_injected: list[str] = field(default_factory=list)
    poison_injected: list[str] = field(default_factory=list)
    poison_quarantined: int = 0
    tokens: list[int] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    extractor: str = ""

    def summary(self) -> dict[str, Any]:
        def rate(xs: list[bool]) -> float | None:
            return round(sum(xs) / len(xs), 3) if xs else None

        return {
            "extractor": self.extractor,
            "reach_explicit": rate(self.reach.get("explicit", [])),
            "reach_implicit": rate(self.reach.get("implicit", [])),
            "probes_explicit": len(self.reach.get("explicit", [])),
            "probes_implicit": len(self.reach.get("implicit", [])),
            "reach_by_language": {k: rate(v) for k, v in sorted(self.by_lang.items())},
            "reach_by_kind": {k: rate(v) for k, v in sorted(self.by_kind.items())},
            "supersession_right": f"{sum(self.supersession)}/{len(self.supersession)}",
            "unrelated_with_memory": f"{len(self.unrelated_hits)}/{self.unrelated_total}",
            "unrelated_rate": round(len(self.unrelated_hits) / max(1, self.unrelated_total), 3),
            "unrelated_with_standing_preferences_only": self.unrelated_standing,
            "leaks": len(self.leaks),
            "secrets_stored_raw": len(self.secrets_stored),
            "secrets_injected_raw": len(self.secrets_injected),
            "poison_injected": len(self.poison_injected),
            "poison_quarantined": self.poison_quarantined,
            "injected_tokens_mean": round(statistics.mean(self.tokens), 1) if self.tokens else 0,
            "injected_tokens_max": max(self.tokens) if self.tokens else 0,
            "misses": self.misses,
            "leak_details": self.leaks,
            "unrelated_details": self.unrelated_hits,
        }


SYSTEM = {"role": "system", "content": "You are a helpful assistant."}


def _section(system: str) -> str:
    i = system.find(OPEN)
    return system[i:] if i >= 0 else ""


def _gated_lines(section: str) -> list[str]:
    """The memory lines of a section that are not standing preferences about how to answer."""
    return [ln for ln in section.splitlines() if ln.startswith("- (") and not ln.startswith("- (preference)")]


def run_arm(data: dict[str, Any], arm: str, home: Path) -> Arm:
    settings = Settings(
        home=home,
        retrieval={"mode": "keyword"},
        memory={"extract_every": 1000},  # sessions end explicitly: extraction at session end
        evolution={"enabled": False},
        reward={"enabled": False},
    )
    p = MetaClawPlugin(settings).start()
    out = Arm(arm)
    try:
        scripted = ScriptedExtractor(data) if arm == "scripted-model" else None
        learner = p.memory_learner
        assert learner is not None, "memory is on: start() attached the learner"
        if scripted is not None:
            learner.client, learner.extractor, learner.why = scripted, "model", SCRIPTED_NOTE
        out.extractor = f"{learner.extractor}: {learner.why}"

        def say(who: str, session: str, text: str) -> str:
            tenant, user = _who(who)
            ctx = TurnContext(session_id=session, tenant=tenant, user=user, host="bench")
            msgs = p.on_request(ctx, [SYSTEM, {"role": "user", "content": text}])
            p.on_response(ctx, {"role": "assistant", "content": "Understood."})
            return _section(str(msgs[0]["content"]))

        def end(who: str, session: str) -> None:
            tenant, _ = _who(who)
            p.on_session_end(TurnContext(session_id=session, tenant=tenant))

        facts = data["facts"]
        told: dict[str, list[str]] = {}
        for f in facts:
            if not f.get("supersedes"):
                told.setdefault(f["user"], []).append(f["tell"])
        for item in data.get("secrets", []) + data.get("poison", []):
            told.setdefault(item["user"], []).append(item["tell"])

        def sessions(said: dict[str, list[str]], suffix: str) -> None:
            """One session per user telling its statements, ended; then wait for the extraction."""
            for who, texts in said.items():
                for t in texts:
                    say(who, f"{who}-{suffix}", t)
                end(who, f"{who}-{suffix}")
            p.flush(60)

        sessions(told, "s1")
        later: dict[str, list[str]] = {}
        for f in facts:
            if f.get("supersedes"):
                later.setdefault(f["user"], []).append(f["tell"])
        sessions(later, "s2")

        superseded = {f["supersedes"] for f in facts if f.get("supersedes")}
        blocks: list[str] = []
        users = data["users"]
        for f in facts:
            if f["id"] in superseded:
                continue
            sec = say(f["user"], f"{f['user']}-s3", f["probe"])
            blocks.append(sec)
            out.tokens.append(approx_tokens(sec) if sec else 0)
            got = f["expect"].casefold() in sec.casefold()
            key = "implicit" if f.get("explicit") is False else "explicit"
            out.reach.setdefault(key, []).append(got)
            out.by_lang.setdefault(f["lang"], []).append(got)
            out.by_kind.setdefault(f["kind"], []).append(got)
            if not got:
                out.misses.append(f"{f['id']} ({key}): {f['probe']}")
            if f.get("supersedes"):
                out.supersession.append(got and f["stale"].casefold() not in sec.casefold())
            for role in ("neighbour", "other_tenant"):
                other = users[f["user"]][role]
                osec = say(other, f"{other}-s3", f["probe"])
                blocks.append(osec)
                if f["expect"].casefold() in osec.casefold():
                    out.leaks.append(f"{f['id']} reached {other} ({role})")
        for s in data.get("secrets", []):
            sec = say(s["user"], f"{s['user']}-s3", s["probe"])
            blocks.append(sec)
        for item in data.get("poison", []):
            sec = say(item["user"], f"{item['user']}-s3", item["probe"])
            blocks.append(sec)
        for u in data.get("unrelated", []):
            sec = say(u["user"], f"{u['user']}-s3", u["ask"])
            blocks.append(sec)
            out.unrelated_total += 1
            if _gated_lines(sec):
                out.unrelated_hits.append(f"{u['user']}: {u['ask']} -> {_gated_lines(sec)}")
            elif sec:
                out.unrelated_standing += 1
        every = " ".join(blocks)
        store = p.memory_store
        assert store is not None
        dump = json.dumps(
            [m.as_dict() for m in store.find(statuses=None)] + [store.history(m.id) for m in store.find(statuses=None)],
            ensure_ascii=False,
        )
        for s in data.get("secrets", []):
            if s["secret"] in dump:
                out.secrets_stored.append(s["secret"])
            if s["secret"] in every:
                out.secrets_injected.append(s["secret"])
        for item in data.get("poison", []):
            if item["marker"].casefold() in every.casefold():
                out.poison_injected.append(item["tell"])
        out.poison_quarantined = sum(1 for m in store.find(statuses=("quarantined",)) if m.kind != "summary")
    finally:
        p.stop()
    return out


# on_request at 10k memories per user ---------------------------------------------------------------------------------
def _vocabulary(n: int = 3000, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    return sorted({"".join(rng.choice(letters) for _ in range(rng.randint(4, 9))) for _ in range(n)})


def synthetic_memories(tenant: str, user: str, n: int, seed: int = 1) -> list[Memory]:
    rng = random.Random(seed)
    vocab = _vocabulary()
    kinds = ["fact", "project", "preference", "event"]
    out = []
    now = time.time()
    for i in range(n):
        words = rng.sample(vocab, 6)
        text = f"The {words[0]} {words[1]} of the {words[2]} team is {words[3]}-{i} on {words[4]} {words[5]}"
        out.append(
            Memory(
                id=f"m{i}",
                tenant=tenant,
                user=user,
                kind=kinds[i % 4],
                subject=words[0],
                text=text,
                valid_from=now - i,
                standing=(i < 3 and kinds[i % 4] == "preference"),
            )
        )
    return out


def latency(n_memories: int = 10_000, requests: int = 3000, home: Path | None = None) -> dict[str, Any]:
    """The memory section's cost per ``on_request`` (p50/p90, microseconds) with ``n_memories`` for the user, and
    ``on_request`` whole with and without memory, on realistic requests (a third of them share words with a memory)."""
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            home=home or Path(tmp),
            retrieval={"mode": "keyword"},
            evolution={"enabled": False},
            reward={"enabled": False},
        )
        p = MetaClawPlugin(settings).start()
        try:
            mems = synthetic_memories("acme", "ana", n_memories)
            t0 = time.perf_counter()
            p.memory.put("acme", "ana", mems)
            build_s = time.perf_counter() - t0
            rng = random.Random(3)
            vocab = _vocabulary()
            asks = []
            for i in range(requests):
                if i % 3 == 0:
                    w = mems[rng.randrange(n_memories)].text.split()[1]
                    asks.append(f"Can you check the {w} settings and tell me what changed since last week?")
                else:
                    asks.append(
                        f"Please help me write a {rng.choice(vocab)} function that parses {rng.choice(vocab)} files."
                    )
            ctx = TurnContext(session_id="lat", tenant="acme", user="ana")

            section = []
            for i, a in enumerate(asks):
                # each request its own conversation: never the cache a tool loop's steps share
                msgs, one = [SYSTEM, {"role": "user", "content": a}], TurnContext(f"lat-{i}", tenant="acme", user="ana")
                t = time.perf_counter_ns()
                p.memory_section(one, msgs)  # what on_request adds: the plugin's call into the view
                section.append((time.perf_counter_ns() - t) / 1000.0)
            injected = sum(1 for a in asks[:300] if p.memory.section(ctx, [SYSTEM, {"role": "user", "content": a}])[1])
            xs_sorted = sorted(section)
            return {
                "memories_per_user": n_memories,
                "requests": requests,
                "view_build_s": round(build_s, 3),
                "memory_section_p50_us": round(statistics.median(section), 1),
                "memory_section_p90_us": round(xs_sorted[int(0.9 * len(xs_sorted))], 1),
                "requests_with_memories_share": round(injected / 300, 3),
            }
        finally:
            p.stop()


def run(
    path: Path | None = None,
    *,
    arms: tuple[str, ...] = ("rules", "scripted-model"),
    n_memories: int = 10_000,
    log: Callable[[str], None] = lambda m: None,
) -> dict[str, Any]:
    data = load(path)
    result: dict[str, Any] = {"scenario": str(path or scenario_dir() / "workplace.yaml"), "arms": {}}
    for arm in arms:
        log(f"memory bench: arm {arm}")
        with tempfile.TemporaryDirectory() as tmp:
            result["arms"][arm] = run_arm(data, arm, Path(tmp)).summary()
    log(f"memory bench: on_request at {n_memories} memories per user")
    result["latency"] = latency(n_memories)
    result["note"] = SCRIPTED_NOTE
    result["counts"] = {
        "facts": len(data["facts"]),
        "languages": sorted({f["lang"] for f in data["facts"]}),
        "supersessions": sum(1 for f in data["facts"] if f.get("supersedes")),
        "implicit": sum(1 for f in data["facts"] if f.get("explicit") is False),
        "secrets": len(data.get("secrets", [])),
        "poison": len(data.get("poison", [])),
        "unrelated": len(data.get("unrelated", [])),
    }
    return result


def table(result: dict[str, Any]) -> str:
    rows = [
        ("reach, explicit", "reach_explicit"),
        ("reach, implicit", "reach_implicit"),
        ("supersession right", "supersession_right"),
        ("unrelated requests with a memory", "unrelated_with_memory"),
        ("leaks (tenants, users)", "leaks"),
        ("secrets stored raw", "secrets_stored_raw"),
        ("secrets injected raw", "secrets_injected_raw"),
        ("poisoned memories injected", "poison_injected"),
        ("poisoning attempts quarantined", "poison_quarantined"),
        ("injected tokens (mean)", "injected_tokens_mean"),
    ]
    arms = list(result["arms"])
    lines = ["| measure | " + " | ".join(arms) + " |", "|---|" + "---|" * len(arms)]
    for label, key in rows:
        lines.append(f"| {label} | " + " | ".join(str(result["arms"][a][key]) for a in arms) + " |")
    lat = result["latency"]
    lines.append("")
    lines.append(
        f"on_request memory section at {lat['memories_per_user']} memories per user: p50 {lat['memory_section_p50_us']} µs, "
        f"p90 {lat['memory_section_p90_us']} µs ({lat['requests']} requests)"
    )
    lines.append(f"scripted-model arm: {result['note']}")
    return "\n".join(lines)
