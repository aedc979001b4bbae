"""The second ranking stage, off the request path (issue 44).

The first stage (:mod:`.retrieve`, :mod:`.embedding`) answers every request in microseconds. After a main turn, its
wider candidate list (up to :data:`POOL` skills, already filtered to what the tenant may see) and the turn's task
text go to :class:`Reranker`, a background service: it scores each candidate by a sentence model's similarity to the
task text (MiniLM, whose weights ship in its package) and keeps the result per conversation. The conversation's next
turns read it with one dictionary look-up (:meth:`Picks.apply`): no model call and no wait on the request path. A
request whose first-stage candidates are mostly new to the conversation is a new topic: the first stage's choice
stands.

What the second stage changes (calibrated on the own sets; docs/request-path.md has the figures):

* the order: first-stage score + ``WEIGHT`` x similarity (the relevant skill moves up within the block);
* precision: a block none of whose first-stage picks reaches ``FLOOR`` similarity is dropped. A floor per pick
  cost governed requests their skill (a governed pick can be as low as -0.04), so the floor is on the block's best;
* recall: a long request the gate turned away gets its candidates when one reaches ``ADMIT``. Short requests the gate
  turned away are not reconsidered: a short chat message's nearest skills reach 0.39 here.
"""

from __future__ import annotations

import itertools
import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..infra.memo import Memo
from ..infra.service import Service
from ..types import Skill

log = logging.getLogger("metaclaw_plugin.skills")

POOL = 24  # first-stage candidates the second stage sees (the request path injects top_k of them, 6 by default)
WEIGHT = 0.25  # second-stage score = first-stage score + WEIGHT x similarity
FLOOR = 0.21  # the best similarity of a block's first-stage picks that keeps the block
ADMIT = 0.35  # the similarity that lets in a long request the gate turned away (MiniLM's min_similarity)
QUEUE_MAX = 256  # conversations waiting for the second stage; beyond it the oldest is dropped
# The most of its time the stage's thread spends ranking: after a ranking of t seconds it rests t x (1/share - 1).
# A ranking is tens of ms of Python and torch that hold the GIL between ops, and the host's thread waits for it:
# with new turns back to back (bench retrieval's worker, 1k skills), on_request p50 / p99 were 260 / 487 us without the
# stage, 385 us / 8.8 ms ranking without rest, 315 us / 4.6 ms at this share. A conversation's next turn comes seconds
# later, so the rest costs the picks nothing.
BUSY_SHARE = 0.25
CONVERSATIONS_MAX = 4096  # conversations whose picks are kept
CHUNK_MIN = 20  # characters of a sentence or line that count as one on their own
CHUNKS_MAX = 16

_PIECES = re.compile(r"(?<=[.!?])\s+(?=[A-Z])|\n+")

Key = tuple[str, str]  # (tenant, session)
Turn = tuple[int, str]  # (index of the task message, task text): one turn of a conversation


class Pool(NamedTuple):
    """What the first stage found for one request: the second stage's input."""

    query: str  # the task text as the first stage searched it
    candidates: tuple[tuple[Skill, float], ...]  # best first, with first-stage scores; only what the tenant may see
    passed: bool  # the first stage's gate let the request through
    top: int  # how many of them the first stage picks (top_k less the pinned skills)


@dataclass(frozen=True)
class Picks:
    """The second stage's verdict on one turn of a conversation."""

    turn: Turn
    block: bool  # whether that turn deserved a block (the floor met, or a long request let in)
    sims: dict[str, float]  # each candidate's similarity to that turn's task text
    near: frozenset[str]  # the first stage's picks of that turn: the conversation's topic
    at: float  # time.monotonic() when ranked
    seq: int  # one number per ranking (a key of the bank's block cache)

    def apply(self, ranked: Sequence[tuple[Skill, float]], k: int) -> list[tuple[Skill, float]] | None:
        """This turn's picks after the second stage, or None when the request left the conversation's topic (fewer
        than half of its first ``k`` candidates were among that turn's first-stage picks): then the first stage's
        choice stands. ``ranked``: this turn's candidates (the gate's verdict aside), with its own first-stage scores,
        to which the conversation's similarities add; a candidate the second stage has not seen gets their mean."""
        top = {s.name for s, _ in ranked[:k]}
        if not top or 2 * len(top & self.near) < len(top):
            return None
        if not self.block:
            return []
        sims = self.sims
        fill = sum(sims.values()) / len(sims) if sims else 0.0
        scored = [(sc + WEIGHT * sims.get(s.name, fill), i, s) for i, (s, sc) in enumerate(ranked)]
        scored.sort(key=lambda p: (-p[0], p[1]))
        return [(s, round(max(0.0, min(v / (1 + WEIGHT), 1.0)), 4)) for v, _, s in scored[:k]]


def query_texts(query: str) -> list[str]:
    """The task text, and its sentences and lines when it has several: a long request's best sentence says what it
    is about better than the whole (the model reads 256 word pieces of it at most)."""
    pieces = [p.strip() for p in _PIECES.split(query)]
    pieces = [p for p in pieces if len(p) >= CHUNK_MIN][:CHUNKS_MAX]
    return [query, *pieces] if len(pieces) > 1 else [query]


def similarities(model: str, encoder: Any, query: str, skills: Sequence[Skill]) -> Any:
    """Each skill's similarity to the task text: the mean of its cosine with the whole text and with its closest
    sentence (on the own long set, one more request reached its skill than with the whole text alone)."""
    import numpy as np

    from .similarity import skill_vectors

    q = np.asarray(encoder.encode(query_texts(query)))
    vectors, _ = skill_vectors(model, encoder, skills)
    sims = np.stack(vectors) @ q.T
    return sims[:, 0] if sims.shape[1] == 1 else (sims[:, 0] + sims[:, 1:].max(axis=1)) / 2


class Reranker:
    """The second stage as a background service (:class:`~metaclaw_plugin.infra.service.Service`): one thread, a bounded
    queue with one job per conversation (a newer turn replaces the one waiting; when full the oldest is dropped and
    counted), and each conversation's picks (bounded, used for ``ttl`` seconds). The model loads on that thread as it
    starts."""

    def __init__(self, model: str, ttl: float, queue_max: int = QUEUE_MAX, conversations: int = CONVERSATIONS_MAX):
        self.model = model
        self.ttl = ttl
        self.queue_max = queue_max
        self._jobs: OrderedDict[Key, tuple[Turn, Pool]] = OrderedDict()
        self._cond = threading.Condition()
        self._busy = False
        self._offered: Memo[Key, Turn] = Memo(conversations)  # the last turn queued per conversation
        self._picks: Memo[Key, tuple[Picks, ...]] = Memo(conversations)  # newest first, at most two
        self._seq = itertools.count(1)
        self.service = Service("metaclaw-rerank", self._run, wake=self._wake)
        self.unavailable: str | None = None  # why the model did not load: the stage is off then
        self.ready = threading.Event()  # set once the model has loaded (or failed to)
        self.load_seconds: float | None = None
        self.ranked = self.dropped = self.replaced = 0
        self.applied = self.new_topic = 0  # turns that used a conversation's picks / that left its topic
        self.failures = 0
        self.last_failure: str | None = None

    # BackgroundPart --------------------------------------------------------------------------------
    def start(self) -> bool:
        return self.service.start()

    def stop(self, timeout: float = 10.0) -> bool:
        return self.service.stop(timeout)

    def services(self) -> list[Service]:
        return [self.service]

    def status(self) -> dict[str, Any]:
        return {
            "state": "off" if self.unavailable else "on",
            "model": self.model,
            "load_seconds": self.load_seconds,
            **({"reason": f"off: the model did not load ({self.unavailable})"} if self.unavailable else {}),
            "queued": len(self._jobs),
            "ranked": self.ranked,
            "dropped": self.dropped,
            "replaced": self.replaced,
            "conversations": len(self._picks),
            "applied": self.applied,
            "new_topic": self.new_topic,
            "failures": self.failures,
            "last_failure": self.last_failure,
        }

    # Request path: a look-up, and a job queued without waiting ------------------------------------
    def picks(self, key: Key, turn: Turn) -> Picks | None:
        """The conversation's latest picks from an earlier turn (a tool loop's later steps of a turn the stage has
        ranked meanwhile keep the picks its first step used), if not older than ``ttl``."""
        got = self._picks.get(key)
        if not got:
            return None
        for p in got:
            if p.turn != turn:
                return p if time.monotonic() - p.at <= self.ttl else None
        return None

    def offer(self, key: Key, turn: Turn, pool: Pool) -> None:
        """Queue a turn's candidates for the second stage (once per turn; never waits on the ranking)."""
        if self.unavailable or not pool.candidates or self._offered.get(key) == turn:
            return
        self._offered.put(key, turn)
        with self._cond:
            if self._jobs.pop(key, None) is not None:
                self.replaced += 1
            elif len(self._jobs) >= self.queue_max:
                self._jobs.popitem(last=False)
                self.dropped += 1
            self._jobs[key] = (turn, pool)
            self._cond.notify()

    def failed(self, where: str, e: BaseException) -> None:
        """Count and log a failure; the conversation keeps the first stage's choice."""
        self.failures += 1
        self.last_failure = f"{where}: {type(e).__name__}: {e}"
        log.warning("second-stage ranking failed (the first stage's choice stands): %s", self.last_failure)

    # Background side ---------------------------------------------------------------------------------
    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Block until every queued turn is ranked (tests and benchmarks)."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._jobs and not self._busy, timeout)

    def rank(self, turn: Turn, pool: Pool, encoder: Any) -> Picks:
        """The second stage's verdict on one turn."""
        skills = [s for s, _ in pool.candidates]
        sims = similarities(self.model, encoder, pool.query, skills).tolist()
        block = max(sims[: pool.top]) >= FLOOR if pool.passed else max(sims) >= ADMIT
        near = frozenset(s.name for s in skills[: pool.top])
        by_name = {s.name: round(float(v), 4) for s, v in zip(skills, sims)}
        return Picks(turn, block, by_name, near, time.monotonic(), next(self._seq))

    def _run(self, stop: threading.Event) -> None:
        # The model loads first, when the plugin starts: importing torch and reading the weights hold the GIL for
        # seconds, better before the host's traffic than under it (the first turns are first-stage only meanwhile).
        t0 = time.monotonic()
        encoder = self._load()
        self.load_seconds = round(time.monotonic() - t0, 2)
        self.ready.set()
        while True:
            with self._cond:
                while not self._jobs and not stop.is_set():
                    self._cond.wait()
                if stop.is_set():
                    return
                key, (turn, pool) = self._jobs.popitem(last=False)
                self._busy = True
            t0 = time.monotonic()
            try:
                if encoder is not None:
                    self._store(key, self.rank(turn, pool, encoder))
            except Exception as e:
                self.failed("ranking", e)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()
            stop.wait((time.monotonic() - t0) * (1 / BUSY_SHARE - 1))

    def _load(self) -> Any:
        """The model (on this thread); when it cannot load, the stage turns itself off (status says why)."""
        from .embedding import get_encoder

        try:
            return get_encoder(self.model)
        except Exception as e:
            self.failed("loading the model", e)
            self.unavailable = f"{type(e).__name__}: {e}"
            with self._cond:
                self._jobs.clear()
            return None

    def _store(self, key: Key, picks: Picks) -> None:
        older = [p for p in self._picks.get(key) or () if p.turn != picks.turn][:1]
        self._picks.put(key, (picks, *older))
        self.ranked += 1

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify_all()
