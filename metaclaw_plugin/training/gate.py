"""The behaviour gate (``training.gate``): a step's weights are published only when, on prompts never trained on,
their answers score no worse than the serving weights' beyond noise and the policy moved within a KL budget.

* **The slice.** Recent captured prompts held back from training when batches are drained
  (:meth:`~.buffer.SampleBuffer.hold_back_spare`): at most ``size``, filled only from a part batch that waits anyway,
  then turned over by one per drained batch, so it follows the user's current requests. Per tenant when a tenant is
  named (:meth:`BehaviourGate.check`), so a tenant's adapter is gated on its own prompts.
* **Before the optimiser step** the trainer's weights are the serving ones (the last published, or what a rollback
  or an undone step restored): each slice prompt is answered with them (locally in one batch), from one seed per slice.
* **After the step** the new weights answer the same prompts from the same seed (common random numbers: an
  unchanged policy gives the same answers, so the paired difference is exactly 0), and score both answers with the
  slow loop's own scorer (:class:`Scorer`: the verifier of the turn's task type, else the judge; wired by
  :func:`metaclaw_plugin.learning.gate_scoring.score_gate`). The step is refused when the mean paired difference is
  below ``-(tolerance + z * standard error)``: worse beyond noise, the band widening as the slice shrinks.
* **KL.** The serving answers' tokens are scored under the new weights: the mean per-token k3 estimate of
  KL(serving || new) (``r - 1 - log r``, ``r = p_new / p_serving``), unbiased on answers sampled at temperature 1.
  Over ``max_kl`` the step is refused whatever the scores say.
* **Not applied** (counted, never blocking): fewer than ``min_prompts`` prompts in the slice, or scored. With no
  scorer at all (no verifier, no judge) the success comparison is off, ``status`` says why, the KL budget still
  holds, and the trainer's likelihood check of the held-back rewarded answers stands in (local backend).
* A refused step is undone by the trainer (the backend's ``snapshot``/``restore``: weights and optimiser), consumed,
  not published, and counted with its reason. The gate asks ``should_continue`` between answers (and the local
  backend between tokens): a pause mid-gate undoes the step and puts the batch back.

Everything here runs in the trainer's thread, in the training window: nothing of it is on the request path.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any, Protocol

from ..store import AnyDatabase, runtime_state
from ..store.trajectories import TrajectoryStore
from ..types import Turn
from . import chat
from .buffer import SampleBuffer

log = logging.getLogger(__name__)

KEY = "training.gate"
NO_SCORER = "no scorer was wired to the trainer (a verifier or the reward judge)"


@dataclass(frozen=True)
class GateOptions:
    """``training.gate.*`` as the trainer uses them (see :class:`~metaclaw_plugin.config.GateSettings`)."""

    enabled: bool = True
    size: int = 8
    min_prompts: int = 4
    tolerance: float = 0.0
    z: float = 1.64
    max_kl: float = 0.1
    max_new_tokens: int = 96
    temperature: float = 1.0

    @classmethod
    def from_settings(cls, g: Any) -> GateOptions:
        return cls(**{f: getattr(g, f) for f in cls.__dataclass_fields__})


class Scorer(Protocol):
    """The slow loop's reward for an answer the gate generated (:mod:`metaclaw_plugin.learning.gate_scoring`)."""

    def describe(self) -> str:
        """What scores (``verifier``, ``judge``), for status."""
        ...

    def unavailable(self) -> str | None:
        """Why nothing can score here, or None."""
        ...

    def score(self, turn: Turn, answer: str) -> float | None:
        """``answer`` given to ``turn``'s prompt, scored in [-1, 1]; None when it cannot be (the prompt is left out)."""
        ...


@dataclass(frozen=True)
class Draw:
    """How the gate's answers are sampled: the same for both versions."""

    max_new_tokens: int
    temperature: float
    seed: int


class Policy(Protocol):
    """A backend's weights as the gate drives them (``backend.gate_policy()``)."""

    def generate(self, prompts: list[list[int]], draw: Draw, go_on: Callable[[], bool]) -> list[list[int]]:
        """Each prompt's answer ids (stops early when ``go_on()`` turns false)."""
        ...

    def logprobs(self, prompt: list[int], completion: list[int]) -> list[float]:
        """Each completion token's logprob under these weights (temperature 1)."""
        ...


@dataclass
class Prompt:
    turn: Turn
    ids: list[int]


@dataclass
class Pending:
    """What the gate took before the optimiser step: the undo point and the serving weights' answers."""

    snapshot: Any
    prompts: list[Prompt]
    serving: list[list[int]]  # answer ids per prompt
    serving_logprobs: list[list[float]]


@dataclass
class Verdict:
    publish: bool
    applied: bool  # False: too few prompts (or scores): published without the comparison
    reason: str  # why refused, or why not applied ("" when applied and published)
    refused_by: str = ""  # "success" | "kl" when refused
    prompts: int = 0
    scored: int = 0
    serving_mean: float | None = None
    new_mean: float | None = None
    diff: float | None = None  # mean paired difference, new - serving
    band: float | None = None  # tolerance + z * standard error
    kl: float | None = None
    scorer: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


PAUSED = "paused"
REFUSED = {"success": "the gate: success fell", "kl": "the gate: KL over its budget"}  # counted skip reasons


class BehaviourGate:
    def __init__(
        self,
        options: GateOptions,
        db: AnyDatabase,
        trajectories: TrajectoryStore,
        tokenizer: Any,
        *,
        max_prompt_tokens: int = 4096,
        scorer: Scorer | None = None,
    ):
        self.options = options
        self.db = db
        self.trajectories = trajectories
        self.tokenizer = tokenizer
        self.max_prompt_tokens = max_prompt_tokens
        self.scorer = scorer

    def scoring(self) -> str | None:
        """Why the success comparison is off (no scorer), or None when answers are scored."""
        if self.scorer is None:
            return NO_SCORER
        return self.scorer.unavailable()

    def hold_back(self, buffer: SampleBuffer, batch_size: int, tenant: str | None = None) -> None:
        """Turn the slice over (``tenant``'s own slice when given: a tenant's step is judged on its prompts)."""
        buffer.hold_back_spare(self.options.size, batch_size, tenant)

    def prompts(self, buffer: SampleBuffer, tenant: str | None = None) -> list[Prompt]:
        """The slice's prompts (of ``tenant``; None: every tenant's), as the policy answers them."""
        out = []
        for s in buffer.validation(tenant):
            turn = self.trajectories.get_turn(s.turn_id)
            if turn is None:
                continue
            ids = chat.prompt_ids(self.tokenizer, turn.messages, turn.tools)
            if len(ids) + self.options.max_new_tokens <= self.max_prompt_tokens:
                out.append(Prompt(turn, ids))
        return out

    def _answers(self, policy: Policy, prompts: list[Prompt], go_on: Callable[[], bool]) -> list[list[int]]:
        """The answers to the slice, drawn from one seed per slice: the same draws for both versions."""
        o = self.options
        key = "\x00".join(sorted(p.turn.turn_id for p in prompts)).encode()
        seed = int.from_bytes(hashlib.blake2b(key, digest_size=4).digest(), "big")
        return policy.generate([p.ids for p in prompts], Draw(o.max_new_tokens, o.temperature, seed), go_on)

    def check(
        self, backend: Any, buffer: SampleBuffer, go_on: Callable[[], bool], tenant: str | None = None
    ) -> Pending | Verdict | str:
        """Before the optimiser step: the serving weights' answers (a :class:`Pending`), a :class:`Verdict` when
        the gate does not apply (published ungated, counted), or :data:`PAUSED`."""
        self._state()  # what scores (or why nothing does) is in status before the first verdict
        prompts = self.prompts(buffer, tenant)
        if len(prompts) < self.options.min_prompts:
            return self._record(
                Verdict(
                    True,
                    False,
                    f"{len(prompts)} held-back prompts, fewer than {self.options.min_prompts}",
                    prompts=len(prompts),
                )
            )
        policy = backend.gate_policy()
        answers = self._answers(policy, prompts, go_on)
        logprobs = []
        for p, ids in zip(prompts, answers):
            if not go_on():
                return PAUSED
            logprobs.append(policy.logprobs(p.ids, ids) if ids else [])
        return Pending(backend.snapshot(), prompts, answers, logprobs)

    def judge(self, backend: Any, pending: Pending, go_on: Callable[[], bool]) -> Verdict | str:
        """After the optimiser step: the :class:`Verdict` on the new weights, or :data:`PAUSED`."""
        policy = backend.gate_policy()
        shifts = []
        for p, ids, before in zip(pending.prompts, pending.serving, pending.serving_logprobs):
            if not go_on():
                return PAUSED
            if ids:
                shifts += [a - b for a, b in zip(policy.logprobs(p.ids, ids), before)]
        kl = sum(math.expm1(d) - d for d in shifts) / len(shifts) if shifts else 0.0
        off = self.scoring()
        verdict = Verdict(True, off is None, "", prompts=len(pending.prompts), kl=kl, scorer=self._scorer_name())
        if off is None:
            fresh = self._answers(policy, pending.prompts, go_on)
            if not go_on():
                return PAUSED
            pairs = [self._score_pair(p.turn, old, new) for p, old, new in zip(pending.prompts, pending.serving, fresh)]
            verdict = self._compare(verdict, [pair for pair in pairs if pair is not None])
        else:
            verdict.reason = f"success not compared: {off}"
        if kl > self.options.max_kl:
            verdict.publish, verdict.refused_by = False, "kl"
            verdict.reason = f"the gate: KL {kl:.3g} over the budget {self.options.max_kl:g}"
        return self._record(verdict)

    def _scorer_name(self) -> str:
        return self.scorer.describe() if self.scorer is not None else "none"

    def _score_pair(self, turn: Turn, old: list[int], new: list[int]) -> tuple[float, float] | None:
        assert self.scorer is not None
        if old == new:  # the same answer scores the same: no call, no judge noise
            s = self.scorer.score(turn, chat.answer_text(self.tokenizer, old))
            return None if s is None else (s, s)
        a = self.scorer.score(turn, chat.answer_text(self.tokenizer, old))
        b = self.scorer.score(turn, chat.answer_text(self.tokenizer, new))
        return None if a is None or b is None else (a, b)

    def _compare(self, verdict: Verdict, pairs: list[tuple[float, float]]) -> Verdict:
        """The paired test: refused when the mean difference is below ``-(tolerance + z * se)``."""
        o = self.options
        n = verdict.scored = len(pairs)
        if n < o.min_prompts:
            return replace(verdict, applied=False, reason=f"{n} prompts scored, fewer than {o.min_prompts}")
        diffs = [new - old for old, new in pairs]
        mean = sum(diffs) / n
        var = sum((d - mean) ** 2 for d in diffs) / (n - 1) if n > 1 else 0.0
        band = o.tolerance + o.z * math.sqrt(var / n)
        verdict.serving_mean = sum(p[0] for p in pairs) / n
        verdict.new_mean = sum(p[1] for p in pairs) / n
        verdict.diff, verdict.band = mean, band
        if mean < -band:
            verdict.publish, verdict.refused_by = False, "success"
            verdict.reason = f"the gate: success fell by {-mean:.3g} (noise band {band:.3g}, {n} prompts)"
        return verdict

    def _state(self) -> dict[str, Any]:
        """The stored state, its ``scoring_off`` brought up to date."""
        got = runtime_state.get(self.db, KEY)
        state: dict[str, Any] = dict(got.value) if got else {}
        if "scoring_off" not in state or state["scoring_off"] != self.scoring():
            state["scoring_off"] = self.scoring()
            runtime_state.put(self.db, KEY, state)
        return state

    def _record(self, verdict: Verdict) -> Verdict:
        """Counted in ``training.gate`` (``status``): applied, refused with the reason, or not applied and why."""
        state = self._state()
        counts = state.setdefault("counts", {"applied": 0, "refused": 0, "not_applied": 0})
        if not verdict.publish:
            counts["refused"] += 1
            reasons = state.setdefault("refused_by", {})
            reasons[verdict.refused_by] = reasons.get(verdict.refused_by, 0) + 1
        elif verdict.applied:
            counts["applied"] += 1
        else:
            counts["not_applied"] += 1
        state["last"] = {**verdict.as_dict(), "at": time.time()}
        runtime_state.put(self.db, KEY, state)
        level = logging.WARNING if not verdict.publish else logging.INFO
        log.log(
            level, "behaviour gate: %s", verdict.reason or f"passed ({verdict.scored} prompts, diff {verdict.diff})"
        )
        return verdict


def gate_state(db: AnyDatabase) -> dict[str, Any] | None:
    """What the gate and the live watch counted (``status``), None before either ran."""
    got = runtime_state.get(db, KEY)
    return dict(got.value) if got else None
