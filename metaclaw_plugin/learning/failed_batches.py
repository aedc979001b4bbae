"""The second trigger path (the paper's): a training batch whose turns mostly failed feeds the skill evolver.

The trainer calls :class:`FailedBatches` with each batch it consumed. It only writes queue rows: the evolver runs
later in the learning loop of the elected learner, within its daily budget, so a training step never waits for
an evolver call. A turn failed when its reward is below 0 (:func:`~.reward.is_failure`, the test a review uses for
its support set). Per tenant (a support set never mixes tenants): when more than
``training.evolve_failed_share`` of the tenant's turns in the batch failed, its failed turns, less those that are
a shadow trial's evidence, go to the evolver as one ``train_batch`` job if there are at least
``evolution.min_failures`` of them. Queueing reserves them for the evolver (:func:`~.evolve_queue.enqueue_support`),
so a turn the success-rate trigger already sent is not sent again, nor the other way round.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence

from ..config import Settings
from ..store import AnyDatabase
from ..training.trainer import Trainer
from ..types import Sample
from .evolve_queue import enqueue_support
from .reward import is_failure
from .switches import learning_switches
from .trials import turns_on_trial

log = logging.getLogger("metaclaw_plugin.learning")

REASON = "train_batch"


class FailedBatches:
    def __init__(self, db: AnyDatabase, settings: Settings):
        self.db = db
        self.settings = settings

    def __call__(self, batch: Sequence[Sample]) -> list[str]:
        """Queue the failed turns of ``batch`` for the evolver where the trigger holds; returns their ids."""
        t, evo = self.settings.training, self.settings.evolution
        if not (t.evolve_on_failed_batch and batch and learning_switches(self.settings)["evolver"].on):
            return []
        by_tenant: dict[str, list[Sample]] = defaultdict(list)
        for s in batch:
            by_tenant[s.tenant].append(s)
        trial = turns_on_trial(self.db, [s.turn_id for s in batch])
        queued: list[str] = []
        for tenant, samples in by_tenant.items():
            lost = [s for s in samples if is_failure(s.reward)]
            support = [s for s in lost if s.turn_id not in trial]
            if len(lost) <= t.evolve_failed_share * len(samples) or len(support) < evo.min_failures:
                continue
            refs = [(s.turn_id, s.session_id, s.tenant, s.skill_generation) for s in support]
            got = enqueue_support(self.db, tenant, REASON, refs, evo.max_support_turns)
            log.info(
                "training batch: %d of %d turns of tenant %s failed; %d queued for the evolver",
                len(lost),
                len(samples),
                tenant,
                len(got),
            )
            queued += got
        return queued


def feed_evolver(trainer: Trainer, settings: Settings) -> Trainer:
    """``trainer``, feeding its failed batches to the evolver (through the trainer's own database)."""
    trainer.on_batch = FailedBatches(trainer.db, settings)
    return trainer
