"""``bench memory --preset multisession``: the generated LoCoMo-shaped set, the scorer, the BM25 and recency
baselines, and the quick run through the real plugin (figures only: nothing here is timed)."""

from __future__ import annotations

import json
import re
from datetime import date, datetime
from pathlib import Path

import pytest

from metaclaw_bench import convgen
from metaclaw_bench import multisession as ms
from metaclaw_plugin.text import approx_tokens

SIZE = convgen.Size(conversations=3, sessions=(5, 7), turns=(10, 16))


@pytest.fixture(scope="module")
def generated() -> list[dict]:
    return convgen.generate(7, SIZE)


def test_the_generator_is_deterministic(generated: list[dict]) -> None:
    again = convgen.generate(7, SIZE)
    assert json.dumps(generated) == json.dumps(again)
    assert json.dumps(convgen.generate(8, SIZE)) != json.dumps(generated)
    # a sample does not depend on how many are asked for
    assert json.dumps(convgen.generate(7, convgen.Size(1, SIZE.sessions, SIZE.turns))[0]) == json.dumps(generated[0])


def test_the_generated_set_is_well_formed(generated: list[dict]) -> None:
    cats: set[int] = set()
    for raw in generated:
        conv = raw["conversation"]
        a, b = conv["speaker_a"], conv["speaker_b"]
        assert a != b
        numbers = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
        assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= SIZE.sessions[0]
        ids: dict[str, str] = {}
        last = datetime.min
        for n in numbers:
            when = ms.session_date(conv[f"session_{n}_date_time"])
            assert when is not None and when > last, conv[f"session_{n}_date_time"]
            last = when
            turns = conv[f"session_{n}"]
            assert len(turns) >= SIZE.turns[0]
            for k, t in enumerate(turns, 1):
                assert t["dia_id"] == f"D{n}:{k}" and t["speaker"] in (a, b) and t["text"].strip()
                assert "{" not in t["text"], t["text"]  # no template slot left unfilled
                ids[t["dia_id"]] = t["text"]
            assert {t["speaker"] for t in turns} == {a, b}
        samples = ms.load_samples([raw])
        turn_of = {t.dia_id: t for t in samples[0].turns}
        for q in raw["qa"]:
            cats.add(q["category"])
            assert q["question"].endswith("?") and "{" not in q["question"], q
            if q["category"] == convgen.ADVERSARIAL:
                assert "answer" not in q and q["adversarial_answer"] and q["evidence"] == [], q
                continue
            assert q["answer"] and q["evidence"], q
            assert all(e in ids for e in q["evidence"]), q
            # the answer is stated in its evidence turns (a temporal one resolves from the session's date)
            block = ms.Block.of("\n".join(turn_of[e].line for e in q["evidence"]))
            assert ms.answer_in_block(q["answer"], block, q["category"]), (q, [ids[e] for e in q["evidence"]])
            if q["category"] == convgen.MULTI_HOP:
                assert len({e.split(":")[0] for e in q["evidence"]}) == 2, q  # two facts from two sessions
        questions = [q["question"] for q in raw["qa"]]
        assert len(set(questions)) == len(questions)
    assert cats == {1, 2, 3, 4, 5}


def test_the_default_size_is_locomo_shaped() -> None:
    data = convgen.generate(0)
    assert len(data) == 10
    cats: dict[int, int] = {}
    for raw in data:
        for q in raw["qa"]:
            cats[q["category"]] = cats.get(q["category"], 0) + 1
    answerable = sum(v for c, v in cats.items() if c != convgen.ADVERSARIAL)
    assert 1300 <= answerable <= 1800, cats
    assert 0.2 <= cats[convgen.ADVERSARIAL] / (answerable + cats[convgen.ADVERSARIAL]) <= 0.35, cats
    assert cats[convgen.SINGLE_HOP] > cats[convgen.TEMPORAL] > cats[convgen.OPEN_DOMAIN] > 50, cats
    assert cats[convgen.MULTI_HOP] > 150, cats
    # wide pools: many names, many question shapes once names are masked
    names = {raw["conversation"][k] for raw in data for k in ("speaker_a", "speaker_b")}
    assert len(names) >= 15
    shapes = set()
    for raw in data:
        conv = raw["conversation"]
        for q in raw["qa"]:
            shapes.add(
                q["question"].replace(conv["speaker_a"], "X").replace(conv["speaker_b"], "X").split(" ")[:4].__str__()
            )
    assert len(shapes) >= 150


# Dates --------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("line", "token"),
    [
        ("- (said 2023-05-08) Ana: I went to the support group yesterday", "d20230507"),
        ("- (said 2023-05-08) Ana: the day before yesterday we hiked", "d20230506"),
        ("- (said 2023-05-08) Ana: three days ago I ran", "d20230505"),
        ("- (said 2023-05-08) Ana: last Saturday I baked", "d20230506"),  # 8 May 2023 is a Monday
        ("- (said 2023-05-08) Ana: last Monday I baked", "d20230501"),
        ("- (said 2023-05-08) Ana: this coming Friday I fly", "d20230512"),
        ("- (said 2023-05-08) Ana: this coming Monday I fly", "d20230515"),
        ("- (said 2023-05-08) Ana: in 2 days I fly", "d20230510"),
        ("- (said 2023-05-08) Ana: last month I moved", "m202304"),
        ("- (said 2023-01-08) Ana: last month I moved", "m202212"),
        ("- (said 2023-05-08) Ana: next month I move", "m202306"),
        ("- (said 2023-05-08) Ana: last year I moved", "2022"),
        ("- (said 2023-05-08) Ana: on the 3rd of May I moved", "d20230503"),
        ("- (said 2023-05-08) Ana: on May 3 I moved", "d20230503"),
        ("Ana said on 8 May, 2023 that she moved", "d20230508"),
        ("Ana moved on May 7th, 2023", "d20230507"),
        ("1:56 pm on 8 May, 2023", "d20230508"),
    ],
)
def test_dates_resolve_against_the_line_stamp(line: str, token: str) -> None:
    assert token in ms.line_terms(line)


def test_a_line_without_a_stamp_resolves_nothing() -> None:
    assert not any(t.startswith("d2") for t in ms.line_terms("Ana: I went there yesterday"))


def test_generated_relative_dates_agree_with_the_resolver() -> None:
    """The generator computes its answers with date arithmetic, the scorer with patterns: they must agree."""
    import random

    rng = random.Random(3)
    day = date(2023, 5, 8)
    for _ in range(300):
        for fn in (convgen.past_when, convgen.future_when):
            phrase, answer = fn(rng, day)
            block = ms.Block.of(f"- (said {day.isoformat()}) Ana: I did it {phrase}")
            assert ms.answer_in_block(answer, block, convgen.TEMPORAL), (phrase, answer, block.lines)


# The scorer -------------------------------------------------------------------------------------------------------------------
BLOCK = (
    "<metaclaw-memory>\nWhat this user told you in earlier sessions.\n"
    "- (said 2023-05-08) Caroline: I went to an LGBTQ support group yesterday, it was powerful.\n"
    "- (said 2023-05-09) Melanie: My sister Lena adopted a beagle named Pip!\n"
    "- (fact, said 2023-06-01) Caroline is researching adoption agencies\n"
    "</metaclaw-memory>"
)


def test_answer_in_block_hand_built() -> None:
    b = ms.Block.of(BLOCK)
    assert ms.answer_in_block("beagle", b)
    assert ms.answer_in_block("a Beagle.", b)  # case, article, punctuation
    assert ms.answer_in_block("Pip", b)
    assert ms.answer_in_block("adoption agency", b)  # plural vs singular (the stemmer)
    assert ms.answer_in_block("7 May 2023", b, convgen.TEMPORAL)  # "yesterday" on a line said 2023-05-08
    assert ms.answer_in_block("May 7, 2023", b, convgen.TEMPORAL)
    assert ms.answer_in_block("beagle, Pip", b, convgen.MULTI_HOP)  # a list: every part
    assert ms.answer_in_block("agencies; she wants a family", b, convgen.OPEN_DOMAIN)  # cut at ';' like LoCoMo
    # must score 0
    assert not ms.answer_in_block("poodle", b)
    assert not ms.answer_in_block("beagle, poodle", b, convgen.MULTI_HOP)
    assert not ms.answer_in_block("8 May 2023", b, convgen.TEMPORAL)  # the stamp day, not the day it happened
    assert not ms.answer_in_block("9 May 2023", b, convgen.TEMPORAL)  # a stamp alone is no answer unless it is
    assert not ms.answer_in_block("the week before 9 May 2023", b, convgen.TEMPORAL)  # "week" is on no such line
    assert not ms.answer_in_block("beagle", ms.Block.of(""))
    # a dated answer needs its words on one line
    split = ms.Block.of("- (said 2023-05-08) Ana: we did a charity run\n- Ana: last week was busy")
    assert not ms.answer_in_block("the week before 8 May 2023", split, convgen.TEMPORAL)
    one = ms.Block.of("- (said 2023-05-08) Ana: last week was busy")
    assert ms.answer_in_block("the week before 8 May 2023", one, convgen.TEMPORAL)


def test_evidence_coverage_threshold() -> None:
    b = ms.Block.of(BLOCK)
    assert ms.covered("My sister Lena adopted a beagle named Pip!", b)
    # 5 content words (sister, lena, adopt, poodle, fluffy), 3 present = 60%: covered; 2 of 5: not
    assert ms.covered("my sister Lena adopted a poodle fluffy", b)
    assert not ms.covered("my cousin Lena adopted a poodle fluffy", b)
    assert not ms.covered("I bought a kayak at Barlow Outfitters", b)
    assert not ms.covered("My sister Lena adopted a beagle named Pip!", ms.Block.of(""))


def _sample() -> ms.Sample:
    when1, when2 = datetime(2023, 5, 8, 13, 56), datetime(2023, 5, 20, 9, 0)
    t = [
        ms.Turn("D1:1", 1, "Ana", "I went hiking at Eagle Ridge yesterday.", when1),
        ms.Turn("D1:2", 1, "Bo", "Nice! My brother moved to Denver.", when1),
        ms.Turn("D2:1", 2, "Ana", "Weather has been awful.", when2),
        ms.Turn("D2:2", 2, "Bo", "I adopted a beagle named Pip.", when2),
    ]
    qs = [
        ms.Question("Where did Ana go hiking?", 4, "Eagle Ridge", ["D1:1"]),
        ms.Question("When did Ana go hiking?", 2, "7 May 2023", ["D1:1"]),
        ms.Question("What breed is Bo's dog, and where does his brother live?", 1, "beagle, Denver", ["D2:2", "D1:2"]),
        ms.Question("What is the name of Ana's cat?", 5, None, [], "Pip"),
    ]
    return ms.Sample("s1", ("Ana", "Bo"), [(1, when1, t[:2]), (2, when2, t[2:])], qs)


def test_score_aggregates_per_category() -> None:
    s = _sample()
    t = s.turns
    blocks = {
        "s1": [
            ms.pack([t[0].line], 300),  # single-hop: answer and evidence
            ms.pack([t[1].line], 300),  # temporal: wrong turn, scores 0
            ms.pack([t[3].line], 300),  # multi-hop: one of two evidence turns, no Denver
            "",  # unanswerable: no block
        ]
    }
    r = ms.score([s], blocks)
    cats = r["categories"]
    assert cats["single-hop"]["answer_in_block"] == 1.0 and cats["single-hop"]["evidence_recall"] == 1.0
    assert cats["temporal"]["answer_in_block"] == 0.0 and cats["temporal"]["evidence_recall"] == 0.0
    assert cats["multi-hop"]["answer_in_block"] == 0.0 and cats["multi-hop"]["evidence_recall"] == 0.5
    assert r["answerable"]["n"] == 3
    assert r["answerable"]["answer_in_block"] == round(1 / 3, 3)
    assert r["answerable"]["evidence_recall"] == 0.5  # (1 + 0 + 0.5) / 3
    assert r["answerable"]["evidence_turns_covered"] == 0.5  # 2 of 4 evidence turns
    assert r["unanswerable_block_rate"] == 0.0 and cats["adversarial"]["n"] == 1
    blocks["s1"][3] = ms.pack([t[2].line], 300)  # "Ana: Weather has been awful.": only the name is shared
    r = ms.score([s], blocks)
    assert r["unanswerable_block_rate"] == 1.0 and r["unanswerable_block_rate_beyond_names"] == 0.0
    blocks["s1"][3] = ms.pack([t[3].line], 300)  # "named" shares a word with "name"
    assert ms.score([s], blocks)["unanswerable_block_rate_beyond_names"] == 1.0


# Baselines --------------------------------------------------------------------------------------------------------------------
def test_bm25_ranks_and_packs_within_the_budget() -> None:
    s = _sample()
    turns = s.turns
    index = ms.BM25([x.fed for x in turns])
    assert index.ranked("Where did Ana go hiking?")[0] == 0
    assert index.ranked("Who adopted a beagle?")[0] == 3
    assert index.ranked("quantum chromodynamics") == []
    block = ms.bm25_block(index, turns, "beagle", 300)
    assert turns[3].line in block and turns[0].line not in block  # only turns sharing a word
    assert ms.bm25_block(index, turns, "quantum", 300) == ""
    assert approx_tokens(block) <= 300
    # a tight budget keeps the best turn only
    one = approx_tokens(f"{ms.OPEN}\n{ms.HEADER}\n{ms.CLOSE}") + approx_tokens(turns[0].line) + 1
    tight = ms.bm25_block(index, turns, "Ana hiking Eagle Ridge", one)
    assert turns[0].line in tight and tight.count("- (said") == 1


def test_recency_takes_the_newest_turns_that_fit() -> None:
    s = _sample()
    turns = s.turns
    full = ms.recency_block(turns, 300)
    assert all(x.line in full for x in turns)
    lines = [ln for ln in full.splitlines() if ln.startswith("- (")]
    assert lines[0] == turns[-1].line  # newest first
    head = approx_tokens(f"{ms.OPEN}\n{ms.HEADER}\n{ms.CLOSE}")
    two = head + approx_tokens(turns[3].line) + 1 + approx_tokens(turns[2].line) + 1
    part = ms.recency_block(turns, two)
    assert turns[3].line in part and turns[2].line in part and turns[0].line not in part
    assert approx_tokens(part) <= two + 2


def test_locomo_layout_quirks(tmp_path: Path) -> None:
    """The public file's shape: LoCoMo date strings, image captions, odd evidence ids, numeric answers, adversarial
    questions with evidence and no answer."""
    data = [
        {
            "sample_id": "conv-1",
            "conversation": {
                "speaker_a": "Caroline",
                "speaker_b": "Melanie",
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": [
                    {"speaker": "Caroline", "dia_id": "D1:1", "text": "I went to a support group yesterday."},
                    {
                        "speaker": "Melanie",
                        "dia_id": "D1:2",
                        "text": "Look at this!",
                        "img_url": ["http://example.invalid/x.jpg"],
                        "blip_caption": "a photo of a pottery bowl",
                    },
                ],
                "session_2_date_time": "10:37 am on 27 June, 2023",
                "session_2": [{"speaker": "Caroline", "dia_id": "D2:1", "text": "I have lived here since 2016."}],
            },
            "qa": [
                {
                    "question": "When did Caroline go to the group?",
                    "answer": "7 May 2023",
                    "evidence": ["D1:1"],
                    "category": 2,
                },
                {"question": "Since when?", "answer": 2016, "evidence": ["D2:1"], "category": 4},
                {"question": "What did Melanie make?", "answer": "a bowl", "evidence": ["D1:2; D2:01"], "category": 1},
                {
                    "question": "What did Caroline paint?",
                    "adversarial_answer": "a bowl",
                    "evidence": ["D1:2"],
                    "category": 5,
                },
            ],
        }
    ]
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(data))
    [s] = ms.load_locomo(path)
    assert [n for n, _, _ in s.sessions] == [1, 2] and s.sessions[0][1] == datetime(2023, 5, 8, 13, 56)
    assert s.turns[1].text.endswith("[shares a photo of a pottery bowl]")
    assert s.questions[1].answer == "2016"
    assert s.questions[2].evidence == ["D1:2", "D2:1"]
    assert s.questions[3].answer is None and s.questions[3].adversarial_answer == "a bowl"
    bm = ms.baseline_blocks([s], 300)["bm25"]["conv-1"]
    r = ms.score([s], {"conv-1": bm})
    assert r["categories"]["temporal"]["answer_in_block"] == 1.0  # "yesterday" said on 8 May 2023
    assert r["categories"]["multi-hop"]["answer_in_block"] == 1.0  # the caption counts as the turn's words
    assert r["categories"]["multi-hop"]["evidence_recall"] == 0.5  # D2:1 shares no word with the question
    assert r["evidence_ids_not_found"] == 0
    # the same file through the real plugin (what --locomo PATH runs)
    doc = ms.run(locomo=path, quick=True, n_memories=200, n_passages=0, requests=20)
    assert doc["source"] == f"locomo file {path}"
    assert doc["counts"] == {
        "conversations": 1,
        "sessions": 2,
        "turns": 3,
        "questions": {"multi-hop": 1, "temporal": 1, "single-hop": 1, "adversarial": 1},
        "answerable": 3,
        "undated_sessions": 0,
    }
    assert set(doc["arms"]) == {"plugin", "bm25", "recency"}
    assert doc["arms"]["bm25"]["categories"]["temporal"]["answer_in_block"] == 1.0


# End to end ---------------------------------------------------------------------------------------------------------------------
def test_quick_run_through_the_real_plugin(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from metaclaw_plugin.cli import main as cli_main

    res = CliRunner().invoke(
        cli_main,
        [
            "bench",
            "memory",
            "--preset",
            "multisession",
            "--quick",
            "--memories",
            "500",
            "--json",
            "--out",
            str(tmp_path),
        ],
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert (tmp_path / "memory-multisession.json").is_file() and (tmp_path / "memory-multisession.md").is_file()
    assert doc["preset"] == "multisession" and doc["counts"]["conversations"] == 2
    assert doc["budget_tokens"] == 300
    for arm in ("plugin", "bm25", "recency"):
        r = doc["arms"][arm]
        for cat in ("single-hop", "multi-hop", "temporal", "open-domain"):
            c = r["categories"][cat]
            assert c["n"] > 0 and 0 <= c["answer_in_block"] <= 1 and 0 <= c["evidence_recall"] <= 1
        assert 0 <= r["unanswerable_block_rate"] <= 1
        assert r["answerable"]["tokens_mean"] <= 300
        assert r["evidence_ids_not_found"] == 0
    # the baselines always give a block; BM25 finds far more evidence than the newest turns do
    assert doc["arms"]["recency"]["answerable"]["block_rate"] == 1.0
    assert (
        doc["arms"]["bm25"]["answerable"]["evidence_recall"] > doc["arms"]["recency"]["answerable"]["evidence_recall"]
    )
    assert doc["plugin"]["extractor"].startswith("rules")
    assert doc["plugin"]["learner_flushed"] is True
    lat = doc["latency"]
    assert lat["memories_per_user"] == 500 and lat["memory_section_p50_us"] > 0 and lat["memory_section_p99_us"] > 0
    assert "plugin against the targets" in (tmp_path / "memory-multisession.md").read_text()
