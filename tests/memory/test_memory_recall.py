"""Recall of what users said (issue 41): passages of raw turns beside distilled memories, ranked together, gated by
how much of the request they cover, dated, with relative dates resolved, speakers of a transcript told apart; the
index appends without a reader seeing half of it, and merges its tail into its base."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from metaclaw_plugin import MetaClawPlugin, Settings, TurnContext
from metaclaw_plugin.memory import index as idx
from metaclaw_plugin.memory.dates import resolve, say_ts
from metaclaw_plugin.memory.index import Recall
from metaclaw_plugin.memory.model import Candidate, Memory
from metaclaw_plugin.memory.store import MemoryStore
from metaclaw_plugin.memory.text import request_terms
from metaclaw_plugin.memory.view import MemoryView, build_bucket, chunks, memory_doc, passage_docs, request_names
from metaclaw_plugin.store import open_database
from metaclaw_plugin.store.passages import Passage, PassageStore

DAY = 86_400.0
T0 = datetime(2023, 6, 9, 14, 0, tzinfo=UTC).timestamp()


ANIMALS = [
    "aardvark",
    "badger",
    "camel",
    "dingo",
    "eagle",
    "ferret",
    "gazelle",
    "heron",
    "ibis",
    "jackal",
    "koala",
    "lemur",
    "marmot",
    "newt",
    "ocelot",
    "panda",
    "quokka",
    "raven",
    "salmon",
    "tapir",
    "urchin",
    "vulture",
    "walrus",
    "yak",
    "zebra",
    "alpaca",
    "bison",
    "cobra",
    "dolphin",
    "egret",
]


def passage(i: int, text: str, at: float = T0, session: str = "s1", user: str = "ana") -> Passage:
    return Passage(f"p{i}", "acme", user, session, text, at)


def view_with(passages: list[Passage], memories: list[Memory] = ()) -> MemoryView:  # type: ignore[assignment]
    v = MemoryView(Settings(home=Path("/nonexistent")))
    v.put("acme", "ana", list(memories), passages)
    return v


def ask(v: MemoryView, text: str, user: str = "ana") -> str:
    sec, _ = v.section(TurnContext("q", tenant="acme", user=user), [{"role": "user", "content": text}])
    return sec


# Dates -------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("said", "means"),
    [
        ("I went hiking yesterday", "yesterday (8 June 2023)"),
        ("we moved last year", "last year (2022)"),
        ("I started painting last week", "last week (the week before 9 June 2023)"),
        ("three days ago I met her", "three days ago (6 June 2023)"),
        ("the race is next Sunday", "next Sunday (the Sunday after 9 June 2023, 11 June 2023)"),
        ("hier je suis allé au parc", "hier (8 June 2023)"),
        ("ayer fui al cine", "ayer (8 June 2023)"),
        ("ontem fui ao cinema", "ontem (8 June 2023)"),
        ("我昨天去了公园", "昨天 (8 June 2023)"),
        ("last month was busy", "last month (May 2023)"),
        # forms a public conversation set uses (T0 is 9 June 2023, a Friday)
        ("we went camping two weekends ago", "two weekends ago (2 weekends before 9 June 2023)"),
        ("the week before last I was in Rome", "the week before last (2 weeks before 9 June 2023)"),
        ("last summer we went to Crete", "last summer (summer 2022)"),
        ("last winter was cold", "last winter (winter 2022)"),
        ("Last Fri I took my kids to a pottery workshop", "Last Fri (the Friday before 9 June 2023, 2 June 2023)"),
        ("I joined the group last Tues", "last Tues (the Tuesday before 9 June 2023, 6 June 2023)"),
        ("next summer we'll go back", "next summer (summer 2024)"),  # this one began on 1 June
    ],
)
def test_a_relative_date_is_resolved_against_the_day_it_was_said(said: str, means: str) -> None:
    assert means in resolve(said, T0)


def test_words_that_hold_a_date_word_are_left_alone_and_a_resolved_date_is_not_resolved_twice() -> None:
    for text in ("my layer cake", "the player scored", "Today's weather", "the last sun rays", "who last sat there"):
        assert resolve(text, T0) == text
    once = resolve("I went yesterday", T0)
    assert resolve(once, T0) == once


# The index --------------------------------------------------------------------------------------------------------
def test_a_request_about_something_never_said_gets_nothing() -> None:
    v = view_with(
        [passage(1, "I adopted a greyhound named Pickle last spring."), passage(2, "We repainted the porch.")]
    )
    assert "Pickle" in ask(v, "What is my greyhound called?")
    for unrelated in ("What is the capital of Kenya?", "Write a haiku about snow.", "Explain gravity to a child."):
        assert ask(v, unrelated) == "", unrelated


def test_stop_words_joined_by_a_hyphen_or_an_apostrophe_are_no_topic() -> None:
    """ "Où est-ce que je travaille ?" was about "estc", a word never said, which outweighed "travaille": the note
    that answers it was gated out."""
    assert request_terms("Où est-ce que je travaille ?") == request_terms("Où je travaille ?")
    assert request_terms("Qu'est-ce que c'est ?") == frozenset()
    assert {"shirt", "pgstag"} <= request_terms("the t-shirt on pg-stage-07")  # not all stop words: kept
    v = view_with([passage(1, "Je travaille chez Decathlon à Lille.")])
    assert "Decathlon" in ask(v, "Où est-ce que je travaille ?")


def test_a_weak_word_is_the_topic_of_a_request_that_has_no_other() -> None:
    """ "work", "time", "file" are too common to make a note relevant beside another word, but "Where do I work?" is
    about work: it found nothing before."""
    v = view_with([passage(1, "I work at Decathlon in Lille."), passage(2, "We repainted the porch.")])
    assert "Decathlon" in ask(v, "Where do I work?")
    assert ask(v, "How do I write a file in Python?") == ""  # two weak words, neither said: still nothing
    assert "Decathlon" not in ask(v, "What colour did we paint the porch at work?")  # "porch" carries it


def test_each_line_is_dated_and_a_relative_date_in_it_resolved() -> None:
    v = view_with([passage(1, "I went to a pottery class yesterday.", at=T0)])
    block = ask(v, "When did I go to the pottery class?")
    assert f"- [{say_ts(T0)}] I went to a pottery class yesterday (8 June 2023)." in block


def test_a_long_turn_is_kept_in_sentence_pieces_and_only_the_piece_that_matters_is_shown() -> None:
    filler = " ".join(f"Sentence {i} is about the weather and nothing else." for i in range(30))
    v = view_with([passage(1, f"{filler} My locker combination is on a card in the blue folder. {filler}")])
    block = ask(v, "Where did I put the card with my locker combination?")
    assert "blue folder" in block and len(block) < 900  # one piece, not the whole turn


def test_transcript_speakers_are_told_apart() -> None:
    v = view_with(
        [
            passage(1, "Melanie: I ran a charity race for mental health last Saturday."),
            passage(2, "Caroline: I went to a support group yesterday."),
            passage(3, "Melanie: Caroline and I talked about the charity race again."),
        ]
    )
    assert "charity race for mental health" in ask(v, "What did Melanie run last Saturday?")
    caroline = ask(v, "What did Caroline do at the charity race?")
    assert "charity race for mental health" not in caroline  # Melanie's line, about Melanie
    assert "Caroline and I talked about the charity race" in caroline  # another's line that names her
    assert sorted(request_names("When did Caroline see Melanie's dog?", {"caroli", "melani"})) == ["caroli", "melani"]


def test_a_question_about_one_speaker_on_what_only_the_other_did_gets_no_block() -> None:
    """LoCoMo's adversarial form: a question whose speaker is swapped. Caroline's own lines share a word with it, but
    the words are Melanie's: nothing of Caroline's answers it. Asked of Melanie, it is answered."""
    v = view_with(
        [
            passage(1, "Melanie: I ran a charity race for mental health last Saturday, my legs still hurt."),
            passage(2, "Caroline: Mental health matters so much to me, I went to a support group yesterday."),
            passage(3, "Caroline: I painted a sunset over the lake last weekend."),
        ]
    )
    assert ask(v, "How did Caroline do in the charity race for mental health?") == ""
    assert "charity race" in ask(v, "How did Melanie do in the charity race for mental health?")
    assert "support group" in ask(v, "What did Caroline do for her mental health?")  # her own words answer it


def test_once_a_line_answers_the_budget_left_goes_to_the_next_closest_and_never_to_a_name_alone() -> None:
    """A two-part question: the first part passes the gate, the second part's line holds less of the question and
    comes in after it; a line sharing only the speaker's name ("Caroline: ...") does not."""
    v = view_with(
        [
            passage(1, "Caroline: My sister Maya finally adopted a rescue greyhound from the shelter in Oakland."),
            passage(2, "Caroline: Maya says the greyhound sleeps most of the day."),
            passage(3, "Caroline: I repainted the kitchen in a pale blue."),
            passage(4, "Caroline: She started as a nurse at a hospital in Portland last spring."),
        ]
    )
    block = ask(v, "Where did Caroline's sister adopt her rescue greyhound from, and which hospital hired her?")
    assert "shelter in Oakland" in block and "hospital in Portland" in block
    assert "kitchen" not in block
    assert ask(v, "What colour did Caroline paint her car?") == ""  # nothing answers it: no block at all


def test_every_statement_of_a_transcript_line_keeps_its_speaker() -> None:
    """ "Femi: Oh! my stepbrother lives in Bangalore." is two sentences: the memory of the second is Femi's too, and
    one speaker's "my brother moved" never supersedes the other's."""
    from metaclaw_plugin.learning.memory import rules

    (femi,) = rules.extract("Femi: Oh! My stepbrother Zeynep lives in Bangalore now.")
    (una,) = rules.extract("Una: Wow. My stepbrother Zeynep lives in Bangalore now.")
    assert isinstance(femi, Candidate) and isinstance(una, Candidate)
    assert femi.text.startswith("Femi: ") and una.text.startswith("Una: ")
    assert femi.subject != una.subject
    assert rules.extract("My stepbrother Zeynep lives in Bangalore now.")[0].text.startswith("My stepbrother")


def test_a_distilled_memory_and_a_passage_rank_together_and_the_same_words_go_in_once() -> None:
    m = Memory(
        id="m1", tenant="acme", user="ana", kind="fact", subject="dog", text="I adopted a greyhound named Pickle."
    )
    v = view_with([passage(1, "I adopted a greyhound named Pickle.")], [m])
    block = ask(v, "What is my greyhound called?")
    assert block.count("greyhound named Pickle") == 1 and "(fact)" in block


def test_the_index_appends_without_a_reader_seeing_half_of_it_and_merges_its_tail(monkeypatch) -> None:
    monkeypatch.setattr(idx, "TAIL_MAX", 8)
    monkeypatch.setattr(idx, "FRESH_MAX", 3)
    recall = Recall()
    for i in range(30):
        docs = passage_docs(passage(i, f"Note number {i}: the project {ANIMALS[i]} ships on Friday."))
        new = recall.appended(docs)
        assert recall.size == i and new.size == i + 1  # the old index is unchanged: a reader holding it is unaffected
        recall = new
    assert recall.base.n >= 24 and recall.tail.n <= 8 and recall.fresh.n <= 3  # merged at least three times
    hits = recall.search(sorted(request_terms(f"Which project is {ANIMALS[17]}?")), 5, time.time()).hits
    assert hits[0].doc.source == "p17"


def test_which_hits_hold_a_word_is_read_from_the_postings_across_segments(monkeypatch) -> None:
    """Memories, the base, the tail and the fresh segment are numbered as one: a hit from any of them holds a word
    exactly when its line does."""
    monkeypatch.setattr(idx, "TAIL_MAX", 8)
    monkeypatch.setattr(idx, "FRESH_MAX", 5)
    lena = Memory(
        id="m1", tenant="acme", user="ana", kind="fact", subject="sister", text="My sister Lena lives in Oslo"
    )
    recall = Recall().with_memories([memory_doc(lena)])
    for i in range(20):
        recall = recall.appended(passage_docs(passage(i, f"My sister {ANIMALS[i % 7]} note {i} lives near the {i}.")))
    assert recall.memories.n and recall.base.n and recall.tail.n and recall.fresh.n
    hits = recall.search(sorted(request_terms("Where does my sister live?")), 40, time.time()).hits
    assert len(hits) == 21
    for word in ("oslo", "lena", "sister", "never-said"):
        held = recall.holding(hits, word).tolist()
        assert held == [word in h.doc.line.casefold() for h in hits]


def test_merging_two_segments_is_building_one_over_both() -> None:
    """The tail grows by merging postings (no words read again): the result equals a segment built at once, the
    speakers' numbering included."""
    import numpy as np

    def doc(i: int, speaker: str | None) -> idx.Doc:
        return idx.Doc(
            f"d{i}", f"p{i}", "passage", f"{speaker or 'I'}: the {ANIMALS[i % 7]} pen {i}", 5, T0 + i, speaker=speaker
        )

    docs = [doc(i, [None, "mel", "car", "mel", None, "bob"][i % 6]) for i in range(23)]
    terms = [idx.memory_terms_list(d.line) for d in docs]
    whole = idx.build_segment(docs, terms)
    for cut in (0, 1, 9, 22, 23):
        merged = idx.merge_segments(
            idx.build_segment(docs[:cut], terms[:cut]), idx.build_segment(docs[cut:], terms[cut:])
        )
        assert merged.docs == whole.docs and merged.total == whole.total
        assert merged.speaker_ids == whole.speaker_ids and merged.speaker_of.tolist() == whole.speaker_of.tolist()
        assert np.array_equal(merged.lengths, whole.lengths) and np.array_equal(merged.said_at, whole.said_at)
        assert np.array_equal(merged.boosts, whole.boosts) and np.array_equal(merged.expires, whole.expires)
        assert merged.postings.keys() == whole.postings.keys()
        for t, (ids, tf) in whole.postings.items():
            assert merged.postings[t][0].tolist() == ids.tolist() and merged.postings[t][1].tolist() == tf.tolist()
            assert merged.postings[t][0].dtype == np.int32


def test_chunks_keep_whole_sentences_and_cut_a_long_one_at_a_space() -> None:
    text = "Short one. " + "word " * 200 + "end."
    parts = chunks(text, 120)
    assert parts[0].startswith("Short one.") and all(len(p) <= 120 for p in parts)
    assert " ".join(parts).split() == text.split()


def test_a_bucket_of_passages_only_still_serves() -> None:
    b = build_bucket([], [passage(1, "I keep my bike in the shed behind the garage.")])
    assert b.recall.size == 1 and not b.standing


# Through the plugin ------------------------------------------------------------------------------------------------
def test_what_a_user_said_reaches_their_next_conversation_dated_by_when_it_happened(home: Path) -> None:
    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        then = T0 - 40 * DAY
        ctx = TurnContext("old", tenant="acme", user="ana", started_at=then)
        p.on_request(ctx, [{"role": "user", "content": "My sister Lucia got a job at the aquarium yesterday."}])
        p.on_response(ctx, {"role": "assistant", "content": "Congratulations to her!"})
        assert p.flush(30)
        q = TurnContext("new", tenant="acme", user="ana")
        out = p.on_request(q, [{"role": "user", "content": "Where does my sister Lucia work now?"}])
        block = out[0]["content"]
        assert f"[{say_ts(then)}]" in block and "aquarium" in block
        assert f"yesterday ({say_ts(then - DAY)})" in block
        other = TurnContext("new2", tenant="acme", user="ben")
        assert "aquarium" not in str(p.on_request(other, [{"role": "user", "content": "Where does Lucia work?"}]))
        stored = p.passages.find("acme", "ana")  # type: ignore[union-attr]
        assert [s.at for s in stored] == [then]
    finally:
        p.stop()


def test_a_passage_never_keeps_a_question_or_a_credential_statement(home: Path) -> None:
    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        ctx = TurnContext("s", tenant="acme", user="ana")
        text = "Can you check the logs? My wifi password is sunflower88. I moved the router to the attic."
        p.on_request(ctx, [{"role": "user", "content": text}])
        p.on_response(ctx, {"role": "assistant", "content": "ok"})
        assert p.flush(30)
        (kept,) = p.passages.find("acme", "ana")  # type: ignore[union-attr]
        assert kept.text == "I moved the router to the attic."
        db = (home / "metaclaw.db").read_bytes()
        assert b"sunflower88" not in db
    finally:
        p.stop()


def test_forgetting_takes_the_users_own_words_out_of_recall_too(home: Path) -> None:
    p = MetaClawPlugin(Settings(home=home)).start()
    try:

        def say(sid: str, text: str) -> str:
            ctx = TurnContext(sid, tenant="acme", user="ana")
            out = p.on_request(ctx, [{"role": "user", "content": text}])
            p.on_response(ctx, {"role": "assistant", "content": "Noted."})
            return str(out[0]["content"])

        say("s1", "My cousin Bruno lives in Porto and restores old boats.")
        p.on_session_end(TurnContext("s1", tenant="acme"))
        assert p.flush(30)
        assert "Porto" in say("s2", "Plan a visit to my cousin Bruno.")
        say("s2", "Forget that my cousin Bruno lives in Porto.")
        p.on_session_end(TurnContext("s2", tenant="acme"))
        assert p.flush(30)
        assert "Porto" not in say("s3", "Plan a visit to my cousin Bruno.")
        assert all("Porto" not in x.text for x in p.passages.find("acme", "ana", statuses=None))  # type: ignore[union-attr]
    finally:
        p.stop()


def test_past_the_bound_the_oldest_sessions_become_digests(home: Path) -> None:
    p = MetaClawPlugin(Settings(home=home, memory={"passages_max": 100})).start()
    try:
        learner = p.memory_learner
        assert learner is not None
        from metaclaw_plugin.learning.memory import learner as mod

        mod_every = mod.BOUND_EVERY
        mod.BOUND_EVERY = 50
        try:
            for i in range(160):
                ctx = TurnContext(f"s{i // 20}", tenant="acme", user="ana", started_at=T0 + i * 60)
                p.on_request(ctx, [{"role": "user", "content": f"Entry {i}: the kiln{i} reached its temperature."}])
                p.on_response(ctx, {"role": "assistant", "content": "ok"})
            assert p.flush(60)
        finally:
            mod.BOUND_EVERY = mod_every
        turns = p.passages.find("acme", "ana", kinds=("turn",))  # type: ignore[union-attr]
        digests = p.passages.find("acme", "ana", kinds=("digest",))  # type: ignore[union-attr]
        assert len(turns) <= 100 + 50 and digests  # bounded, looked at every 50 passages
        assert all(d.text.startswith("Entry 0:") or d.text.startswith("Entry ") for d in digests)
        assert "kiln3" in ask_plugin(p, "Did the kiln3 reach its temperature?")  # folded, still recallable
    finally:
        p.stop()


def ask_plugin(p: MetaClawPlugin, text: str) -> str:
    out = p.on_request(TurnContext("ask", tenant="acme", user="ana"), [{"role": "user", "content": text}])
    return str(out[0]["content"])


def tell(p: MetaClawPlugin, session: str, text: str) -> None:
    """``ana`` of ``acme`` says ``text`` in ``session``, gets "Noted.", and the plugin's threads finish with it."""
    ctx = TurnContext(session, tenant="acme", user="ana")
    p.on_request(ctx, [{"role": "user", "content": text}])
    p.on_response(ctx, {"role": "assistant", "content": "Noted."})
    assert p.flush(30)


def test_what_was_said_earlier_in_the_same_conversation_is_not_echoed_back(home: Path) -> None:
    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        tell(p, "conv", "The staging database is called stagedb-41.")
        ask = [{"role": "user", "content": "Which staging database is it?"}]
        same = p.on_request(TurnContext("conv", tenant="acme", user="ana"), ask)
        assert "stagedb-41" not in str(same[0]["content"])  # the conversation holds it already
        other = p.on_request(TurnContext("next", tenant="acme", user="ana"), ask)
        assert "stagedb-41" in str(other[0]["content"])  # the next conversation gets it
    finally:
        p.stop()


def test_a_change_replayed_from_the_past_keeps_the_new_statement_and_closes_the_old(home: Path) -> None:
    """Passages closed by a supersession are the ones said up to the old statement, by when they were said (an
    import or a replay files everything today: the new statement's own words must stay)."""
    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        for i, (sid, text) in enumerate(
            [("s1", "The team stand-up is at 9:00."), ("s2", "The team stand-up is at 9:30 now.")]
        ):
            ctx = TurnContext(sid, tenant="acme", user="ana", started_at=T0 - (40 - 10 * i) * DAY)
            p.on_request(ctx, [{"role": "user", "content": text}])
            p.on_response(ctx, {"role": "assistant", "content": "Noted."})
            p.on_session_end(TurnContext(sid, tenant="acme"))
            assert p.flush(30)
        status = {x.text: x.status for x in p.passages.find("acme", "ana", statuses=None)}  # type: ignore[union-attr]
        assert status == {"The team stand-up is at 9:00.": "superseded", "The team stand-up is at 9:30 now.": "active"}
    finally:
        p.stop()


def test_a_passage_written_while_the_view_reads_comes_in_once(home: Path) -> None:
    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        store, passages = p.memory_store, p.passages
        assert store is not None and passages is not None
        passages.add([passage(0, "My kayak is red.")])
        find, wrote = passages.find, []

        def find_while_writing(*a, **k):  # another thread's write lands between the view's rev and its read
            if not wrote:
                wrote.append(passages.add([passage(len(wrote) + 1, "My canoe is green.", at=T0 + 1)]))
            return find(*a, **k)

        view = MemoryView(p.settings)
        passages.find = find_while_writing  # type: ignore[method-assign]
        view.refresh(store, passages)
        passages.find = find  # type: ignore[method-assign]
        passages.add([passage(9, "My paddle is blue.", at=T0 + 2)])
        view.refresh(store, passages)
        assert view.counts()["passage_chunks"] == 3 == len(passages.find("acme", "ana"))
        assert ask(view, "What colour is my canoe?").count("canoe is green") == 1
    finally:
        p.stop()


def test_each_passage_is_read_into_the_view_once_a_quarantined_one_never(home: Path, monkeypatch) -> None:
    """Issue 44: a quarantined turn (one in 60 of a chat's) rebuilt its user's whole index, every passage tokenized
    again. Counted, not timed: the view reads each active passage once, whatever is quarantined among them."""
    import metaclaw_plugin.memory.view as view_mod

    read: list[str] = []
    real = view_mod.passage_docs

    def counted(x: Passage, context: str = "") -> list[Any]:
        read.append(x.id)
        return real(x, context)

    monkeypatch.setattr(view_mod, "passage_docs", counted)
    settings = Settings(home=home)
    store = MemoryStore(open_database(settings))
    passages = PassageStore(store.db)
    try:
        view = MemoryView(settings)
        view.refresh(store, passages)
        for i in range(60):
            x = passage(i, f"The {ANIMALS[i % 30]} pen {i} was cleaned on Friday.", at=T0 + i)
            if i % 6 == 5:
                x.status = "quarantined"
            passages.add([x])
            view.refresh(store, passages)
        active = [x.id for x in passages.find("acme", "ana")]
        assert len(active) == 50 and sorted(read) == sorted(active)  # each once, none quarantined
        assert "ferret" not in ask(view, "When was the ferret pen cleaned?")  # p5 and p35: quarantined
        assert "eagle pen" in ask(view, "When was the eagle pen cleaned?")
        # a passage taken out still rebuilds the user's index: its words go
        passages.close("acme", "ana", ["p7", "p37"], "forgotten")
        read.clear()
        view.refresh(store, passages)
        assert len(read) == 48 and "heron" not in ask(view, "When was the heron pen cleaned?")
        with pytest.raises(ValueError):
            passages.close("acme", "ana", ["p8"], "quarantined")
    finally:
        store.db.close()


def test_which_notes_a_request_gets_does_not_depend_on_how_the_index_is_split(monkeypatch) -> None:
    """Many lines tie (a greeting said every session): the cut among them follows the final order, whichever
    segment each sits in."""
    said = [
        passage(i, f"Morning! Long day at the {ANIMALS[i % 5]} enclosure again.", at=T0 + i * DAY) for i in range(40)
    ]
    one = Recall().appended([d for x in said for d in passage_docs(x)])
    monkeypatch.setattr(idx, "TAIL_MAX", 6)
    monkeypatch.setattr(idx, "FRESH_MAX", 2)
    split = Recall()
    for x in said:
        split = split.appended(passage_docs(x))
    assert split.base.n and split.tail.n and split.fresh.n  # really split
    words = sorted(request_terms("How was the day at the enclosure?"))
    a = one.search(words, 6, time.time()).hits
    b = split.search(words, 6, time.time()).hits
    assert [h.doc.key for h in a] == [h.doc.key for h in b]
    assert [h.doc.source for h in a] == [f"p{i}" for i in range(39, 33, -1)]  # the latest said first


def test_an_expired_note_takes_no_candidates_place() -> None:
    """Notes that have expired match the request best, but the live one behind them still comes back: the index
    leaves out what has expired before it keeps the best few, not after."""
    gone = [
        Memory(
            id=f"old{i}",
            tenant="acme",
            user="ana",
            kind="event",
            subject=f"trip{i}",
            text=f"My {ANIMALS[i]} trip to the marsh is booked for the heron festival.",
            expires_at=T0,
        )
        for i in range(12)
    ]
    live = Memory(id="live", tenant="acme", user="ana", kind="fact", subject="marsh", text="The marsh is far.")
    recall = Recall().with_memories([memory_doc(m) for m in [*gone, live]])
    hits = recall.search(sorted(request_terms("When is the heron festival at the marsh?")), 5, T0 + DAY).hits
    assert [h.doc.source for h in hits] == ["live"]


def test_a_tool_loop_keeps_its_request_once_and_renders_its_section_once(home: Path) -> None:
    """Each step of an agent's tool loop sends the same user message to the same conversation: it is one passage,
    not one a step (the same words screened and indexed again, crowding the user's bound), and while the user's
    notes are unchanged the steps get the section rendered for the first."""
    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        tell(p, "earlier", "The staging runbook lives in ops/runbooks/staging.md.")
        ask = "I moved the staging database to the eu-west cluster last week; update the staging runbook to match."
        msgs: list[dict[str, Any]] = [{"role": "user", "content": ask}]
        sections = []
        for step in range(4):
            ctx = TurnContext("loop", tenant="acme", user="ana")
            sections.append(p.on_request(ctx, list(msgs))[0]["content"])
            call = {"id": f"c{step}", "type": "function", "function": {"name": "read", "arguments": "{}"}}
            reply = {"role": "assistant", "content": None, "tool_calls": [call]}
            p.on_response(ctx, reply)
            msgs += [reply, {"role": "tool", "tool_call_id": f"c{step}", "content": f"contents {step}"}]
            assert p.flush(30)
        kept = p.passages.find("acme", "ana")  # type: ignore[union-attr]
        assert sorted(k.text for k in kept) == sorted([ask, "The staging runbook lives in ops/runbooks/staging.md."])
        assert all("ops/runbooks/staging.md" in s for s in sections)
        view = p.memory
        before = dict(view._sections)
        p.on_request(TurnContext("loop", tenant="acme", user="ana"), list(msgs))
        assert dict(view._sections) == before  # the step was served from the cache: nothing rendered anew
        # a change to the user's notes is a new version: the next step renders again, and sees it
        tell(p, "other", "The staging runbook moved to docs/ops/staging-runbook.md.")
        again = p.on_request(TurnContext("loop", tenant="acme", user="ana"), list(msgs))[0]["content"]
        assert "docs/ops/staging-runbook.md" in again and len(view._sections) > len(before)
    finally:
        p.stop()


# Real conversations (public LoCoMo, read after the generated set) -------------------------------------------------
def test_a_reply_ranks_by_the_turn_it_answers_but_is_never_found_by_it_alone() -> None:
    """A reply is ranked by the words of the turn before it in its session ("Seven years now" after "How long have
    you been doing pottery?"): of two lines the request's own words find equally, the one answering a turn about it
    comes first. Words only the turn before holds find nothing ("Agreed!" after a question about pottery)."""
    lines = [
        passage(1, "Gina: When are you opening the studio?", at=T0, session="s1"),
        passage(2, "Jon: The official opening is tomorrow, can't wait!", at=T0 + 1, session="s1"),
        passage(3, "Gina: How was the bakery this week?", at=T0 + 2, session="s2"),
        passage(4, "Jon: The official opening is tomorrow, can't wait!", at=T0 + 3, session="s2"),
        passage(5, "Gina: Do you still do pottery?", at=T0 + 4, session="s3"),
        passage(6, "Jon: Agreed!", at=T0 + 5, session="s3"),
    ]
    v = view_with(lines)
    b = v.buckets[("acme", "ana")]
    from metaclaw_plugin.memory.text import request_terms

    found = b.recall.search(sorted(request_terms("When is Jon's studio opening?")), 10, T0 + 10).hits
    keys = [h.doc.key for h in found]
    assert keys.index("p2#0") < keys.index("p4#0")  # the same words, the first answers a turn about the studio
    pottery = b.recall.search(sorted(request_terms("Does Jon do pottery?")), 10, T0 + 10, ["jon"]).hits
    agreed = [h for h in pottery if h.doc.key == "p6#0"]  # found by its label, "Jon", alone
    assert all(h.matched == 0 for h in agreed)  # "pottery", its context's word, is no word of its own
    assert "Agreed" not in ask(v, "Does Jon do pottery?")


def test_what_one_speaker_tells_another_is_never_a_standing_preference() -> None:
    """A transcript's "Gina: Never give up!" was filed as a standing preference and went into every request of the
    user (24 of 24 unanswerable questions of a public conversation got a block). Said between speakers, an imperative
    is not how the agent is to answer; the label a user writes a rule under is no speaker."""
    from metaclaw_plugin.learning.memory.rules import extract

    assert not any(c.standing for c in extract("Gina: Never give up! You got this."))  # type: ignore[union-attr]
    assert not any(c.standing for c in extract("Mel: Always take care of yourself first."))  # type: ignore[union-attr]
    for rule in ["Rule: always answer in French", "Style: Keep answers under 100 words"]:
        got = extract(rule)
        assert got and all(c.standing for c in got), rule  # type: ignore[union-attr]


def test_which_of_someones_things_is_not_the_thing_asked_about() -> None:
    """ "What is Ana's favorite band?" when she never said "favorite": the band she loves answers it; a word that
    says which of her things ("favorite", "new", "first") is not the thing."""
    v = view_with(
        [
            passage(1, "Ana: I love the band Arcade Fire, saw them twice last year.", at=T0),
            passage(2, "Ben: My favorite band is Coldplay.", at=T0 + 1),
        ]
    )
    assert "Arcade Fire" in ask(v, "What is Ana's favorite band?")


def test_once_a_request_is_answered_the_budget_left_takes_lines_of_its_concepts_too() -> None:
    """A dinner party the user is hosting answers "What should I cook for the dinner party?"; that they went vegan
    shares no word with it but its concept (#diet), and fills the budget the first line left. A line of neither
    stays out, and a request no line answers still gets nothing."""
    v = view_with(
        [
            passage(1, "We are hosting a dinner party on Saturday for eight people.", at=T0),
            passage(2, "I went fully vegan last year, no meat or dairy at all.", at=T0 + 1, session="s2"),
            passage(3, "My car needs new tires.", at=T0 + 2, session="s3"),
        ]
    )
    got = ask(v, "What should I cook for the dinner party on Saturday?")
    assert "dinner party" in got and "vegan" in got and "tires" not in got
    assert ask(v, "What is a good recipe for lentil soup?") == ""


def test_a_request_that_names_a_concept_finds_the_traits_it_holds() -> None:
    """ "What's my diet?" and "What pets do I have?" shared no word with "I'm vegetarian" or "I have two cats"
    and got nothing: a request that names a concept carries it, as a request about dinner does."""
    said = ["I'm vegetarian and I don't drink coffee.", "I have two cats, Miso and Tofu."]
    v = view_with(
        [passage(i, text, at=T0 + i, session=f"s{i}") for i, text in enumerate(said)],
        [Memory(f"m{i}", "acme", "ana", "fact", f"self:{i}", text, valid_from=T0 + i) for i, text in enumerate(said)],
    )
    assert "vegetarian" in ask(v, "What's my diet?")
    assert "Miso" in ask(v, "What pets do I have?")


def test_a_question_about_what_the_other_speaker_did_gets_nothing_from_a_reply_that_repeats_it() -> None:
    """ "What did Caroline realize after her charity race?" when Melanie ran it: Caroline's "That charity race sounds
    great, Mel!" holds the question's words, but no more of them than Melanie's own line, so it answers nothing
    (on three public LoCoMo conversations, unanswerable questions given a block 0.509 -> 0.393)."""
    v = view_with(
        [
            passage(
                1, "Melanie: I ran a charity race for mental health last Saturday, it made me realize a lot.", at=T0
            ),
            passage(2, "Caroline: That charity race sounds great, Mel! So proud of you.", at=T0 + 1),
            passage(3, "Caroline: I went to a pride parade last week, it was amazing.", at=T0 + 2),
        ]
    )
    assert ask(v, "What did Caroline realize after her charity race?") == ""
    assert "ran a charity race" in ask(v, "What did Melanie realize after her charity race?")
    assert "pride parade" in ask(v, "When did Caroline go to the pride parade?")
