"""Real GRPO groups (``training.group_size``): in the idle window, before a step, each captured prompt of the batch is
answered again by the weights being trained, and its answers are compared with each other.

A request is answered once when it is served, so a group keyed by the request had one member and no advantage, and a
batch-wide baseline compared unrelated turns. Here each captured turn of a drained batch gets ``group_size - 1`` more
answers to its own prompt (the prompt the policy saw, skill block included):

* **Sampled** by the backend that trains, from its current weights (local: the PEFT model; tinker: a sampling client
  of the run's weights; under ``training.scope: tenant`` the weights of the prompt's tenant, which the trainer put in
  before the batch was drained), at temperature 1, through the behaviour gate's generation path
  (``backend.gate_policy()``, :class:`~.gate.Policy`), every answer of the batch in one call (locally one padded
  ``generate``; on Tinker one request per answer, each from its own seed). The behaviour logprobs are the same
  weights' own, so the answers are on-policy; each is stamped with the current skill generation, the weights' step
  and its prompt's tenant.
* **Scored** by the slow loop's reward for the turn (:class:`~.gate.Scorer`: the verifier of its task type, else the
  reward judge (PRM)), as the gate scores its answers. An answer that cannot be scored is left out; a prompt none of
  whose answers could be scored (or sampled) is trained as before, with its captured answer alone, and counted
  (``unscored``).
* **Grouped** with the captured answer under its request's key (:func:`~.samples.group_key`), so advantages are per
  prompt (``training.advantage: group``). A group whose rewards lie within ``training.group_tolerance`` of each other
  (relative to the reward scale, :func:`~.advantages.tied`) is skipped by the trainer; a batch with no group left
  publishes nothing.

An answer may be up to twice as long as the captured one (at least :data:`MIN_NEW_TOKENS`), within
``training.max_tokens``. Resampling is off, and ``status`` says why, when ``group_size`` is 1 or nothing can score
(no scorer wired, ``reward.enabled`` off, no judge and no verifier). Counts go to ``training.groups`` (``status``)
and each step's ``detail.groups``.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from ..store import AnyDatabase, runtime_state
from ..types import Turn
from . import chat
from .gate import NO_SCORER, Draw, Scorer
from .samples import TrainSample

log = logging.getLogger(__name__)

KEY = "training.groups"
MIN_NEW_TOKENS = 64  # the shortest bound on a resampled answer: a one-word captured answer still leaves room
TEMPERATURE = 1.0  # on-policy: the behaviour logprobs are the policy's own at temperature 1


@dataclass
class BatchGroups:
    """What one batch's groups were (a step's ``detail.groups``)."""

    size: int  # training.group_size: answers per group, the captured one included
    off: str | None = None  # why nothing was resampled
    prompts: int = 0  # captured prompts that got resampled answers
    resampled: int = 0  # answers added
    unscored: int = 0  # captured prompts trained as before: none of their answers could be scored or sampled
    groups: int = 0  # advantage groups in the batch
    flat: int = 0  # of them skipped: rewards equal within training.group_tolerance

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class GroupSampler:
    def __init__(self, size: int, db: AnyDatabase, tokenizer: Any, *, max_tokens: int, scorer: Scorer | None = None):
        self.size = size
        self.db = db
        self.tokenizer = tokenizer
        self.max_tokens = max_tokens
        self.scorer = scorer
        self.errors = 0  # prompts whose sampling or scoring raised (trained as before)

    def off(self) -> str | None:
        """Why no answer is resampled, or None when groups are sampled."""
        if self.size <= 1:
            return "training.group_size is 1: each captured answer is its group's only sampled member"
        if self.scorer is None:
            return NO_SCORER
        return self.scorer.unavailable()

    def resample(
        self,
        backend: Any,
        samples: Sequence[TrainSample],
        turns: dict[str, Turn],
        *,
        step: int,
        generation: int,
        go_on: Callable[[], bool],
    ) -> tuple[list[TrainSample], BatchGroups]:
        """The resampled answers to the captured ``samples`` (``turns`` by id), scored; stops when ``go_on()``
        turns false (the caller then abandons the step)."""
        report = BatchGroups(self.size, off=self.off())
        if report.off is not None:
            return [], report
        n = self.size - 1
        bounds = [
            min(self.max_tokens - len(s.prompt_ids), max(MIN_NEW_TOKENS, 2 * len(s.completion_ids))) for s in samples
        ]
        todo = [(s, b) for s, b in zip(samples, bounds) if b >= 1]  # a prompt with no room left trains as before
        report.unscored += len(samples) - len(todo)
        if not todo:
            return [], report
        key = "\x00".join(s.turn_id for s, _ in todo)
        draw = Draw(max(b for _, b in todo), TEMPERATURE, _seed(key, step))
        try:  # every answer of the batch in one call (locally one padded batch: a token's cost is mostly per call)
            policy = backend.gate_policy()
            answers = policy.generate([s.prompt_ids for s, _ in todo for _ in range(n)], draw, go_on)
        except Exception:  # the answers cannot be sampled: the batch trains as before
            self.errors += 1
            log.exception("resampling answers for a batch failed; its captured answers train alone")
            report.unscored += len(todo)
            return [], report
        out: list[TrainSample] = []
        for i, (s, bound) in enumerate(todo):
            if not go_on():
                break
            try:
                got = self._scored(policy, s, turns[s.turn_id], answers[i * n : (i + 1) * n], bound, step, generation)
            except Exception:  # a prompt whose answers cannot be scored trains as before
                self.errors += 1
                log.exception("scoring answers to %s failed; it trains with its captured answer alone", s.turn_id)
                got = []
            report.prompts += bool(got)
            report.unscored += not got
            report.resampled += len(got)
            out += got
        return out, report

    def _scored(
        self, policy: Any, s: TrainSample, turn: Turn, answers: list[list[int]], bound: int, step: int, generation: int
    ) -> list[TrainSample]:
        """``s``'s resampled answers (each cut to its own bound), those the scorer scored, as samples of its group."""
        assert self.scorer is not None
        out = []
        for ids in (a[:bound] for a in answers):
            if not ids:
                continue
            score = self.scorer.score(turn, chat.answer_text(self.tokenizer, ids))
            if score is None:
                continue
            out.append(
                replace(
                    s,
                    completion_ids=list(ids),
                    mask=[1] * len(ids),
                    logprobs=policy.logprobs(s.prompt_ids, ids),
                    reward=score,
                    generation=generation,
                    advantage=0.0,
                    token_advantages=None,
                    temperature=TEMPERATURE,
                    sampled_step=step,
                    resampled=True,
                )
            )
        return out

    def record(self, report: BatchGroups) -> None:
        """Add a batch's counts to ``training.groups`` (``status``), with why resampling is off, if it is."""
        got = runtime_state.get(self.db, KEY)
        state: dict[str, Any] = dict(got.value) if got else {}
        for k in ("prompts", "resampled", "unscored", "groups", "flat"):
            state[k] = state.get(k, 0) + getattr(report, k)
        state["batches"] = state.get("batches", 0) + 1
        state["off"] = report.off
        state["last"] = {**report.as_dict(), "at": time.time()}
        runtime_state.put(self.db, KEY, state)


def _seed(key: str, step: int) -> int:
    """One seed per batch (its turn ids) and step: a retried batch draws the same answers, the next step new ones."""
    return int.from_bytes(hashlib.blake2b(f"{key}\x00{step}".encode(), digest_size=4).digest(), "big")
