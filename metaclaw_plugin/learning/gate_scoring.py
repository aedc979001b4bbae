"""The trainer's scorer: the slow loop's own rewards, for answers the trainer generated (the behaviour gate's,
:mod:`metaclaw_plugin.training.gate`, and those resampled for a group, :mod:`metaclaw_plugin.training.groups`).

An answer to a held-back turn's prompt is scored as a live answer to that turn would be: the verifier registered for
the turn's task type (``reward.verifiers``, or one registered in code) where there is one, else the reward judge
(PRM), whose verdicts are cached and charged to the judge's daily budget. The gate's answers have no evidence after
them (no tool result, no next message), so the judge decides on the instruction and the answer alone. A judge call
that fails leaves the prompt out of the comparison (the gate says how many were scored).

A judge on the host's own model (``learning.model: host``) is reachable only from the host's process: a trainer in
another process has none, and says so in ``status`` (the gate then compares with verifiers only).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace

from ..config import Settings
from ..privacy import Redactor
from ..store import AnyDatabase
from ..store.ledger import task_types
from ..training.trainer import Trainer
from ..types import Turn
from .llm import HOST, Budget, LLMError, client_for
from .reward import RewardJudge, Verifiers, judge_votes, view_of

log = logging.getLogger("metaclaw_plugin.learning")


class RewardScorer:
    def __init__(
        self,
        judge: RewardJudge | None,
        verifiers: Verifiers,
        task_type: Callable[[str], str | None],
        enabled: bool = True,
    ):
        self.judge = judge
        self.verifiers = verifiers
        self.task_type = task_type
        self.enabled = enabled
        self.errors = 0

    def _judge_off(self) -> str | None:
        if self.judge is None:
            return "no reward judge"
        why = self.judge.available()
        return f"the reward judge is off ({why})" if why else None

    def describe(self) -> str:
        judge = "no judge" if self._judge_off() else f"judge {self.judge.model if self.judge else ''}"
        return f"verifiers where registered, else {judge}"

    def unavailable(self) -> str | None:
        if not self.enabled:
            return "reward.enabled is off"
        off = self._judge_off()
        if off and not self.verifiers.registered():
            return f"{off} and no verifier is registered"
        return None

    def score(self, turn: Turn, answer: str) -> float | None:
        kind = self.task_type(turn.turn_id)
        view = view_of(replace(turn, response={"role": "assistant", "content": answer}), task_type=kind)
        if kind is not None and kind in self.verifiers:
            got = self.verifiers.run(kind, view)
            if got is not None:
                return got[0]
        if self.judge is None or self._judge_off():
            return None
        try:
            return self.judge.judge(view).score
        except LLMError as e:
            self.errors += 1
            log.warning("judging a generated answer failed (it is left out): %s", e)
            return None


def ledger_task_type(db: AnyDatabase) -> Callable[[str], str | None]:
    """A turn's host task type as the ledger stored it (None: none, or no ledger on this home yet)."""

    def read(turn_id: str) -> str | None:
        try:
            return task_types(db.query, [turn_id]).get(turn_id)
        except Exception:  # no learning loop ran on this home: no ledger
            return None

    return read


def score_gate(trainer: Trainer, settings: Settings, verifiers: Verifiers | None = None) -> Trainer:
    """``trainer``, its behaviour gate and its groups' resampled answers (:mod:`metaclaw_plugin.training.groups`)
    scoring with the slow loop's verifiers and judge (through the trainer's database: the judge's cache and daily
    budget are the learning loop's)."""
    if trainer.gate is None and trainer.groups is None:
        return trainer
    s = settings
    budget = Budget(
        trainer.db,
        {
            "judge": (s.reward.daily_calls, s.reward.daily_tokens),
            HOST: (s.learning.daily_calls, s.learning.daily_tokens),
        },
    )
    client = client_for(
        "judge",
        s.reward,
        budget=budget,
        local_only=s.privacy.local_only,
        redactor=Redactor.from_settings(s.privacy),
        learning=s.learning,
    )
    judge = RewardJudge(
        client,
        votes=judge_votes(s),
        temperature=s.reward.temperature,
        max_tokens=s.reward.max_tokens,
        max_chars=s.reward.max_turn_chars,
        db=trainer.db,
    )
    checks = verifiers or Verifiers(s.reward.verifiers, s.reward.verifier_timeout)
    scorer = RewardScorer(judge, checks, ledger_task_type(trainer.db), s.reward.enabled)
    for part in (trainer.gate, trainer.groups):
        if part is not None:
            part.scorer = scorer
    return trainer
