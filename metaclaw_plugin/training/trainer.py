"""The slow loop's trainer: fresh batches from the sample buffer -> one optimiser step -> published weights.

The pause contract (the scheduler codes against it):

* :meth:`Trainer.ready`: a fresh batch (``training.batch_size`` samples of the current generation) waits.
* :meth:`Trainer.run(should_continue, max_steps)`: steps while batches are ready. ``should_continue`` is
  asked before each step and between micro-batches of a step; when it turns false before the optimiser
  step, the accumulated gradients are discarded and the batch is released to the buffer (still filtered by
  generation when it is drained again): nothing is applied.
* Before the optimiser step the batch must still be fresh (:meth:`SampleBuffer.is_fresh`): a generation
  bump mid-batch drops it, unapplied, and counts it.
* A batch with no signal (every trained token's advantage is 0: equal rewards, a batch of one, groups of one)
  is **skipped**: no forward pass, no optimiser step (Adam's moments would still move the weights), nothing
  published; its samples are consumed as ``skipped`` and the skip is counted with its reason
  (:func:`skipped_steps`, ``status``, and the next applied step's ``detail.skipped``).
* **The validation gate** (``training.validation_size`` > 0, local backend): one sample per drained batch is
  held back, up to that many, as a validation set of the user's own rewarded turns (never trained on). Its
  score is ``sum_i (r_i - mean r) * mean logp(answer_i) / n``: it rises when rewarded answers become likelier
  against punished ones. A step that lowers it by more than ``training.validation_tolerance`` is undone
  (weights and optimiser state restored), not published, and counted as skipped ("validation score fell").
* **The behaviour gate** (``training.gate``, :mod:`.gate`, both backends): the serving and the new weights answer
  held-back prompts around the optimiser step; a step whose answers score worse beyond noise, or whose KL to the
  serving weights passes its budget, is undone the same way and counted ("the gate: ..."). With no scorer the
  validation check above stands in on the gate's slice. A pause mid-gate undoes the step and releases its batch.
* **The live watch** (``training.gate.watch``, :mod:`.watchdog`) runs before each run's steps: a published version
  whose live rewards fell beyond noise is rolled back, and the trainer follows the rollback.
* **Scope** (``training.scope``): ``tenant`` trains each tenant's own weights on that tenant's samples only. A
  window trains the tenants with a ready batch in turn; each step puts the tenant's weights in the backend first
  (:class:`~.tenants.TenantSlots`), validates and gates it on that tenant's held-back turns and prompts only, and publishes a version of that
  tenant's weights only (step numbers are unique across tenants). ``global`` trains one set on every tenant's.
* An exception mid-step (a backend error, out of memory) discards the accumulated gradients (and the Tinker
  backend's staged datums), puts the batch back in the queue, and is raised to the caller.

Each applied step acknowledges its samples, saves sampler weights, stores them as the latest
(:func:`~.weights.store_latest`, for served policies in other processes) and calls ``publish`` (an
in-process served policy swaps at once); every ``checkpoint_every`` steps it saves a full state, which a new
trainer resumes from (with the published weights of later steps loaded over it). A backend that cannot load
published weights into training (Tinker) saves a full state with every step, before publishing it: a restart
(even a kill mid-window) never reverts a published step or publishes its number again, and a step whose result
was lost (:class:`~.backends.StepInDoubt`) is settled by restoring the last state before its batch is retried, so
no batch is applied twice. Should published steps still lack a state (one the service no longer holds), the
restart says so (``training.reverted``) and numbers on after them. A superseded checkpoint gets the backend's TTL
(``expire``); the latest never expires. Metrics go to the ``train_steps`` table (:mod:`metaclaw_plugin.store.steps`).

**Groups** (``training.group_size``, :mod:`.groups`): after a batch is drained and built, each captured prompt is
answered ``group_size - 1`` more times by the weights the backend holds, scored, and trained in its prompt's group;
a pause while the answers are drawn releases the batch. In ``group`` and ``task`` advantages, a group whose rewards
are all equal (within ``training.group_tolerance``, relative to the reward scale) in a batch that has signal
elsewhere is consumed as skipped and counted (``groups``): its zero advantages would add no gradient, only tokens
to the norm (and requests to a remote service). Buffer rows, ``samples_used`` and the step's mean reward are the
captured turns'; the resampled answers are counted in ``detail.groups``.

A consumed batch (applied, or acknowledged because none of it could become a sample) goes to ``on_batch``
last: the learning side queues a batch that mostly failed for the skill evolver there
(:mod:`metaclaw_plugin.learning.failed_batches`); it only writes rows, and its failure never fails the step.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from ..store import AnyDatabase, runtime_state, steps
from ..store.ledger import task_types
from ..store.trajectories import TrajectoryStore
from ..types import Sample, Turn
from .advantages import TIE, group_advantages, grpo_advantages, tied
from .backends import Backend, StepInDoubt
from .buffer import SampleBuffer
from .gate import PAUSED, REFUSED, BehaviourGate, Pending, Verdict
from .groups import BatchGroups, GroupSampler
from .samples import SampleError, TrainSample, build_sample
from .tenants import TenantSlots, checkpoint_of, store_checkpoint
from .weights import WeightsRef, by_tenant, latest, store_latest

log = logging.getLogger(__name__)

CHECKPOINT_KEY = "training.checkpoint"
SKIPPED_KEY = "training.skipped"
RUN_KEY = "training.run"  # the remote training run the trainer steps (tinker): its id and what it continues
REVERTED_KEY = "training.reverted"  # published steps a restart could not resume (no full state of them)
SUCCESS = 0.0  # a reward above this counts as a success
GROUP_SKIP = "a group with equal rewards"


class Watch(Protocol):
    """The live watch the trainer runs before its steps (:class:`~.watchdog.LiveWatch`, which imports the trainer)."""

    def check(self, tenant: str | None = None) -> Any: ...


@dataclass
class StepResult:
    outcome: str  # "applied" | "paused" | "stale" | "unusable" | "skipped" | "held_back"
    step: int
    loss: float | None = None
    samples: int = 0  # trained on
    dropped: int = 0  # stale, or turns that could not become samples
    reason: str = ""  # why a step was skipped


@dataclass
class RunReport:
    steps: int = 0  # optimiser steps applied
    step: int = 0  # the trainer's step counter after the run
    paused: bool = False  # should_continue turned false
    stale_batches: int = 0
    skipped_batches: int = 0  # no signal (all advantages 0): consumed, not applied
    held_back: int = 0  # steps undone because they lowered the validation score
    samples_used: int = 0
    samples_dropped: int = 0  # stale, or turns that could not become samples
    reason: str = ""
    results: list[StepResult] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class TrainerOptions:
    batch_size: int = 4
    micro_batch_size: int = 1
    micro_batch_tokens: int = 2048  # padded tokens per forward-backward (see :func:`micro_batches`)
    max_tokens: int = 4096
    loss_fn: str = "importance_sampling"
    checkpoint_every: int = 10
    advantage: str = "group"  # "batch" | "group" | "task"
    group_tolerance: float = TIE  # rewards of a group within this (relative to their scale) are equal: no signal
    off_policy: str = "drop"  # "drop" | "reinforce": answers the served policy did not sample
    max_staleness: int = 8  # answers sampled by weights more steps behind than this are dropped
    validation_size: int = 0  # held-back rewarded turns that gate each step (0: no gate)
    validation_tolerance: float = 0.0
    scope: str = "global"  # "tenant": each tenant's own weights (:mod:`.tenants`) | "global": one set for all


class Trainer:
    def __init__(
        self,
        backend: Backend,
        buffer: SampleBuffer,
        trajectories: TrajectoryStore,
        db: AnyDatabase,
        *,
        tokenizer: Any,
        options: TrainerOptions | None = None,
        publish: Callable[[WeightsRef], None] | None = None,
        teacher: Callable[[list[TrainSample]], None] | None = None,
        on_batch: Callable[[list[Sample]], object] | None = None,
        gate: BehaviourGate | None = None,
        watch: Watch | None = None,
        groups: GroupSampler | None = None,
    ):
        self.backend = backend
        self.buffer = buffer
        self.trajectories = trajectories
        self.db = db
        self.tokenizer = tokenizer
        self.options = options or TrainerOptions()
        self.publish = publish
        self.teacher = teacher  # OPD: adds a reverse-KL term to the samples' token advantages
        self.on_batch = on_batch
        self.gate = gate  # the behaviour gate before publishing (gate.py)
        self.watch = watch  # the live watch after publishing: rolls a worse version back (watchdog.py)
        self.groups = groups  # resamples answers to each captured prompt for its group (groups.py)
        self._batch_groups: BatchGroups | None = None  # what the batch being stepped resampled and grouped
        self.step = 0
        self.publish_errors = 0
        self.expire_errors = 0
        self.on_batch_errors = 0
        self._dropped = 0  # dropped since the last recorded step (written with the next one)
        self._skipped = 0  # batches skipped (no signal) since the last recorded step
        self.resume_error: str | None = None
        self._state_step = 0  # the step of the last full state (saved or resumed)
        self._stepping = False  # the optimiser step was sent and the step is not recorded yet
        self._in_doubt = False  # a step failed after it was sent: the last full state is reloaded before a retry
        self.tenants = TenantSlots(backend, db) if self.options.scope == "tenant" else None
        if self.tenants is not None:  # each tenant resumes when its turn comes (TenantSlots.activate)
            self.step, self.resumed_from = steps.newest(db.query), None
        else:
            self.resumed_from = self._resume()

    @property
    def _states_only(self) -> bool:
        """The backend resumes from full states only: it cannot load published weights into training (tinker)."""
        return getattr(self.backend, "load_weights", None) is None

    # Resume ------------------------------------------------------------------------------------
    def _resume(self) -> str | None:
        resumed = self._resume_state()
        if self._states_only:
            self._note_reverted()
        return self._resume_newer_weights() or resumed

    def _note_reverted(self) -> None:
        """Published steps newer than the resumed full state (a state that could not be saved or loaded) are not
        trained on: said in the log and ``status``, and the step numbers go on after them, so no version number is
        published twice for different weights."""
        ref = latest(self.db)
        if ref is None or ref.step <= self.step or ref.backend != self.backend.name:
            return
        if ref.base_model != self.backend.base_model:
            return
        log.error(
            "published steps %d-%d have no full state to resume from: training goes on from step %d's state, "
            "numbered after step %d",
            self.step + 1,
            ref.step,
            self.step,
            ref.step,
        )
        event = {"published": ref.step, "resumed": self.step, "why": self.resume_error, "at": time.time()}
        runtime_state.put(self.db, REVERTED_KEY, event)
        self.step = ref.step

    def _resume_state(self) -> str | None:
        got = runtime_state.get(self.db, CHECKPOINT_KEY)
        if got is None:
            return None
        saved = got.value
        if saved.get("backend") != self.backend.name or saved.get("base_model") != self.backend.base_model:
            log.warning("checkpoint %s is for another backend or model; starting fresh", saved.get("path"))
            return None
        try:
            self.backend.load_state(saved["path"])
        except Exception as e:  # a checkpoint deleted or torn by hand: train on, from the base, and say so
            self.resume_error = f"cannot resume from {saved['path']}: {e}"
            log.error("%s; its optimiser state is lost (the latest published weights still load)", self.resume_error)
            return None
        self.step = self._state_step = int(saved["step"])
        return str(saved["path"])

    def _resume_newer_weights(self) -> str | None:
        """Every step publishes its weights, a full state comes every ``checkpoint_every``: the steps after the
        last full state acknowledged their samples, so their weights (the latest published) are loaded over it
        (the optimiser's moments stay those of the full state). Backends that cannot load sampler weights into
        training (tinker) resume from the full state alone."""
        ref = latest(self.db)
        load = getattr(self.backend, "load_weights", None)
        if ref is None or load is None or ref.step <= self.step:
            return None
        if ref.backend != self.backend.name or ref.base_model != self.backend.base_model:
            return None
        try:
            load(ref.path)
        except Exception as e:
            log.error(
                "cannot load the weights of step %d (%s): %s; resuming from step %d", ref.step, ref.path, e, self.step
            )
            return None
        self.step = ref.step
        return ref.path

    def follow_rollback(self) -> bool:
        """``train rollback`` published an earlier step's weights: train on from them (the optimiser's moments of
        the abandoned steps are dropped). True when it did. Per tenant, :meth:`TenantSlots.activate` follows."""
        if self.tenants is not None:
            return False
        ref = latest(self.db)
        if ref is None or ref.step >= self.step or ref.backend != self.backend.name:
            return False
        load = getattr(self.backend, "load_weights", None)
        if load is None:  # tinker: the rollback named the target's full state
            self._load_saved_state(ref.step)
        else:
            load(ref.path)
            reset = getattr(self.backend, "reset_optimizer", None)
            if reset is not None:
                reset()
        log.info("rolled back: training on from step %d (%s)", ref.step, ref.path)
        self.step = ref.step
        return True

    def _load_saved_state(self, step: int) -> None:
        """Load the full state the home names (:data:`CHECKPOINT_KEY`), which must be step ``step``'s."""
        got = runtime_state.get(self.db, CHECKPOINT_KEY)
        if got is None or int(got.value["step"]) != step:
            have = got.value["step"] if got else "none"
            raise RuntimeError(f"no full state of step {step} to train on from (the home's is step {have})")
        self.backend.load_state(got.value["path"])
        self._state_step = step

    def _restore_last_state(self) -> None:
        """A step failed after it was sent: whether the service applied it is unknown, so its weights go back to
        the last full state (saved with every step on such a backend), and its batch, released, is applied once."""
        got = runtime_state.get(self.db, CHECKPOINT_KEY)
        if got is None:
            raise RuntimeError("a step's outcome is unknown and there is no full state to restore: not retrying")
        self.backend.load_state(got.value["path"])  # raises while the service is unreachable: retried next window
        self._in_doubt = False
        self._state_step = int(got.value["step"])
        if self._state_step != self.step:
            log.warning(
                "the step in doubt went back to step %d's state (the trainer was at %d)", self._state_step, self.step
            )
            self.step = self._state_step
            self._note_reverted()
        log.info("restored step %d's full state after a step whose outcome was lost", self._state_step)

    # The pause contract ------------------------------------------------------------------------------
    def ready(self) -> bool:
        if self.tenants is not None:
            return bool(self.buffer.ready_tenants(self.options.batch_size))
        return self.buffer.fresh_count() >= self.options.batch_size

    @property
    def tenant(self) -> str | None:
        """The tenant whose weights the backend holds (None: every tenant's, scope global)."""
        return self.tenants.active if self.tenants is not None else None

    def _turn(self) -> bool:
        """Scope tenant: put the weights of the next tenant with a ready batch in the backend; False when none
        has one. Scope global: nothing to choose."""
        if self.tenants is None:
            return True
        tenant = self.tenants.next(self.buffer.ready_tenants(self.options.batch_size))
        if tenant is None:
            return False
        self.tenants.activate(tenant)
        return True

    def run(self, should_continue: Callable[[], bool], max_steps: int | None = None) -> RunReport:
        report = RunReport(step=self.step)
        if self._in_doubt:
            self._restore_last_state()  # before any batch is retried: the service's weights are the last state's
        if self.watch is not None:  # a rollback it publishes is followed below (per tenant: TenantSlots.activate)
            for tenant in sorted(by_tenant(self.db)) if self.tenants is not None else [None]:
                self.watch.check(tenant)
        while max_steps is None or report.steps < max_steps:
            self.follow_rollback()
            if not should_continue():
                report.paused, report.reason = True, "paused"
                break
            if not self._turn():
                report.reason = "no fresh batch"
                break
            if self.options.validation_size and hasattr(self.backend, "answer_logprobs"):
                self.buffer.hold_back(self.options.validation_size, keep=self.options.batch_size, tenant=self.tenant)
            if self.gate is not None:
                self.gate.hold_back(self.buffer, self.options.batch_size, tenant=self.tenant)
            batch = self.buffer.drain(self.options.batch_size, tenant=self.tenant)
            if not batch:
                report.reason = "no fresh batch"
                break
            result = self._step(batch, should_continue)
            report.results.append(result)
            report.samples_used += result.samples
            report.samples_dropped += result.dropped
            report.steps += result.outcome == "applied"
            report.stale_batches += result.outcome == "stale"
            report.skipped_batches += result.outcome == "skipped"
            report.held_back += result.outcome == "held_back"
            if result.outcome == "paused":
                report.paused, report.reason = True, "paused mid-step (batch released)"
                break
        else:
            report.reason = "max_steps reached"
        report.step = self.step
        return report

    # One step -------------------------------------------------------------------------------------
    def build(
        self, batch: Sequence[Sample], should_continue: Callable[[], bool] = lambda: True
    ) -> tuple[list[TrainSample], list[str]]:
        """Training samples for a drained batch, the answers resampled for their groups among them (:mod:`.groups`),
        and the turn ids that could not become one. Resampling stops when ``should_continue()`` turns false."""
        out: list[TrainSample] = []
        unusable: list[str] = []
        turns: dict[str, Turn] = {}
        versions = None if self.tenants is None else list(steps.weights(self.db, self.tenant))
        for s in batch:
            turn = self.trajectories.get_turn(s.turn_id)
            try:
                if turn is None:
                    raise SampleError(f"turn {s.turn_id} is not in the store")
                built = build_sample(turn, s, self.tokenizer, self.db)
                if len(built.tokens) > self.options.max_tokens:
                    raise SampleError(f"{len(built.tokens)} tokens, more than training.max_tokens")
                if built.logprobs is None and self.options.off_policy == "drop":
                    raise SampleError("the served policy did not sample this answer (training.off_policy: drop)")
                sampled = built.sampled_step or 0  # the tenant's own versions since (scope tenant), else all steps
                behind = self.step - sampled if versions is None else sum(v > sampled for v in versions)
                if built.logprobs is not None and behind > self.options.max_staleness:
                    raise SampleError(f"sampled {behind} steps ago, more than training.max_staleness")
                out.append(built)
                turns[s.turn_id] = turn
            except SampleError as e:
                log.info("sample %s skipped: %s", s.turn_id, e)
                unusable.append(s.turn_id)
        self._batch_groups = None
        if self.groups is not None and out:
            weights = self.step if self.tenants is None else self.tenants.step  # the version the backend holds
            more, self._batch_groups = self.groups.resample(
                self.backend, out, turns, step=weights, generation=self.buffer.generation, go_on=should_continue
            )
            out += more
        rewards = [t.reward for t in out]
        if self.options.advantage == "group":
            keys = [t.prompt_key for t in out]
        elif self.options.advantage == "task":
            kinds = _task_types(self.db, [t.turn_id for t in out])
            keys = [kinds.get(t.turn_id) or t.prompt_key for t in out]
        else:
            keys = [""] * len(out)
        tol = self.options.group_tolerance
        advantages = (
            grpo_advantages(rewards, tolerance=tol)
            if self.options.advantage == "batch"
            else group_advantages(rewards, keys, tolerance=tol)
        )
        for t, a, k in zip(out, advantages, keys):
            t.advantage, t.group = a, k
        if self.teacher is not None and out:
            self.teacher(out)
        return out, unusable

    def _step(self, batch: list[Sample], should_continue: Callable[[], bool]) -> StepResult:
        ids = [s.turn_id for s in batch]
        try:
            return self._try_step(batch, ids, should_continue)
        except BaseException as e:
            self.backend.discard()  # no gradient or staged datum of this batch leaks into the next step
            if isinstance(e, StepInDoubt) or (self._stepping and self._states_only):
                self._in_doubt = True  # the service may have applied it: restore the last state before a retry
            released = self.buffer.release(ids)
            log.exception(
                "training step %d failed; its gradients were discarded, %d samples released", self.step + 1, released
            )
            raise

    def _try_step(self, batch: list[Sample], ids: list[str], should_continue: Callable[[], bool]) -> StepResult:
        started = time.perf_counter()
        samples, unusable = self.build(batch, should_continue)
        resampling = self._batch_groups is not None and self._batch_groups.off is None
        if resampling and not should_continue():  # a pause mid-resampling: the batch waits for the next window
            return self._abandon(ids, "paused")
        if not samples:
            self.buffer.ack(ids)  # nothing trainable in them: consumed, not retried forever
            self._dropped += len(ids)
            self._consumed(batch)
            return StepResult("unusable", self.step, dropped=len(ids))
        tol = self.options.group_tolerance
        reason = no_signal(samples, self.options.advantage, tol)
        flat = flat_groups(samples, tol)
        self._count_groups(samples, flat, reason is not None)
        if reason:
            return self._skip(batch, ids, samples, unusable, reason)
        if flat:  # groups without variance add no gradient, only tokens to the norm: consumed as skipped, counted
            gone = {t.turn_id for g in flat for t in g}  # a captured turn's resampled answers share its id
            samples, ids = [t for t in samples if t.turn_id not in gone], [i for i in ids if i not in gone]
            self.buffer.skip(gone)
            _count_skip(self.db, GROUP_SKIP, len(gone), batches=0, groups=len(flat))
            log.info(
                "%d groups without variance skipped (%d samples); the batch's other groups train", len(flat), len(gone)
            )
        norm = float(sum(sum(t.mask) for t in samples))
        loss = 0.0
        for micro in micro_batches(samples, self.options.micro_batch_size, self.options.micro_batch_tokens):
            if not should_continue():
                return self._abandon(ids, "paused")
            loss += self.backend.forward_backward(micro, self.options.loss_fn, norm)
        if not should_continue():
            return self._abandon(ids, "paused")
        if not self.buffer.is_fresh(ids):
            return self._abandon(ids, "stale")
        gate = self._gate()
        check = None
        if self.gate is not None:  # per tenant, judged on that tenant's held-back prompts only
            check = self.gate.check(self.backend, self.buffer, should_continue, tenant=self.tenant)
        if check == PAUSED:
            return self._abandon(ids, "paused")
        self._stepping = True  # from here a failure may leave the step applied on a remote service
        try:
            return self._apply(batch, ids, samples, unusable, norm, loss, gate, check, started, should_continue)
        finally:
            self._stepping = False

    def _apply(
        self,
        batch: list[Sample],
        ids: list[str],
        samples: list[TrainSample],
        unusable: list[str],
        norm: float,
        loss: float,
        gate: tuple[Any, list[TrainSample], float] | None,
        check: Pending | Verdict | str | None,
        started: float,
        should_continue: Callable[[], bool],
    ) -> StepResult:
        reported = self.backend.optim_step()
        if gate is not None:
            snap, val, before = gate
            after = _validation_score(val, self.backend.answer_logprobs(val))  # type: ignore[attr-defined]
            validation: dict[str, Any] | None = {"n": len(val), "before": before, "after": after}
            if after < before - self.options.validation_tolerance:
                why = f"the validation score fell from {before:.4g} to {after:.4g}"
                return self._hold_back(batch, ids, samples, unusable, snap, "validation score fell", why)
        else:
            validation = None
        verdict = check
        if isinstance(check, Pending):  # the behaviour gate: the new weights answer the held-back prompts
            assert self.gate is not None
            verdict = self.gate.judge(self.backend, check, should_continue)
            if verdict == PAUSED:  # the step is undone and its batch waits for the next window
                self.backend.restore(check.snapshot)  # type: ignore[attr-defined]
                return self._abandon(ids, "paused")
            if isinstance(verdict, Verdict) and not verdict.publish:
                reason = REFUSED[verdict.refused_by]
                return self._hold_back(batch, ids, samples, unusable, check.snapshot, reason, verdict.reason)
        # a remote step (tinker) takes seconds: a bump meanwhile cannot be undone there, but is said, not hidden
        stale_during_step = not self.buffer.is_fresh(ids)
        if stale_during_step:
            log.warning("the skills evolved during step %d: it trained on samples now stale", self.step + 1)
        loss = loss if reported is None else reported
        self.step += 1
        self.buffer.ack(ids)
        seconds = time.perf_counter() - started
        tokens = sum(len(t.tokens) for t in samples)
        # a backend that resumes from full states only saves one with every step, before publishing it: a published
        # step is never reverted by a restart, and a step whose outcome was lost is undone by reloading the last
        checkpoint = self._checkpoint(force=True) if self._states_only else None
        weights = self._publish()
        checkpoint = checkpoint or self._checkpoint()
        rewards = [t.reward for t in samples if not t.resampled]  # the live turns' (the groups' are in detail)
        used = len(rewards)
        self._record(
            loss=loss,
            mean_reward=sum(rewards) / len(rewards),
            success_rate=sum(r > SUCCESS for r in rewards) / len(rewards),
            used=used,
            seconds=seconds,
            tokens_per_s=tokens / seconds if seconds > 0 else None,
            weights=weights,
            checkpoint=checkpoint,
            detail={
                "loss_fn": self.options.loss_fn,
                "tokens": tokens,
                "trained_tokens": int(norm),
                "unusable": len(unusable),
                "behaviour_logprobs": sum(t.logprobs is not None for t in samples),
                "skipped": self._skipped,
                "stale_during_step": stale_during_step,
                "validation": validation,
                "gate": verdict.as_dict() if isinstance(verdict, Verdict) else None,
                "groups": self._batch_groups.as_dict() if self._batch_groups is not None else None,
                **self.backend.step_metrics(),  # grad_norm (before clipping), kl to the base model
            },
        )
        self._dropped += len(unusable)
        self._consumed(batch)
        return StepResult("applied", self.step, loss=loss, samples=used, dropped=len(unusable))

    def _skip(
        self, batch: list[Sample], ids: list[str], samples: list[TrainSample], unusable: list[str], reason: str
    ) -> StepResult:
        """A batch with nothing to learn from: consumed as ``skipped``, counted with its reason, not applied."""
        self.backend.discard()
        captured = _captured(samples)
        self.buffer.skip(captured)
        self.buffer.ack(unusable)
        self._dropped += len(unusable)
        self._skipped += 1
        _count_skip(self.db, reason, len(captured))
        log.info("training batch skipped (%s): %d samples consumed, no step taken", reason, len(captured))
        self._consumed(batch)
        return StepResult("skipped", self.step, samples=0, dropped=len(unusable), reason=reason)

    def _gate(self) -> tuple[Any, list[TrainSample], float] | None:
        """(snapshot, validation samples, score before the step), or None when no gate applies. The likelihood
        check runs when asked for (``validation_size``), and stands in for a behaviour gate that has no scorer."""
        stands_in = self.gate is not None and self.gate.scoring() is not None
        if not (self.options.validation_size or stands_in) or not hasattr(self.backend, "answer_logprobs"):
            return None
        val = []
        for s in self.buffer.validation(self.tenant):
            turn = self.trajectories.get_turn(s.turn_id)
            try:
                if turn is not None:
                    val.append(build_sample(turn, s, self.tokenizer, self.db))
            except SampleError:
                continue
        if len({t.reward for t in val}) < 2:
            return None  # nothing to compare yet: the step is not gated
        backend: Any = self.backend
        return backend.snapshot(), val, _validation_score(val, backend.answer_logprobs(val))

    def _hold_back(
        self,
        batch: list[Sample],
        ids: list[str],
        samples: list[TrainSample],
        unusable: list[str],
        snap: Any,
        reason: str,
        why: str,
    ) -> StepResult:
        """The step lowered the validation score, or the behaviour gate refused it: undone (weights and
        optimiser), not published, consumed."""
        self.backend.restore(snap)  # type: ignore[attr-defined]
        log.warning("step %d held back: %s", self.step + 1, why)
        captured = _captured(samples)
        self.buffer.skip(captured)
        self.buffer.ack(unusable)
        self._dropped += len(unusable)
        self._skipped += 1
        _count_skip(self.db, reason, len(captured))
        self._consumed(batch)
        return StepResult("held_back", self.step, dropped=len(unusable), reason=reason)

    def _count_groups(self, samples: list[TrainSample], flat: list[list[TrainSample]], skipped: bool) -> None:
        """The batch's groups, and those skipped without variance (every group of a batch ``skipped`` for lack of
        signal), to ``status`` and the step's ``detail.groups``."""
        report = self._batch_groups
        if report is None or self.groups is None:
            return
        report.groups = len({t.group for t in samples})
        report.flat = report.groups if skipped else len(flat)
        self.groups.record(report)

    def _consumed(self, batch: list[Sample]) -> None:
        if self.on_batch is None:
            return
        try:
            self.on_batch(batch)
        except Exception:
            self.on_batch_errors += 1
            log.exception("handing step %d's batch on failed; the step stands", self.step)

    def _abandon(self, ids: list[str], outcome: str) -> StepResult:
        self.backend.discard()
        if outcome == "paused":
            self.buffer.release(ids)
            return StepResult("paused", self.step)
        self._dropped += len(ids)  # the bump already dropped them in the buffer
        return StepResult("stale", self.step, dropped=len(ids))

    def _publish(self) -> str:
        previous = latest(self.db, self.tenant)
        ref = WeightsRef(
            step=self.step,
            backend=self.backend.name,
            base_model=self.backend.base_model,
            path=self.backend.save_sampler(self.step),
            tenant=self.tenant,
        )
        if self.tenants is not None:
            self.tenants.trained(self.step)
        store_latest(self.db, ref)
        if previous is not None and previous.backend == ref.backend:
            self._supersede(previous.path, ref.path)
        run_info = getattr(self.backend, "run_info", None)
        run = run_info() if run_info is not None else None
        if run:  # the remote training run these weights came from, and the run it continues (status)
            runtime_state.put(self.db, RUN_KEY, {**run, "new_because": self.resume_error, "step": self.step})
        if self.publish is not None:
            try:
                self.publish(ref)
            except Exception:
                self.publish_errors += 1
                log.exception("publishing weights of step %d failed; they are stored as the latest", self.step)
        return ref.path

    def _checkpoint(self, force: bool = False) -> str | None:
        # every checkpoint_every steps of these weights: a tenant's own steps (this one is not recorded yet)
        nth = self.step if self.tenant is None else len(steps.weights(self.db, self.tenant)) + 1
        if nth % self.options.checkpoint_every and not force:
            return None
        previous = self._saved_state()
        path = self.backend.save_state(self.step)
        self._state_step = self.step
        value = {"step": self.step, "path": path, "backend": self.backend.name, "base_model": self.backend.base_model}
        if self.tenant is not None:
            with self.db.transaction() as c:
                store_checkpoint(c, self.tenant, value)
        else:
            runtime_state.put(self.db, CHECKPOINT_KEY, value)
        if previous is not None and previous.get("backend") == self.backend.name:
            self._supersede(previous["path"], path)
        return path

    def _saved_state(self) -> dict[str, Any] | None:
        """The latest full state of the weights being trained (the active tenant's under scope tenant)."""
        if self.tenant is not None:
            return checkpoint_of(self.db, self.tenant)
        got = runtime_state.get(self.db, CHECKPOINT_KEY)
        return dict(got.value) if got else None

    def _supersede(self, old: str, new: str) -> None:
        """A newer checkpoint replaced ``old``: a backend whose checkpoints live on a service sets its TTL (the
        latest never expires). A failure leaves it kept: logged and counted, the step stands."""
        expire = getattr(self.backend, "expire", None)
        if expire is None or old == new:
            return
        try:
            expire(old)
        except Exception:
            self.expire_errors += 1
            log.exception("setting the TTL of %s failed; it is kept until set by hand", old)

    def _record(
        self,
        *,
        loss: float,
        mean_reward: float,
        success_rate: float,
        used: int,
        seconds: float,
        tokens_per_s: float | None,
        weights: str,
        checkpoint: str | None,
        detail: dict[str, Any],
    ) -> None:
        steps.record(
            self.db,
            steps.Step(
                step=self.step,
                backend=self.backend.name,
                loss=loss,
                mean_reward=mean_reward,
                success_rate=success_rate,
                samples_used=used,
                samples_dropped=self._dropped,
                step_seconds=seconds,
                tokens_per_s=tokens_per_s,
                weights=weights,
                checkpoint=checkpoint,
                detail=detail,
                tenant=self.tenant,
            ),
        )
        self._dropped = 0
        self._skipped = 0


def micro_batches(samples: Sequence[TrainSample], size: int, tokens: int) -> list[list[TrainSample]]:
    """The step's forward-backward passes: samples by length, each pass at most ``size`` samples and ``tokens``
    padded tokens (samples x the longest); a sample longer than ``tokens`` goes alone.

    A step's memory is its largest pass's activations, which grow with samples x width. Four samples taken in
    arrival order, one of them with an 821-token prompt (a skill block) beside three of ~100, were padded to
    4 x 853 tokens: SmolLM2's forward-backward peaked at 9.8 GB of resident memory and took 93 s on one core. By
    length and within 2,048 tokens, the long one goes alone: 3.3 GB (the model's 1.5 included) and 19 s. The
    gradient is the same: every pass's loss is normalised by the whole batch's token count."""
    out: list[list[TrainSample]] = []
    for s in sorted(samples, key=lambda t: len(t.tokens)):
        group = out[-1] if out else None
        if group is not None and len(group) < size and (len(group) + 1) * len(s.tokens) <= tokens:
            group.append(s)
        else:
            out.append([s])
    return out


def _validation_score(samples: Sequence[TrainSample], logprobs: Sequence[float]) -> float:
    """How much likelier the rewarded answers are than the punished ones: ``sum (r - mean r) * logp / n``."""
    mean = sum(t.reward for t in samples) / len(samples)
    return sum((t.reward - mean) * lp for t, lp in zip(samples, logprobs)) / len(samples)


def no_signal(samples: Sequence[TrainSample], advantage: str, tolerance: float = TIE) -> str | None:
    """Why a batch has nothing to learn from (every trained token's advantage is 0), or None when it has."""
    if any(a != 0.0 and m for t in samples for a, m in zip(t.advantages(), t.mask)):
        return None
    if len(samples) == 1:
        return "one sample"
    if tied([t.reward for t in samples], tolerance):
        return "equal rewards"
    if advantage in ("group", "task"):
        return "no group with two different rewards"
    return "all advantages 0"


def flat_groups(samples: Sequence[TrainSample], tolerance: float = TIE) -> list[list[TrainSample]]:
    """The advantage groups of a batch whose rewards are all equal (within ``tolerance``, relative to their scale; a
    group of one too) and whose tokens carry no other signal (a teacher's KL term)."""
    groups: dict[str, list[TrainSample]] = {}
    for t in samples:
        groups.setdefault(t.group, []).append(t)
    return [
        g
        for g in groups.values()
        if tied([t.reward for t in g], tolerance)
        and not any(a and m for t in g for a, m in zip(t.advantages(), t.mask))
    ]


def _captured(samples: Sequence[TrainSample]) -> list[str]:
    """The buffer rows a batch's samples came from (each once: its resampled answers share its id)."""
    return list(dict.fromkeys(t.turn_id for t in samples if not t.resampled))


def _task_types(db: AnyDatabase, turn_ids: Sequence[str]) -> dict[str, str]:
    """Each turn's advantage group under ``advantage: task``: its host task type (:func:`..store.ledger.task_types`
    of the store)."""
    try:
        kinds = task_types(db.query, turn_ids)
    except Exception:  # no learning loop on this home yet: no task types
        log.info("no task types for advantage: task (fl_turns unreadable); grouping by request")
        return {}
    return {t: "task:" + k for t, k in kinds.items()}


def _count_skip(db: AnyDatabase, reason: str, samples: int, *, batches: int = 1, groups: int = 0) -> None:
    value = skipped_steps(db)
    value["batches"] += batches
    value["groups"] = value.get("groups", 0) + groups
    value["samples"] += samples
    value["reasons"][reason] = value["reasons"].get(reason, 0) + (groups or 1)
    value["last"] = {"reason": reason, "at": time.time()}
    runtime_state.put(db, SKIPPED_KEY, value)


def skipped_steps(db: AnyDatabase) -> dict[str, Any]:
    """Batches, and groups of a batch, skipped for lack of signal:
    ``{"batches", "groups", "samples", "reasons": {reason: n}, "last"}``."""
    got = runtime_state.get(db, SKIPPED_KEY)
    return dict(got.value) if got else {"batches": 0, "groups": 0, "samples": 0, "reasons": {}}


def last_steps(db: AnyDatabase, n: int = 1) -> list[dict[str, Any]]:
    """The latest recorded steps, newest first (for ``status`` and ``train``)."""
    return steps.last(db.query, n)
