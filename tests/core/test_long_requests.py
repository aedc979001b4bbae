"""Retrieval on long, realistic agent requests (tests/data/long_requests.yaml), at the default thresholds.

Short hand-written queries never showed that a normalised keyword score punished long requests (file
names, fields, pasted logs): issue 21. Floors sit just under what was measured (keyword 0.791 / 0.042; hybrid
with wordllama and the agreement gate of issue 28 0.896 / 0.042, where MiniLM with the either-signal gate had
0.910 / 0.042 but gave 10% of short everyday chat a block; 67 related and 24 unrelated requests); ranking only, no
timing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from metaclaw_bench.retrieval import load_long_requests, long_quality
from metaclaw_plugin import Settings
from metaclaw_plugin.config import embeddings_missing
from metaclaw_plugin.skillbank import SkillBank, bundled_skills_dir
from metaclaw_plugin.skillbank.retrieve import SHORT_TERMS, in_another_language, is_long, tokenize


def measured(home: Path, mode: str) -> dict:
    bank = SkillBank(Settings(home=home, skills_dir=bundled_skills_dir(), retrieval={"mode": mode}))
    bank.refresh(force=True)
    assert bank.index_error is None
    return long_quality(bank)


def test_the_set_is_big_enough_and_labelled_with_real_skills():
    related, unrelated = load_long_requests()
    names = {p.name for p in bundled_skills_dir().iterdir() if (p / "SKILL.md").is_file()}
    assert len(related) >= 60 and len(unrelated) >= 20
    assert all(r["relevant"] and set(r["relevant"]) <= names for r in related)


def test_keyword_on_long_requests(home: Path):
    r = measured(home, "keyword")
    assert r["topk_hit_rate"] >= 0.77, r["misses"]  # measured 0.791; the 0.9 target needs hybrid
    assert r["unrelated_any_skill_rate"] <= 0.05
    assert r["injected_tokens_max"] <= Settings().injection.max_injected_tokens


@pytest.mark.skipif(embeddings_missing("wordllama") is not None, reason="needs wordllama")
def test_hybrid_on_long_requests(home: Path):
    r = measured(home, "hybrid")
    assert r["topk_hit_rate"] >= 0.92, r["misses"]  # measured 0.925 (62 of 67; 0.896 before the centroid admission)
    assert r["unrelated_any_skill_rate"] <= 0.05
    assert r["injected_tokens_max"] <= Settings().injection.max_injected_tokens


def test_auto_mode_is_resolved_at_load_and_says_why(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("METACLAW_RETRIEVAL__MODE", raising=False)
    missing = Settings(retrieval={"embedding_model": "no-such-model-package"}).retrieval
    assert missing.mode == "keyword" and "no-such-model-package" in missing.mode_reason
    auto = Settings().retrieval
    expected = "keyword" if embeddings_missing(auto.embedding_model) else "hybrid"
    assert auto.mode == expected and auto.mode_reason.startswith(f"auto: {expected}")
    explicit = Settings(retrieval={"mode": "embedding"}).retrieval
    assert explicit.mode == "embedding" and explicit.mode_reason == "set explicitly"


@pytest.mark.parametrize(
    "text",
    [
        "my laptop fan goes crazy when I run three astro dev servers at once, is that normal? M1 air, 8GB",
        "I'm thinking of raising my hourly rate for new projects from September. Is it better to tell existing "
        "clients right away or when their next project starts?",
        "Welche Konferenz passt besser für unser Paper, MIDL oder MICCAI? Deadline, Seitenlimit, Review-Modus und "
        "Reisekosten kurz vergleichen.",
        "¿Sabes si este año el plazo de la declaración de la renta empieza también en abril? Es para el calendario "
        "de la oficina.",
    ],
)
def test_a_short_question_is_chat_whatever_its_term_count(text: str):
    """A one-line question of 13-16 terms is chat (issue 44): on main it counted as work and got every inferred
    rule of its tenant."""
    assert len(set(tokenize(text))) > SHORT_TERMS and not is_long(text)


def test_work_stays_work_with_a_question_mark():
    data = (
        "Why does this fail?\n\n  Traceback (most recent call last):\n    File 'etl.py', line 3, in <module>\n"
        "    rows = load(path)\n  KeyError: 'customer_id'"
    )
    assert len(data) <= 200 and is_long(data)  # a question with pasted data is work
    assert is_long("Can you " + "refactor the importer in src/etl/load.py, split the parser, add tests " * 3 + "?")
    assert is_long(
        "Add a loyalty discount to checkout in src/checkout/loyalty.ts: customers with ten orders get five percent off, capped at 25 euros, with tests"
    )


@pytest.mark.parametrize(
    "text",
    [
        "Which fields of a report need a unit?\n\nA. mean_load\nB. host name\nC. peak_load\n\nAnswer with the letters.",
        "Which commit message follows our convention?\na) fix stuff\nb) PROJ-12: fix the retry loop",
        "Wie benennen wir Branches?\n1. feature/x\n2. x-feature",
    ],
)
def test_a_question_with_its_options_is_work(text: str):
    """A quiz on the work asks the user's rules however short its question (the public MetaClaw-Bench's 122
    multiple-choice rounds): an unmarked lesson reached the example's file round but not its quiz before."""
    assert len(text) <= 200 and is_long(text)
    assert not is_long("Should I take the train or the bus? Which is faster?")


def test_a_chance_function_word_does_not_make_english_another_language():
    """A short line in another language passes the hybrid gate on its words alone; one function word of another
    language in English text is chance ("e.g." has the Italian "e", "How do I" the Portuguese "do")."""
    assert not in_another_language("Invoice totals are sometimes a cent off, e.g. 0.1 + 0.2 shows 0.30000000000000004")
    assert not in_another_language("How do I say no to a meeting politely?")
    assert in_another_language("Hoe lang duurt het voordat een nieuwe website in Google staat?")
    assert in_another_language("¿Qué opinas de usar Holded para los clientes pequeños?")
    assert in_another_language("Wie viel kostet ein Kaffee in Wien?")
