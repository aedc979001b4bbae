"""A user's recall index: BM25 over what they said (passages) and what was distilled from it (memories).

The request path ranks both here, in memory, with no database, network or model. Documents are the sentences-sized
chunks of passages and the memories themselves; each is a rendered line (dated) with its token cost. The index is
built of immutable :class:`Segment`\\s (numpy postings), so a reader never sees one half-built: new passages go to a
small tail segment rebuilt on each append, which is merged into the large base segment when it grows
(:meth:`Recall.appended`). Scoring a request costs a few numpy passes over the postings of its words, whatever the
number of documents.

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


@dataclass(frozen=True)
class Segment:
    docs: tuple[Doc, ...]
    postings: dict[str, tuple[np.ndarray, np.ndarray]]  # term -> (doc indices int32, term frequencies float32)
    lengths: np.ndarray  # words per document (float32)
    total: float  # sum of lengths

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
    return Segment(tuple(docs), postings, lengths, float(lengths.sum()))


@dataclass
class Hit:
    doc: Doc
    score: float
    coverage: float  # share of the request's word weight the document holds
    matched: int = 1  # the request's topical words it holds (not weak words, not concept tags)
    concepts: int = 0  # the request's concept tags it holds ("#diet": a dinner menu, and "I'm vegan")


@dataclass(frozen=True)
class Recall:
    """One user's index: distilled memories, and passages (a large base and a small tail)."""

    memories: Segment = EMPTY
    base: Segment = EMPTY
    tail: Segment = EMPTY
    tail_terms: tuple[tuple[str, ...], ...] = ()  # the tail's words, to rebuild it with more documents
    base_terms: tuple[tuple[str, ...], ...] = field(default=(), repr=False)  # kept to merge the tail in

    @property
    def size(self) -> int:
        return self.memories.n + self.base.n + self.tail.n

    def with_memories(self, docs: Sequence[Doc]) -> Recall:
        return Recall(
            build_segment(docs, [memory_terms_list(_body(d.line)) for d in docs]),
            self.base,
            self.tail,
            self.tail_terms,
            self.base_terms,
        )

    def appended(self, docs: Sequence[Doc]) -> Recall:
        """This index with more passage chunks (a new object: readers of the old one are unaffected)."""
        new_terms = tuple(tuple(memory_terms_list(_body(d.line))) for d in docs)
        tail_docs = self.tail.docs + tuple(docs)
        tail_terms = self.tail_terms + new_terms
        if len(tail_docs) > TAIL_MAX:
            base_docs = self.base.docs + tail_docs
            base_terms = self.base_terms + tail_terms
            return Recall(self.memories, build_segment(base_docs, base_terms), EMPTY, (), base_terms)
        return Recall(self.memories, self.base, build_segment(tail_docs, tail_terms), tail_terms, self.base_terms)

    def search(self, words: Sequence[str], limit: int, now: float) -> tuple[list[Hit], float]:
        """The ``limit`` best documents for the request's ``words`` (stems, :func:`~.text.memory_terms_list`), and the
        request's total word weight (the denominator of coverage)."""
        segments = [s for s in (self.memories, self.base, self.tail) if s.n]
        n = sum(s.n for s in segments)
        if not n or not words:
            return [], 0.0
        avgdl = sum(s.total for s in segments) / n
        query = list(dict.fromkeys(words))
        idf: dict[str, float] = {}
        total = 0.0
        for t in query:
            df = sum(len(s.postings[t][0]) for s in segments if t in s.postings)
            w = math.log(1.0 + (n + PRIOR_DOCS - df + 0.5) / (df + 0.5)) * (0.5 if t in WEAK else 1.0)
            idf[t] = w
            if not t.startswith("#"):  # a concept tag finds a trait; it is not a word the request must be about
                total += w  # a word never said weighs the most: a request about it is not answered by the rest
        hits: list[Hit] = []
        for seg in segments:
            scores = np.zeros(seg.n, np.float32)
            cover = np.zeros(seg.n, np.float32)
            strong = np.zeros(seg.n, np.int16)
            tagged = np.zeros(seg.n, np.int16)
            norm = K1 * (1.0 - B + B * seg.lengths / avgdl)
            for t in query:
                p = seg.postings.get(t)
                if p is None:
                    continue
                ids, tf = p
                scores[ids] += idf[t] * tf * (K1 + 1.0) / (tf + norm[ids])
                cover[ids] += idf[t]
                if t.startswith("#"):
                    tagged[ids] += 1
                elif t not in WEAK:
                    strong[ids] += 1
            cand = np.flatnonzero(scores)
            if not len(cand):
                continue
            if len(cand) > limit:
                cand = cand[np.argpartition(-scores[cand], limit - 1)[:limit]]
            for i in cand:
                d = seg.docs[int(i)]
                if d.expires_at is not None and d.expires_at < now:
                    continue
                coverage = min(1.0, float(cover[i]) / total) if total else 0.0
                hits.append(Hit(d, float(scores[i]) * d.boost, coverage, int(strong[i]), int(tagged[i])))
        hits.sort(key=lambda h: (-h.score, -h.doc.at))
        return hits[:limit], total


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
