"""A user's recall index: BM25 over what they said (passages) and what was distilled from it (memories).

The request path ranks both here, in memory, with no database, network or model. Documents are the sentences-sized
chunks of passages and the memories themselves; each is a rendered line (dated) with its token cost. The index is
built of immutable :class:`Segment`\\s (numpy postings), so a reader never sees one half-built: new passages go to a
small fresh segment, merged into a tail segment, merged into the large base segment as each grows
(:meth:`Recall.appended`); a merge joins postings and never reads words again. Scoring a request costs a few numpy passes over the postings of its
words, whatever the number of documents.

Relevance is gated by coverage: the share of the request's word weight (IDF, a word the user never said counting at
the highest) that a document holds. A request about something the user never mentioned finds nothing worth
injecting, however many of its common words match.
"""

from __future__ import annotations

import functools
import math
from bisect import bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..infra.service import yielding
from .said import unaddressed
from .text import WEAK, WEAK_NOUNS, memory_terms_list

K1 = 1.2
B = 0.75
# Documents assumed besides the user's own, none holding any of the request's words: a word in every note of a user
# with three notes still says something (plain IDF would weigh it near zero), while for a user with thousands the
# prior fades.
PRIOR_DOCS = 50
TAIL_MAX = 2048  # documents in the tail before it is merged into the base
FRESH_MAX = 128  # documents in the freshest segment before it is merged into the tail: a refresh merges into a small
# segment (a merge copies the first segment's postings, thousands of words for the tail)
WEAK_ONLY = WEAK - WEAK_NOUNS  # what stays weak in a request of weak words only


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
    plain: str = ""  # the line's words only: two lines with the same words say the same thing (made once, here)
    hedged: bool = False  # it only wishes, supposes or denies (:func:`.said.hedged`)
    about: str = ""  # what it replaced, looked up but not shown ("I joined PureGym instead" after "my gym is ...")
    # the words of the turn it answers: they rank it among the lines the request's own words find, and never make a
    # line found or relevant by themselves (:data:`CONTEXT`)
    context: str = ""


@dataclass(frozen=True)
class Segment:
    docs: tuple[Doc, ...]
    postings: dict[str, tuple[np.ndarray, np.ndarray]]  # term -> (doc indices int32, term frequencies float32)
    lengths: np.ndarray  # words per document (float32)
    total: float  # sum of lengths
    speaker_of: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))  # per document: -1, or its speaker
    speaker_ids: dict[str, int] = field(default_factory=dict)  # speaker label -> its number in speaker_of
    said_at: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float64))  # per document: when it was said
    boosts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float64))  # per document: its boost
    expires: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float64))  # per document: expiry, or inf

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
        lengths[i] = max(sum(1 for w in words if not w.startswith(CONTEXT)), 1)
        for t, c in Counter(words).items():
            post_docs.setdefault(t, []).append(i)
            post_tf.setdefault(t, []).append(float(c))
    postings = {t: (np.asarray(ids, np.int32), np.asarray(post_tf[t], np.float32)) for t, ids in post_docs.items()}
    speaker_ids: dict[str, int] = {}
    speaker_of = np.asarray(
        [speaker_ids.setdefault(d.speaker, len(speaker_ids)) if d.speaker else -1 for d in docs], np.int32
    )
    said_at = np.asarray([d.at for d in docs], np.float64)
    boosts = np.asarray([d.boost for d in docs], np.float64)
    expires = np.asarray([math.inf if d.expires_at is None else d.expires_at for d in docs], np.float64)
    return Segment(
        tuple(docs), postings, lengths, float(lengths.sum()), speaker_of, speaker_ids, said_at, boosts, expires
    )


@dataclass(slots=True)
class Hit:
    doc: Doc
    score: float
    coverage: float  # share of the request's word weight the document holds
    matched: int = 1  # the request's topical words it holds (not weak words, not concept tags)
    concepts: int = 0  # the request's concept tags it holds ("#diet": a dinner menu, and "I'm vegan")
    number: int = -1  # the document's number in the index that found it (:meth:`Recall.holding`)


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
        np.concatenate([a.boosts, b.boosts]),
        np.concatenate([a.expires, b.expires]),
    )


CACHED_WORDS = 4096  # words whose joined postings an index keeps (then it starts over): bounds the memory they take

Posting = tuple[np.ndarray, np.ndarray, np.ndarray]  # document numbers (int32), term frequencies, BM25 denominators
_NO_POSTING: Posting = (np.zeros(0, np.int32), np.zeros(0, np.float32), np.zeros(0, np.float32))


def _postings(
    parts: Sequence[tuple[tuple[np.ndarray, np.ndarray], int, Segment]], before: Posting | None = None
) -> Posting:
    """Document numbers, term frequencies and document lengths of a word's postings in ``parts`` (each segment's
    postings, its first number, the segment), after ``before``'s."""
    first = [before] if before is not None else []
    return (
        np.concatenate([b[0] for b in first] + [p[0] + np.int32(start) for p, start, _ in parts] or [_NO_POSTING[0]]),
        np.concatenate([b[1] for b in first] + [p[1] for p, _, _ in parts] or [_NO_POSTING[1]]),
        np.concatenate([b[2] for b in first] + [s.lengths[p[0]] for p, _, s in parts] or [_NO_POSTING[2]]),
    )


def _bounded_put(cache: dict[str, Posting], t: str, value: Posting) -> None:
    if len(cache) >= CACHED_WORDS:
        cache.clear()
    cache[t] = value


@dataclass(frozen=True)
class Joined:
    """An index's segments numbered as one (memories, then the base, then the tail), so that a request is scored in
    one pass over all of them rather than once per segment: the fixed cost of a pass is most of a request's."""

    segments: tuple[Segment, ...]  # the non-empty ones
    starts: tuple[int, ...]  # the number of each one's first document
    n: int
    avgdl: float
    speaker_of: np.ndarray  # per document: -1, or its number in speaker_ids
    speaker_ids: dict[str, int]
    said_at: np.ndarray
    boosts: np.ndarray
    expires: np.ndarray
    first_expiry: float  # before it, no document has expired (most never do): nothing to check
    # a word's postings across the segments with their BM25 denominators (which depend on the index only), filled
    # as requests use the word
    cache: dict[str, Posting] = field(default_factory=dict)
    # a word's postings across the segments but the last (document numbers, term frequencies, document lengths): the
    # denominators change with every document added, these do not, so an index that only appended to its last
    # segment shares its predecessor's (:meth:`share_stable`; with a refresh a turn, ``cache`` starts empty each turn)
    stable: dict[str, Posting] = field(default_factory=dict)

    @classmethod
    def of(cls, segments: Sequence[Segment]) -> Joined:
        segs = tuple(s for s in segments if s.n)
        starts = tuple(int(x) for x in np.cumsum([0, *(s.n for s in segs)])[:-1])
        n = sum(s.n for s in segs)
        speaker_ids: dict[str, int] = {}
        speaker_of = []
        for s in segs:  # each segment's speaker numbers to the joined ones (its -1, "no speaker", to the last)
            lut = np.asarray(
                [speaker_ids.setdefault(name, len(speaker_ids)) for name in s.speaker_ids] + [-1], np.int32
            )
            speaker_of.append(lut[s.speaker_of])

        def joined(arrays: list[np.ndarray], dtype: type) -> np.ndarray:
            return np.concatenate(arrays) if arrays else np.zeros(0, dtype)

        expires = joined([s.expires for s in segs], np.float64)
        return cls(
            segs,
            starts,
            n,
            sum(s.total for s in segs) / n if n else 0.0,
            joined(speaker_of, np.int32),
            speaker_ids,
            joined([s.said_at for s in segs], np.float64),
            joined([s.boosts for s in segs], np.float64),
            expires,
            float(expires.min()) if len(expires) else math.inf,
        )

    def posting(self, t: str) -> Posting:
        """The word's postings across the segments (empty where it was never said)."""
        got = self.cache.get(t)
        if got is not None:
            return got
        if not self.segments:
            return _NO_POSTING
        head = self.stable.get(t)
        if head is None:
            head = _postings(
                [(s.postings[t], start, s) for s, start in zip(self.segments[:-1], self.starts) if t in s.postings]
            )
            _bounded_put(self.stable, t, head)
        last = self.segments[-1].postings.get(t)
        ids, tf, lengths = head if last is None else _postings([(last, self.starts[-1], self.segments[-1])], head)
        # a context word counts as in a line of average length: a short reply ("Agreed!") is no closer to the turn
        # it answers than a long one
        norm = K1 if t.startswith(CONTEXT) else K1 * (1.0 - B + B * lengths / self.avgdl)
        got = (ids, tf, tf + norm)
        _bounded_put(self.cache, t, got)
        return got

    def share_stable(self, before: Joined) -> None:
        """Take ``before``'s postings of the segments but the last where those are the same segments."""
        same = self.segments[:-1]
        if (
            same
            and len(before.segments) == len(self.segments)
            and all(a is b for a, b in zip(same, before.segments, strict=False))
        ):
            object.__setattr__(self, "stable", before.stable)

    @functools.cached_property
    def first_numbers(self) -> np.ndarray:
        """:attr:`starts` as an array (a search finds each hit's segment in one call)."""
        return np.asarray(self.starts, np.int64)

    def doc(self, k: int) -> Doc:
        i = bisect_right(self.starts, k) - 1
        return self.segments[i].docs[k - self.starts[i]]


@dataclass(frozen=True)
class Recall:
    """One user's index: distilled memories, and passages (a large base, a tail and a small fresh segment)."""

    memories: Segment = EMPTY
    base: Segment = EMPTY
    tail: Segment = EMPTY
    fresh: Segment = EMPTY
    joined: Joined = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "joined", Joined.of((self.memories, self.base, self.tail, self.fresh)))

    @property
    def size(self) -> int:
        return self.memories.n + self.passages

    @property
    def passages(self) -> int:
        """Passage chunks held."""
        return self.base.n + self.tail.n + self.fresh.n

    def with_memories(self, docs: Sequence[Doc]) -> Recall:
        return Recall(build_segment(docs, [_terms(d) for d in docs]), self.base, self.tail, self.fresh)

    def appended(self, docs: Sequence[Doc]) -> Recall:
        """This index with more passage chunks (a new object: readers of the old one are unaffected)."""
        fresh = merge_segments(self.fresh, build_segment(docs, [_terms(d) for d in yielding(docs)]))
        if fresh.n <= FRESH_MAX:
            out = Recall(self.memories, self.base, self.tail, fresh)
            out.joined.share_stable(self.joined)
            return out
        tail = merge_segments(self.tail, fresh)
        if tail.n > TAIL_MAX:
            return Recall(self.memories, merge_segments(self.base, tail))
        return Recall(self.memories, self.base, tail)

    def speakers(self) -> set[str]:
        return set(self.joined.speaker_ids)

    def said(self, term: str, by: str | None = None) -> bool:
        """Whether any document holds ``term`` (its postings, kept per index once asked); with ``by``, one of that
        speaker's or of no speaker."""
        docs = self.joined.posting(term)[0]
        if by is None or not len(docs):
            return len(docs) > 0
        who = self.joined.speaker_of[docs]
        mine = self.joined.speaker_ids.get(by, -2)
        return bool(((who == mine) | (who < 0)).any())

    def holding(self, hits: Sequence[Hit], term: str) -> np.ndarray:
        """Which of ``hits`` (found by this index) hold ``term``: from its postings (ascending document numbers), no
        line is read again."""
        docs = self.joined.posting(term)[0]
        numbers = np.asarray([h.number for h in hits], docs.dtype)
        at = np.minimum(np.searchsorted(docs, numbers), max(len(docs) - 1, 0))
        return docs[at] == numbers if len(docs) else np.zeros(len(numbers), bool)

    def search(self, words: Sequence[str], limit: int, now: float, names: Sequence[str] = ()) -> Found:
        """The ``limit`` best documents for the request's ``words`` (stems, :func:`~.text.memory_terms_list`), each with
        its coverage of the request's word weight. ``names``: speakers of this index the request
        names ("what did Caroline say about..."): a line another speaker said is left out unless it names one of them
        too (a transcript's "Melanie: I ran a charity race" does not answer a question about Caroline's race)."""
        j = self.joined
        if not j.n or not words:
            return Found([])
        idf: dict[str, float] = {}
        total = 0.0
        query = list(dict.fromkeys(words))
        # a weak noun is the topic of a request that has no other word ("Where do I work?")
        weak = WEAK if any(t not in WEAK and not t.startswith("#") and t not in names for t in query) else WEAK_ONLY
        postings = [j.posting(t) for t in query]
        # the words of the turns lines answer: looked up beside the request's own words (a tag is no word of a turn)
        context = [CONTEXT + t for t in query if not t.startswith(("#", "="))]
        for t, p in zip(query, postings, strict=True):
            df = len(p[0])
            w = math.log(1.0 + (j.n + PRIOR_DOCS - df + 0.5) / (df + 0.5)) * (0.5 if t in weak else 1.0)
            idf[t] = w
            # a concept tag finds a trait, and a group's term ("=kid") is another name for a word already counted:
            # neither is a word the request must be about
            if not t.startswith(("#", "=")):
                total += w  # a word never said weighs the most: a request about it is not answered by the rest
        for t in context:
            idf[t] = idf[t[1:]]
        return _score(
            j, query + context, postings + [j.posting(t) for t in context], idf, total, limit, now, names, weak
        )


# A reply is found by what it answers: a line's context words (the turn before it, :func:`.view.context_of`) are
# indexed under this mark and add to its score like its own words, but only among the lines the request's own words
# find, and never to its coverage or its count of topical words (those gate what is shown). Score-only, on two public
# LoCoMo conversations (BM25 over raw turns, 300 tokens): answer in block 0.441 -> 0.467 and 0.370 -> 0.444, evidence
# 0.527 -> 0.561 and 0.569 -> 0.659; counted as the line's own words the gate let through more unanswerable questions.
CONTEXT = "~"

# A document's count of the request's topical words, concept tags and speakers' names, summed in one pass over the
# postings as one number per term (exact in float64: a request has far fewer than 4096 words).
STRONG, TAG, NAME = 1.0, float(1 << 12), float(1 << 24)
DENSE_SHARE = 8  # a request's postings times this reaching the index's size: summed densely (a sort costs more)


def _score(
    j: Joined,
    query: list[str],
    postings: list[Posting],
    idf: dict[str, float],
    total: float,
    limit: int,
    now: float,
    names: Sequence[str],
    weak: frozenset[str],
) -> Found:
    """The ``limit`` best hits. Only the documents the request's words reach are touched (their postings, gathered
    and summed by document), never the whole index: a request costs the length of its words' postings, not the
    number of notes."""
    ids_parts: list[np.ndarray] = []
    score_parts: list[np.ndarray] = []
    weights: list[float] = []
    flags: list[float] = []
    for t, (ids, tf, den) in zip(query, postings, strict=True):
        if not len(ids):
            continue
        ids_parts.append(ids)
        score_parts.append(idf[t] * tf * (K1 + 1.0) / den)
        if t.startswith(CONTEXT):  # ranks a line, never covers the request nor counts as a word of it
            weights.append(0.0)
            flags.append(0.0)
            continue
        weights.append(idf[t])
        # "Caroline:" labels every line of hers: her name is not a topical word
        flags.append(TAG if t.startswith("#") else NAME if t in names else 0.0 if t in weak else STRONG)
    if not ids_parts:
        return Found([])
    sizes = [len(ids) for ids in ids_parts]
    ids = np.concatenate(ids_parts)
    weight = np.repeat(np.asarray(weights, np.float64), sizes)  # every word weighs more than nothing (idf > 0)
    flag = np.repeat(np.asarray(flags, np.float64), sizes)
    if len(ids) * DENSE_SHARE >= j.n:  # postings many for the index: sum over every document, no sort
        cover_all = np.bincount(ids, weight, j.n)
        docs = np.flatnonzero(cover_all)
        cover_all = cover_all[docs]
        scores = np.bincount(ids, np.concatenate(score_parts), j.n)[docs]
        flagged = np.bincount(ids, flag, j.n)[docs]
    else:  # few: sort them into the documents they reach (the same sums, in the same order)
        docs, at = _union(ids)
        scores = np.bincount(at, np.concatenate(score_parts), len(docs))
        cover_all = np.bincount(at, weight, len(docs))
        flagged = np.bincount(at, flag, len(docs))
    elsewhere = 0.0
    if names and j.speaker_ids:
        # another speaker's line, unless it names one of them (then it is about them)
        who = j.speaker_of[docs]
        blocked = (who >= 0) & (flagged < NAME)
        for n in names:
            if n in j.speaker_ids:
                blocked &= who != j.speaker_ids[n]
        if blocked.any() and total:
            elsewhere = min(1.0, float(cover_all[blocked].max()) / total)
        scores[blocked] = 0.0
    final = scores * j.boosts[docs]
    live = (scores > 0) & (cover_all > 0)  # found by the request's own words (a context word only ranks)
    if now > j.first_expiry:
        live &= j.expires[docs] >= now
    pick = np.flatnonzero(live)
    if len(pick) > limit:
        pick = _best(j, docs, final, pick, limit)
    # by score, then the latest said (numpy's order; equal scores said at the same time are ordered by line below)
    pick = pick[np.lexsort((-j.said_at[docs[pick]], -final[pick]))]
    numbers = docs[pick]
    seg = np.searchsorted(j.first_numbers, numbers, "right") - 1
    cover = np.minimum(cover_all[pick] / total, 1.0) if total else np.zeros(len(pick))
    counts = flagged[pick].astype(np.int64) % int(NAME)
    segments, starts = j.segments, j.starts
    hits = [
        Hit(segments[s].docs[d - starts[s]], score, c, n % int(TAG), n // int(TAG), d)
        for d, s, score, c, n in zip(
            numbers.tolist(), seg.tolist(), final[pick].tolist(), cover.tolist(), counts.tolist(), strict=True
        )
    ]
    at, best = j.said_at[numbers], final[pick]
    if ((best[1:] == best[:-1]) & (at[1:] == at[:-1])).any():  # a passage's pieces tie: by line, as always
        hits.sort(key=hit_order)
    return Found(hits, elsewhere)


def hit_order(h: Hit) -> tuple[float, float, str]:
    """How hits are ordered: the best first, then the latest said, then by line."""
    return (-h.score, -h.doc.at, h.doc.line)


def _union(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct document numbers of ``ids`` (ascending) and where each of ``ids`` is among them: what
    ``np.unique(ids, return_inverse=True)`` gives, in half its time on a request's few thousand postings."""
    order = ids.argsort(kind="stable")
    ranked = ids[order]
    first = np.empty(len(ranked), bool)
    first[:1] = True
    np.not_equal(ranked[1:], ranked[:-1], out=first[1:])
    at = np.empty(len(ranked), np.intp)
    at[order] = np.cumsum(first) - 1
    return ranked[first], at


def _best(j: Joined, docs: np.ndarray, final: np.ndarray, pick: np.ndarray, limit: int) -> np.ndarray:
    """The ``limit`` best of ``pick``, ties at the cut settled as :meth:`Recall.search` orders hits (the latest said
    first, then by line), so which notes a request gets never depends on how the index is split into segments."""
    s = final[pick]
    cut = np.partition(s, len(s) - limit)[len(s) - limit]
    above, tied = pick[s > cut], pick[s == cut]
    need = limit - len(above)  # at least one: fewer than ``limit`` are above the cut
    if len(tied) > need:
        later = -j.said_at[docs[tied]]
        order = np.argsort(later, kind="stable")  # the latest said first, then in the order added
        tied, later = tied[order], later[order]
        # said at the same time as the last one in (a passage's pieces): by line, as the hits are ordered
        lo, hi = np.searchsorted(later, later[need - 1], "left"), np.searchsorted(later, later[need - 1], "right")
        if hi > need:
            same = sorted(tied[lo:hi].tolist(), key=lambda k: j.doc(int(docs[k])).line)
            tied = np.concatenate([tied[:lo], np.asarray(same, np.intp)])
        tied = tied[:need]
    return np.concatenate([above, tied])


def _terms(d: Doc) -> list[str]:
    """What a document is about: its words, less the names that only address the listener ("Thanks, Caroline!"
    said by Melanie is not about Caroline); then its context's words it does not hold, marked (:data:`CONTEXT`)."""
    words = memory_terms_list(unaddressed(_body(d.line)))
    if d.about:
        words += sorted(set(memory_terms_list(d.about)) - set(words))
    if d.context:
        words += [CONTEXT + t for t in sorted(set(memory_terms_list(d.context)) - set(words)) if t[0] not in "#="]
    return words


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
