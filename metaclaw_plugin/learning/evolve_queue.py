"""The evolution runner: queued support sets go to the skill evolver, one call per tenant and host task type
per run.
Its jobs are ``fl_evolve_queue``'s (:data:`..store.jobs.EVOLVE`): every trigger (reviews, the success-rate window,
failed training batches) queues through :func:`enqueue_support`.

Pending jobs of a tenant and task type are coalesced up to ``evolution.max_support_turns`` failures. A failed call
retries with backoff (from ``evolution.backoff`` * 15 s) up to ``evolution.max_attempts``; a garbage answer counts
as an attempt; a spent daily budget waits for the next UTC day; an unusable evolver (not configured,
``local_only``) skips.
"""

from __future__ import annotations

import json
import logging
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..config import Settings
from ..privacy import Redactor
from ..store import AnyDatabase
from ..store.jobs import EVOLVE, evolution_done
from ..store.ledger import bump, task_types
from ..training.buffer import SampleBuffer
from .evolution import EvolutionReport, SkillEvolver, SupportTurn
from .ledger import Ledger
from .llm import BudgetExhausted, LLMError, LLMUnavailable, day_start
from .reward import effective_reward, view_of

log = logging.getLogger("metaclaw_plugin.learning")

REPORTS_KEPT = 20


def enqueue_support(
    db: AnyDatabase, tenant: str, reason: str, turns: Sequence[tuple[str, str, str, int]], per_job: int
) -> list[str]:
    """The one way into ``fl_evolve_queue``, for every trigger: reserve the turns (turn_id, session_id, tenant,
    generation) of one tenant for the evolver and queue them in jobs of at most ``per_job``, one host task type
    per job, counted as ``evolution_trigger_<reason>``. One transaction: a turn that any trigger (or process)
    reserved before is left out, so no turn reaches the evolver twice. The turns stay query samples until a call
    reads them (:meth:`SampleBuffer.take_support`). Returns the turn ids queued."""
    now = time.time()
    with db.transaction() as c:
        claimed = SampleBuffer.reserve_support(c, turns, reason)
        kinds = task_types(lambda q, a: c.execute(q, a).fetchall(), claimed)
        groups: dict[str | None, list[str]] = defaultdict(list)
        for tid in claimed:
            groups[kinds.get(tid)].append(tid)
        for ids in groups.values():
            for i in range(0, len(ids), per_job):
                job = {"tenant": tenant, "reason": reason, "turn_ids": json.dumps(ids[i : i + per_job])}
                EVOLVE.enqueue(c, job, at=now, now=now)
        if claimed:
            bump(c, f"evolution_trigger_{reason}")
    return claimed


class EvolutionRunner:
    def __init__(
        self,
        db: AnyDatabase,
        ledger: Ledger,
        evolver: SkillEvolver,
        buffer: SampleBuffer,
        settings: Settings,
        redactor: Redactor,
        warn_once: Callable[[str, str], None],
        on_generation: Callable[[], None],
    ):
        self.db = db
        self.ledger = ledger
        self.evolver = evolver
        self.buffer = buffer
        self.settings = settings
        self.redactor = redactor
        self.warn_once = warn_once
        self.on_generation = on_generation
        self.reports: list[dict[str, Any]] = []

    def on(self) -> bool:
        return self.settings.evolution.enabled and self.evolver.available() is None

    def enqueue(self, tenant: str, reason: str, turns: Iterable[Any]) -> list[str]:
        """Queue ledger rows (``fl_turns``) of one tenant; returns the turn ids queued."""
        refs = [(t["turn_id"], t["session_id"], t["tenant"], int(t["generation"])) for t in turns]
        return enqueue_support(self.db, tenant, reason, refs, self.settings.evolution.max_support_turns)

    def run(self, force: bool = False) -> None:
        rows = EVOLVE.due(self.db, float("inf") if force else time.time())
        # a job's kind of work is its first turn's (enqueue_support keeps a job to one)
        firsts = {r["id"]: (json.loads(r["turn_ids"]) or [""])[0] for r in rows}
        kinds = task_types(self.db.query, [f for f in firsts.values() if f])
        by_group: dict[tuple[str, str | None], list[Any]] = defaultdict(list)
        for r in rows:
            by_group[(r["tenant"], kinds.get(firsts[r["id"]]))].append(r)
        for (tenant, _), jobs in by_group.items():
            group: list[Any] = []
            ids: list[str] = []
            for j in jobs:
                jids = json.loads(j["turn_ids"])
                if group and len(ids) + len(jids) > self.settings.evolution.max_support_turns:
                    break
                group.append(j)
                ids += jids
            self.run_jobs(tenant, group, ids)

    def dry_run_pending(self) -> list[dict[str, Any]]:
        """What the evolver would do with each pending job, writing nothing."""
        out = []
        for r in EVOLVE.due(self.db, float("inf")):
            rep = self.run_jobs(r["tenant"], [r], json.loads(r["turn_ids"]), dry_run=True)
            if rep is not None:
                out.append(rep.as_dict())
        return out

    def support_turns(self, turn_ids: list[str]) -> list[SupportTurn]:
        out = []
        for tid in turn_ids:
            r = self.ledger.turn_row(tid)
            placed = self.ledger.placed(tid) if r is not None else None
            if r is None or placed is None:
                continue
            eff = effective_reward(self.ledger.rewards_of(tid)) or (0.0, "none")
            out.append(
                SupportTurn(view_of(placed.turn, placed.next_main, placed.outcome, r["task_type"]), eff[0], eff[1])
            )
        return out

    def run_jobs(
        self, tenant: str, jobs: list[Any], turn_ids: list[str], dry_run: bool = False
    ) -> EvolutionReport | None:
        ids = [j["id"] for j in jobs]
        support = self.support_turns(turn_ids)
        if not support:
            EVOLVE.finish(self.db, ids, "failed", "support turns not found")
            return None
        try:
            report = self.evolver.evolve(support, tenant=tenant, dry_run=dry_run)
        except BudgetExhausted as e:
            self.warn_once("evolver-budget", f"{e}; evolution resumes tomorrow (UTC)")
            EVOLVE.defer(self.db, ids, day_start() + 86400 + 1, "budget")
            return None
        except LLMUnavailable as e:
            EVOLVE.finish(self.db, ids, "skipped", str(e)[:300])
            return None
        except LLMError as e:
            self._failed(jobs, tenant, str(e))
            return None
        if report.error and not report.decisions and not dry_run:  # garbage answer: the call happened, try again later
            self.ledger.count("evolver_calls", report.calls)
            self._failed(jobs, tenant, report.error)
            return None
        if dry_run:
            return report
        doc = json.dumps(self.redactor.redact_obj(report.as_dict()), ensure_ascii=False)
        with self.db.transaction() as c:  # the call read these turns: support from now on, out of training
            evolution_done(c, ids, doc, time.time())
            SampleBuffer.take_support(c, turn_ids)
        self.record(report)
        log.info(
            "evolution for tenant %s: %s",
            tenant,
            ", ".join(f"{d.name}={d.decision}" for d in report.decisions) or "no candidates",
        )
        return report

    def record(self, report: EvolutionReport) -> None:
        self.ledger.count("evolver_runs")
        self.ledger.count("evolver_calls", report.calls)
        self.ledger.count("skills_written", len(report.written))
        self.reports.append(report.as_dict())
        del self.reports[:-REPORTS_KEPT]
        if report.generation_after != report.generation_before:
            self.on_generation()

    def _failed(self, jobs: list[Any], tenant: str, error: str) -> None:
        cfg = self.settings.evolution
        err = self.redactor.redact(error)[:300]
        attempts = max(j["attempts"] for j in jobs) + 1
        first = cfg.backoff * 15  # about 30 s, 60 s... by default
        ids = [j["id"] for j in jobs]
        if EVOLVE.fail(self.db, ids, attempts, err, first=first, max_attempts=cfg.max_attempts, now=time.time()):
            log.warning("evolution for tenant %s gave up after %d attempts: %s", tenant, attempts, err)
