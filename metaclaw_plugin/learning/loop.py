"""The learning loop: builds the jobs from explicit parts and schedules them. Nothing else.

Intake (ledger rows, judge jobs, review marks) runs in the plugin's background worker when an event
arrives; the slow jobs run here, in one thread of their own, so a judge or evolver call that takes a
minute never delays the worker. All state is in the database (see :mod:`metaclaw_plugin.store.schema`),
so pending work survives a restart. A failing job is logged and counted, retried on the next tick,
and never reaches the host.

Per main turn:  recorded -> (next turn or session end) -> judged -> reviewed -> support or query.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import Counter
from collections.abc import Collection, Iterator
from typing import Any

from ..config import EvolutionSettings, RewardSettings
from ..infra.service import Service
from ..privacy import Redactor
from ..requestpath.events import Feedback, SessionEnd, TurnRecorded
from ..store import open_database
from ..store.election import LearnerElection
from ..store.postgres import PostgresDatabase
from ..training.buffer import SampleBuffer
from .evidence import ConventionEvidence
from .evolution import SkillEvolver
from .evolve_queue import EvolutionRunner
from .intake import Intake
from .judge_queue import JudgeQueue
from .ledger import Ledger
from .llm import HOST, HOST_NOT_KNOWN, Budget, LLMClient, client_for
from .parts import Parts
from .review import Reviewer
from .reward import RewardJudge, Verifiers, effective_reward, is_failure, judge_votes
from .screening_model import SkillReviewer, review_role
from .status import status_from_db
from .trials import ShadowTrials

log = logging.getLogger("metaclaw_plugin.learning")

TICK = 0.5  # seconds between runs when nothing wakes the loop
LEARNER_JOBS = frozenset(("reviews", "evolve", "shadow", "sweep", "evidence"))  # on the elected host only


class LearningLoop:
    def __init__(self, parts: Parts):
        self.parts = parts
        s = self.settings = parts.settings
        self.skills = parts.skills
        self.db = open_database(s)
        # Judging runs on every host; what changes the library runs on one elected host (always this one on SQLite).
        self._owns_election = parts.election is None  # the plugin's is started and stopped by the plugin
        self.election = parts.election or LearnerElection(self.db if isinstance(self.db, PostgresDatabase) else None)
        self.redactor = parts.redactor or Redactor.from_settings(s.privacy)  # outbound is always redacted
        self.budget = Budget(
            self.db,
            {
                "judge": (s.reward.daily_calls, s.reward.daily_tokens),
                "evolver": (s.evolution.daily_calls, s.evolution.daily_tokens),
                HOST: (s.learning.daily_calls, s.learning.daily_tokens),
            },
        )
        self.judge = RewardJudge(
            self._client("judge", s.reward),
            votes=judge_votes(s),
            temperature=s.reward.temperature,
            max_tokens=s.reward.max_tokens,
            max_chars=s.reward.max_turn_chars,
            db=self.db,
        )
        # The model review of evolved skills (second screening layer): the judge's model, else the evolver's.
        role = review_role(s)
        self.evolver = SkillEvolver(
            self._client("evolver", s.evolution),
            self.skills.store,
            s,
            self.redactor,
            reviewer=SkillReviewer(self._client(*role)) if role is not None else None,
        )
        self.buffer = SampleBuffer(self.db, generation_fn=lambda: self.skills.store.generation)
        self.ledger = Ledger(self.db, parts.trajectories)
        self.judging = JudgeQueue(
            self.db,
            self.ledger,
            self.judge,
            Verifiers(s.reward.verifiers, s.reward.verifier_timeout),
            s,
            self.redactor,
            self._warn_once,
            self.wake,
        )
        self.trials = ShadowTrials(self.db, self.skills, s, self.ledger.count, self.generation_changed)
        self.evolution = EvolutionRunner(
            self.db, self.ledger, self.evolver, self.buffer, s, self.redactor, self._warn_once, self.generation_changed
        )
        self.reviewer = Reviewer(
            self.db,
            self.ledger,
            self.judging,
            self.trials,
            self.evolution,
            self.buffer,
            s,
            parts.live_sessions,
            lambda: self.skills.store.generation,
        )
        self.intake = Intake(self.ledger, self.judging, self.trials, s, self.wake)
        self.evidence = ConventionEvidence(self.db, self.skills)
        self.jobs = (
            ("judge", self.judging.run),
            ("reviews", self.reviewer.run),
            ("evolve", self.evolution.run),
            ("shadow", self.trials.run),
            ("sweep", self.reviewer.sweep_stale),
            ("evidence", self.evidence.run),
        )
        self._wake = threading.Event()
        self._tick_lock = threading.RLock()
        self.service = Service("metaclaw-learning", self._run, wake=self._wake.set)
        self._subscribed = False
        self.errors: Counter[str] = Counter()
        self._warned: set[str] = set()
        for what, reason in (("reward judge", self.judge.available()), ("skill evolver", self.evolver.available())):
            if reason and (reason.startswith("no ") or reason.startswith(HOST_NOT_KNOWN)):  # a choice, or not yet
                log.info("metaclaw learning: the %s is off (%s)", what, reason)
            elif reason:  # configured but unusable (litellm missing, local_only): say it loudly, once
                self._warn_once(what, f"the {what} is off: {reason}")

    def _client(self, purpose: str, cfg: RewardSettings | EvolutionSettings) -> LLMClient:
        """The LLM client of one role (judge or evolver): its endpoint, retries, the shared daily budget."""
        return client_for(
            purpose,
            cfg,
            budget=self.budget,
            local_only=self.settings.privacy.local_only,
            redactor=self.redactor,
            learning=self.settings.learning,
            host=self.parts.host_models,
        )

    # Lifecycle ------------------------------------------------------------------------------------
    def start(self) -> LearningLoop:
        if not self._subscribed:
            ev = self.parts.events
            ev.subscribe(TurnRecorded, self.intake.on_turn)
            ev.subscribe(SessionEnd, self.intake.on_session_end)
            ev.subscribe(Feedback, self.intake.on_feedback)
            self._subscribed = True
        if self._owns_election:
            self.election.start()
        self.service.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self.service.stop(timeout)
        if self._owns_election:
            self.election.stop()
        self.db.close()

    def services(self) -> list[Service]:
        return [self.service, *(self.election.services() if self._owns_election else [])]

    def wake(self) -> None:
        self._wake.set()

    def _run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            self._wake.wait(TICK)
            self._wake.clear()
            if stop.is_set():
                break
            self.tick()

    def tick(self, force: bool = False, only: Collection[str] | None = None) -> None:
        """One pass over the jobs (``only``: just those, by name, in their usual order)."""
        with self._tick_lock:
            leader = self.election.is_leader()
            for name, job in self.jobs:
                if (name in LEARNER_JOBS and not leader) or (only is not None and name not in only):
                    continue
                try:
                    job(force)
                except Exception:
                    self.errors[name] += 1
                    log.exception("learning job %s failed (retried on the next tick; the host is unaffected)", name)

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """No background tick runs while held (the caller may tick itself): ``bench workday``'s skills+rl arm
        judges a day's turns and trains on them before that day's evolution bumps the skill generation."""
        with self._tick_lock:
            yield

    def _warn_once(self, key: str, msg: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            log.warning("metaclaw learning: %s", msg)

    def generation_changed(self) -> None:
        self.skills.refresh(force=True)
        dropped = self.buffer.on_generation(self.skills.store.generation)
        if dropped:
            log.info("skill generation is now %d: dropped %d stale samples", self.skills.generation, dropped)

    # On demand (CLI) -------------------------------------------------------------------------------
    @property
    def reports(self) -> list[dict[str, Any]]:
        return self.evolution.reports

    def evolve_now(
        self, session_id: str | None = None, *, tenant: str | None = None, dry_run: bool = False
    ) -> list[dict[str, Any]]:
        """Run evolution now: for one session's failed turns (all its main turns if none failed), or
        for everything pending. ``dry_run`` calls the evolver and screens, but writes nothing."""
        with self._tick_lock:
            self.parts.trajectories.flush(10.0)
            if session_id is None:
                if dry_run:
                    return self.evolution.dry_run_pending()
                self.tick(force=True)
                self.tick(force=True)
                return list(self.reports)
            session = self.parts.trajectories.get_session(session_id, tenant=tenant)
            if session is None:
                raise KeyError(session_id)
            self.ledger.adopt(session)
            main = [t for t in session.turns if t.kind == "main"]
            for t in main:
                self.judging.enqueue(t.turn_id, session.tenant, session.session_id, delay=0)
            self.judging.run(force=True)
            failed = [
                t.turn_id
                for t in main
                if (eff := effective_reward(self.ledger.rewards_of(t.turn_id))) is not None and is_failure(eff[0])
            ]
            ids = (failed or [t.turn_id for t in main])[-self.settings.evolution.max_support_turns :]
            support = self.evolution.support_turns(ids)
            if not support:
                return []
            report = self.evolver.evolve(support, tenant=session.tenant, dry_run=dry_run)
            if not dry_run:
                rows = self.ledger.turn_rows(ids)
                self.buffer.mark_support(
                    [(r["turn_id"], r["session_id"], r["tenant"], int(r["generation"])) for r in rows], "cli"
                )
                if report.generation_after != report.generation_before:
                    self.generation_changed()
            out = report.as_dict()
            out["support_kind"] = "failed turns" if failed else "all main turns (none was scored as failed)"
            return [out]

    def status(self) -> dict[str, Any]:
        return {
            **status_from_db(self.settings),
            "judge": self.judge.available() or "on",
            "evolver": self.evolver.available() or "on",
            "shadow_trials": [s.as_dict() for s in self.trials.stats()],
            "learner": self.election.status(),
            "errors": dict(self.errors),
        }
