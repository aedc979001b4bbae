"""A user's recall index: BM25 over what they said (passages) and what was distilled from it (memories).

The request path ranks both here, in memory, with no database, network or model. Documents are the sentences-sized
chunks of passages and the memories themselves; each is a rendered line (dated) with its token cost. The index is
built of immutable :class:`Segment`\\s (numpy postings), so a reader never sees one half-built: new passages go to a
small tail segment, which is merged into the large base segment when it grows (:meth:`Recall.appended`); a merge
joins postings and never reads words again. Scoring a request costs a few numpy passes over the postings of its
words, whatever the number of documents.

Relevance is gated by coverage: the share of the request's word weight (IDF, a word the user never said counting at
the highest) that a document holds. A request about something the user never mentioned finds nothing worth
injecting, however many of its common words match.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .text import WEAK, memory_terms_list

K1 = 1.2
B = 0.75
# Documents assumed besides the user's own, none holding any of the request's words: a word in every note of a user
# with three notes still says something (plain IDF would weigh it near zero), while for a user with thousands the
# prior fades.
PRIOR_DOCS = 50
TAIL_MAX = 2048  # documents in the tail before it is merged into the base


@dataclass(frozen=True)
class Doc:
    key: str  # the memory's id, or "<passage id>#<chunk>"
    source: str  # the memory or passage id (forget, and the ids a turn reports)
    kind: str  # a memory kind, "passage" or "digest"
    line: str  # as rendered in the section
    cost: int  # tokens of the line
    at: float  # when it was said
    session: str | None = None
    expires_at: float | None = None
    boost: float = 1.0
    speaker: str | None = None  # the stem of the name that labels who said it ("Caroline: ..."), in a transcript


@dataclass(frozen=True)
class Segment:
    docs: tuple[Doc, ...]
    postings: dict[str, tuple[np.ndarray, np.ndarray]]  # term -> (doc indices int32, term frequencies float32)
    lengths: np.ndarray  # words per document (float32)
    total: float  # sum of lengths
    speaker_of: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))  # per document: -1, or its speaker
    speaker_ids: dict[str, int] = field(default_factory=dict)  # speaker label -> its number in speaker_of
    said_at: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float64))  # per document: when it was said

    @property
    def n(self) -> int:
        return len(self.docs)


EMPTY = Segment((), {}, np.zeros(0, np.float32), 0.0)


def build_segment(docs: Sequence[Doc], terms: Sequence[Sequence[str]]) -> Segment:
    """A segment over ``docs``, ``terms[i]`` the words of ``docs[i]`` (repeats counted)."""
    post_docs: dict[str, list[int]] = {}
    post_tf: dict[str, list[float]] = {}
    lengths = np.zeros(len(docs), np.float32)
    for i, words in enumerate(terms):
        lengths[i] = max(len(words), 1)
        for t, c in Counter(words).items():
            post_docs.setdefault(t, []).append(i)
            post_tf.setdefault(t, []).append(float(c))
    postings = {t: (np.asarray(ids, np.int32), np.asarray(post_tf[t], np.float32)) for t, ids in post_docs.items()}
    speaker_ids: dict[str, int] = {}
    speaker_of = np.asarray(
        [speaker_ids.setdefault(d.speaker, len(speaker_ids)) if d.speaker else -1 for d in docs], np.int32
    )
    said_at = np.asarray([d.at for d in docs], np.float64)
    return Segment(tuple(docs), postings, lengths, float(lengths.sum()), speaker_of, speaker_ids, said_at)


@dataclass
class Hit:
    doc: Doc
    score: float
    coverage: float  # share of the request's word weight the document holds
    matched: int = 1  # the request's topical words it holds (not weak words, not concept tags)
    concepts: int = 0  # the request's concept tags it holds ("#diet": a dinner menu, and "I'm vegan")


@dataclass
class Found:
    """A search's result: the best hits, and the best coverage of a line left out because another speaker said it (a
    question about Caroline's race, when only Melanie spoke of a race)."""

    hits: list[Hit]
    elsewhere: float = 0.0


def merge_segments(a: Segment, b: Segment) -> Segment:
    """``a`` then ``b`` as one segment, made from their postings (no word is read again): ``b``'s documents are
    numbered after ``a``'s, so the result is what :func:`build_segment` gives for all of them. Appending a passage
    costs the tail's vocabulary, not its words."""
    if not a.n:
        return b
    if not b.n:
        return a
    postings = dict(a.postings)
    for t, (ids, tf) in b.postings.items():
        moved = ids + np.int32(a.n)
        mine = postings.get(t)
        postings[t] = (moved, tf) if mine is None else (np.concatenate([mine[0], moved]), np.concatenate([mine[1], tf]))
    speaker_ids = dict(a.speaker_ids)
    remap = np.asarray(
        [speaker_ids.setdefault(s, len(speaker_ids)) for s in sorted(b.speaker_ids, key=b.speaker_ids.__getitem__)],
        np.int32,
    )
    b_speakers = np.where(b.speaker_of >= 0, remap[np.maximum(b.speaker_of, 0)], -1) if len(remap) else b.speaker_of
    return Segment(
        a.docs + b.docs,
        postings,
        np.concatenate([a.lengths, b.lengths]),
        a.total + b.total,
        np.concatenate([a.speaker_of, b_speakers]).astype(np.int32),
        speaker_ids,
        np.concatenate([a.said_at, b.said_at]),
    )


@dataclass(frozen=True)
class Recall:
    """One user's index: distilled memories, and passages (a large base and a small tail)."""

    memories: Segment = EMPTY
    base: Segment = EMPTY
    tail: Segment = EMPTY

    @property
    def size(self) -> int:
        return self.memories.n + self.base.n + self.tail.n

    def with_memories(self, docs: Sequence[Doc]) -> Recall:
        return Recall(build_segment(docs, [memory_terms_list(_body(d.line)) for d in docs]), self.base, self.tail)

    def appended(self, docs: Sequence[Doc]) -> Recall:
        """This index with more passage chunks (a new object: readers of the old one are unaffected)."""
        tail = merge_segments(self.tail, build_segment(docs, [memory_terms_list(_body(d.line)) for d in docs]))
        if tail.n > TAIL_MAX:
            return Recall(self.memories, merge_segments(self.base, tail), EMPTY)
        return Recall(self.memories, self.base, tail)

    def speakers(self) -> set[str]:
        return {s for seg in (self.memories, self.base, self.tail) for s in seg.speaker_ids}

    def search(self, words: Sequence[str], limit: int, now: float, names: Sequence[str] = ()) -> Found:
        """The ``limit`` best documents for the request's ``words`` (stems, :func:`~.text.memory_terms_list`), each with
        its coverage of the request's word weight. ``names``: speakers of this index the request
        names ("what did Caroline say about..."): a line another speaker said is left out unless it names one of them
        too (a transcript's "Melanie: I ran a charity race" does not answer a question about Caroline's race)."""
        segments = [s for s in (self.memories, self.base, self.tail) if s.n]
        n = sum(s.n for s in segments)
        if not n or not words:
            return Found([])
        avgdl = sum(s.total for s in segments) / n
        idf: dict[str, float] = {}
        total = 0.0
        query = list(dict.fromkeys(words))
        for t in query:
            df = sum(len(s.postings[t][0]) for s in segments if t in s.postings)
            w = math.log(1.0 + (n + PRIOR_DOCS - df + 0.5) / (df + 0.5)) * (0.5 if t in WEAK else 1.0)
            idf[t] = w
            if not t.startswith("#"):  # a concept tag finds a trait; it is not a word the request must be about
                total += w  # a word never said weighs the most: a request about it is not answered by the rest
        hits: list[Hit] = []
        elsewhere = 0.0
        for seg in segments:
            got, other = _score(seg, query, idf, total, avgdl, limit, now, names)
            hits += got
            elsewhere = max(elsewhere, other)
        hits.sort(key=lambda h: (-h.score, -h.doc.at, h.doc.line))
        return Found(hits[:limit], elsewhere)


def _score(
    seg: Segment,
    query: list[str],
    idf: dict[str, float],
    total: float,
    avgdl: float,
    limit: int,
    now: float,
    names: Sequence[str],
) -> tuple[list[Hit], float]:
    """The ``limit`` best hits of one segment. Only the documents the request's words reach are touched (their
    postings, gathered and summed by document), never the whole segment: a request costs the length of its words'
    postings, not the number of notes."""
    ids_parts: list[np.ndarray] = []
    score_parts: list[np.ndarray] = []
    weights: list[float] = []
    strong_of: list[bool] = []
    tag_of: list[bool] = []
    for t in query:
        p = seg.postings.get(t)
        if p is None:
            continue
        ids, tf = p
        norm = K1 * (1.0 - B + B * seg.lengths[ids] / avgdl)
        ids_parts.append(ids)
        score_parts.append(idf[t] * tf * (K1 + 1.0) / (tf + norm))
        tag = t.startswith("#")
        weights.append(idf[t])
        strong_of.append(not tag and t not in WEAK and t not in names)  # "Caroline:" labels every line of hers
        tag_of.append(tag)
    if not ids_parts:
        return [], 0.0
    sizes = [len(ids) for ids in ids_parts]
    docs, at = np.unique(np.concatenate(ids_parts), return_inverse=True)
    scores = np.bincount(at, np.concatenate(score_parts), len(docs))
    cover_all = np.bincount(at, np.repeat(np.asarray(weights, np.float64), sizes), len(docs))
    elsewhere = 0.0
    if names and seg.speaker_ids:
        who = seg.speaker_of[docs]
        blocked = who >= 0
        for n in names:
            if n in seg.speaker_ids:
                blocked &= who != seg.speaker_ids[n]
        for name in names:  # another speaker's line that names them is about them
            p = seg.postings.get(name)
            if p is not None and blocked.any():
                post = p[0]  # ascending: documents are numbered in the order they were added
                maybe = docs[blocked]
                at_ = np.minimum(np.searchsorted(post, maybe), len(post) - 1)
                blocked[np.flatnonzero(blocked)[post[at_] == maybe]] = False
        if blocked.any() and total:
            elsewhere = min(1.0, float(cover_all[blocked].max()) / total)
        scores[blocked] = 0.0
    pick = np.flatnonzero(scores)
    if len(pick) > limit:
        pick = _best(seg, docs, scores, pick, limit)
    if not len(pick):
        return [], elsewhere
    cover = cover_all[pick]
    strong = np.bincount(at, np.repeat(np.asarray(strong_of, np.float64), sizes), len(docs))[pick]
    tagged = np.bincount(at, np.repeat(np.asarray(tag_of, np.float64), sizes), len(docs))[pick]
    out = []
    for j, k in enumerate(pick):
        d = seg.docs[int(docs[k])]
        if d.expires_at is not None and d.expires_at < now:
            continue
        coverage = min(1.0, float(cover[j]) / total) if total else 0.0
        out.append(Hit(d, float(scores[k]) * d.boost, coverage, int(strong[j]), int(tagged[j])))
    return out, elsewhere


def _best(seg: Segment, docs: np.ndarray, scores: np.ndarray, pick: np.ndarray, limit: int) -> np.ndarray:
    """The ``limit`` best of ``pick``, ties at the cut settled as :meth:`Recall.search` orders hits (the latest said
    first; then in the order added, the order of a passage's chunks), so which notes a request gets never depends
    on how the index happens to be split into segments."""
    s = scores[pick]
    cut = np.partition(s, len(s) - limit)[len(s) - limit]
    above, tied = pick[s > cut], pick[s == cut]
    need = limit - len(above)
    if len(tied) > need:
        ids = docs[tied]
        tied = tied[np.lexsort((ids, -seg.said_at[ids]))[:need]]
    return np.concatenate([above, tied])


def _body(line: str) -> str:
    """A rendered line's text without its date and label: what the words are looked up in."""
    if line.startswith("- ["):
        end = line.find("] ")
        if end > 0:
            line = line[end + 2 :]
    if line.startswith("("):
        end = line.find(") ")
        if end > 0:
            line = line[end + 2 :]
    return line
