"""The fast loop: rewards, skill evolution and the support/query buffer, wired onto a plugin.

``attach(plugin)`` registers listeners (they run in the plugin's background worker and only write
a few rows) and starts one thread of its own for the slow work (judge calls, verifier commands,
evolver calls), so an LLM that takes a minute never delays the worker's other jobs. All state is
in SQLite tables next to the trajectories (``fl_*``, ``reward_cache``, ``llm_budget`` and the
buffer's tables), so pending work survives a restart and is picked up again.

Per main turn:  recorded -> (next turn arrives or the session ends) -> scored -> reviewed.
A review (at session end, or every ``evolution.every_n_turns`` main turns of a long session)
splits the scored turns: failures (effective reward < 0) become the support set of one evolution
job, the rest go into the buffer as query samples stamped with their generation. A third trigger
watches batches of ``evolution.batch_turns`` scored turns per tenant: a batch whose success rate is
below ``evolution.success_rate_threshold`` sends its non-successful turns to the evolver too.

Shadow trials: a skill on trial is injected into ``shadow_fraction`` of the turns it matches (the
arm is chosen at random per turn by the skill bank); both arms' turns are scored like any other.
With at least ``shadow_min_samples`` scored turns per arm, the skill is promoted when the posterior
probability that its success rate beats the control arm's is at least ``shadow_confidence``, and
retired when it is at most ``1 - shadow_confidence`` (Beta(1,1) priors on each arm's success rate,
success = reward > 0, exact formula for P(p_with > p_without)). A trial still undecided after
``shadow_max_samples`` per arm retires the skill: no evidence that it helps, and it costs tokens.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable

from .dbutil import DB
from .evolution import EvolutionReport, SkillEvolver, SupportTurn
from .llm import Budget, BudgetExhausted, LLMClient, LLMError, LLMUnavailable, day_start
from .privacy import Redactor
from .reward import RewardJudge, Verifiers, detect_correction, effective_reward, message_text, view_of
from .skillbank.bank import SHADOW_KEY, is_shadow
from .training.buffer import SampleBuffer
from .types import Sample, Session, Turn

if TYPE_CHECKING:  # pragma: no cover
    from .plugin import MetaClawPlugin, SessionEnd, TurnRecorded

log = logging.getLogger("metaclaw_plugin.fastloop")

SCHEMA = """
CREATE TABLE IF NOT EXISTS fl_turns (
  turn_id TEXT PRIMARY KEY, tenant TEXT NOT NULL, session_id TEXT NOT NULL, kind TEXT NOT NULL, seq INTEGER NOT NULL,
  generation INTEGER NOT NULL, task_type TEXT, created_at REAL NOT NULL, settled INTEGER NOT NULL DEFAULT 0,
  reviewed INTEGER NOT NULL DEFAULT 0, score REAL, source TEXT);
CREATE INDEX IF NOT EXISTS fl_turns_by_session ON fl_turns (tenant, session_id, seq);
CREATE TABLE IF NOT EXISTS fl_rewards (
  turn_id TEXT NOT NULL, source TEXT NOT NULL, score REAL NOT NULL, created_at REAL NOT NULL, PRIMARY KEY (turn_id, source));
CREATE TABLE IF NOT EXISTS fl_judge_queue (
  turn_id TEXT PRIMARY KEY, tenant TEXT NOT NULL, session_id TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
  next_at REAL NOT NULL, state TEXT NOT NULL DEFAULT 'pending', last_error TEXT, created_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS fl_judge_due ON fl_judge_queue (state, next_at);
CREATE TABLE IF NOT EXISTS fl_sessions (
  tenant TEXT NOT NULL, session_id TEXT NOT NULL, main_turns INTEGER NOT NULL DEFAULT 0,
  since_review INTEGER NOT NULL DEFAULT 0, ended INTEGER NOT NULL DEFAULT 0, success INTEGER,
  review_due REAL, review_reason TEXT, review_since REAL, last_at REAL NOT NULL, PRIMARY KEY (tenant, session_id));
CREATE TABLE IF NOT EXISTS fl_evolve_queue (
  id INTEGER PRIMARY KEY AUTOINCREMENT, tenant TEXT NOT NULL, reason TEXT NOT NULL, turn_ids TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0, next_at REAL NOT NULL, state TEXT NOT NULL DEFAULT 'pending',
  last_error TEXT, report TEXT, created_at REAL NOT NULL, done_at REAL);
CREATE TABLE IF NOT EXISTS fl_window (
  tenant TEXT NOT NULL, turn_id TEXT PRIMARY KEY, success INTEGER NOT NULL, batched INTEGER NOT NULL DEFAULT 0,
  created_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS fl_shadow (
  turn_id TEXT NOT NULL, skill TEXT NOT NULL, skill_generation INTEGER NOT NULL, arm TEXT NOT NULL, score REAL,
  created_at REAL NOT NULL, PRIMARY KEY (turn_id, skill));
CREATE TABLE IF NOT EXISTS fl_counters (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""

DEFER_MISSING_TURN = 0.25  # seconds: the turn is in the journal but not yet in SQLite
MISSING_TURN_GIVE_UP = 120.0
STALE_SESSION_SWEEP = 30.0
SHADOW_EVAL_EVERY = 2.0


# ---------------------------------------------------------------------------------------------
# Statistics for shadow trials

def _lbeta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def prob_b_beats_a(s_a: int, n_a: int, s_b: int, n_b: int) -> float:
    """P(p_b > p_a) with p ~ Beta(1 + successes, 1 + failures) for each arm (exact sum; Evan Miller)."""
    a_a, b_a = 1 + s_a, 1 + n_a - s_a
    a_b, b_b = 1 + s_b, 1 + n_b - s_b
    total = 0.0
    for i in range(a_b):
        total += math.exp(_lbeta(a_a + i, b_a + b_b) - math.log(b_b + i) - _lbeta(1 + i, b_b) - _lbeta(a_a, b_a))
    return min(1.0, max(0.0, total))


@dataclass
class TrialStats:
    skill: str
    n_with: int
    s_with: int
    n_without: int
    s_without: int
    p_better: float

    def as_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "p_better": round(self.p_better, 4)}


def shadow_decision(st: TrialStats, min_samples: int, max_samples: int, confidence: float) -> str | None:
    if min(st.n_with, st.n_without) < min_samples:
        return None
    if st.p_better >= confidence:
        return "promote"
    if st.p_better <= 1 - confidence:
        return "retire"
    if min(st.n_with, st.n_without) >= max_samples:
        return "retire"
    return None


# ---------------------------------------------------------------------------------------------

class FastLoop:
    def __init__(self, plugin: "MetaClawPlugin"):
        self.plugin = plugin
        s = plugin.settings
        self.settings = s
        self.db = DB(s.db_file, SCHEMA)
        self.redactor = plugin.redactor or Redactor.from_settings(s.privacy)  # outbound is always redacted
        self.budget = Budget(
            s.db_file,
            {"judge": (s.reward.daily_calls, s.reward.daily_tokens),
             "evolver": (s.evolution.daily_calls, s.evolution.daily_tokens)},
        )
        local_only = s.privacy.local_only
        self.judge = RewardJudge(
            LLMClient("judge", model=s.reward.model, api_base=s.reward.api_base, api_key=s.reward.api_key,
                      timeout=s.reward.timeout, retries=s.reward.retries, backoff=s.reward.backoff,
                      budget=self.budget, local_only=local_only, redactor=self.redactor),
            votes=s.reward.votes, temperature=s.reward.temperature, max_tokens=s.reward.max_tokens,
            max_chars=s.reward.max_turn_chars, db=self.db,
        )
        self.evolver = SkillEvolver(
            LLMClient("evolver", model=s.evolution.model, api_base=s.evolution.api_base, api_key=s.evolution.api_key,
                      timeout=s.evolution.timeout, retries=s.evolution.retries, backoff=s.evolution.backoff,
                      budget=self.budget, local_only=local_only, redactor=self.redactor),
            plugin.skills.store, s, self.redactor,
        )
        self.verifiers = Verifiers(s.reward.verifiers, s.reward.verifier_timeout)
        self.buffer = SampleBuffer(self.db, generation_fn=lambda: plugin.skills.store.generation)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._tick_lock = threading.RLock()
        self._thread: threading.Thread | None = None
        self._last_sweep = 0.0
        self._last_shadow = 0.0
        self.errors: Counter[str] = Counter()
        self.reports: list[dict[str, Any]] = []
        self._warned: set[str] = set()
        for what, reason in (("reward judge", self.judge.available()), ("skill evolver", self.evolver.available())):
            if reason and reason.startswith("no "):  # not configured: a choice, not a fault
                log.info("metaclaw fast loop: the %s is off (%s)", what, reason)
            elif reason:  # configured but unusable (litellm missing, local_only): say it loudly, once
                self._warn_once(what, f"the {what} is off: {reason}")

    # Lifecycle ------------------------------------------------------------------------------------
    def start(self) -> "FastLoop":
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="metaclaw-fastloop", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        self.budget.close()

    def wake(self) -> None:
        self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(0.5)
            self._wake.clear()
            if self._stop.is_set():
                break
            self.tick()

    def _warn_once(self, key: str, msg: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            log.warning("metaclaw fast loop: %s", msg)

    def _count(self, key: str, n: int = 1) -> None:
        self.db.execute(
            "INSERT INTO fl_counters(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = value + excluded.value",
            [key, n],
        )

    # Rewards (mirrored: the store is the record, fl_rewards is what the loop reads back at once) --
    def record_reward(self, turn_id: str, source: str, score: float, detail: Any = None) -> None:
        self.plugin.store.record_reward(turn_id, source, score, detail)
        self.db.execute(
            "INSERT INTO fl_rewards(turn_id, source, score, created_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(turn_id, source) DO UPDATE SET score = excluded.score",
            [turn_id, source, float(score), time.time()],
        )

    def rewards_of(self, turn_id: str) -> list[dict[str, Any]]:
        rows = {r["source"]: float(r["score"]) for r in self.db.query(
            "SELECT source, score FROM fl_rewards WHERE turn_id = ?", [turn_id])}
        try:
            for r in self.plugin.store.rewards(turn_id):
                rows.setdefault(r["source"], float(r["score"]))
        except Exception:
            pass
        return [{"source": k, "score": v} for k, v in rows.items()]

    # Listeners (background worker) -----------------------------------------------------------------
    def on_turn(self, ev: "TurnRecorded") -> None:
        turn = ev.turn
        ctx = ev.ctx
        now = time.time()
        task_type = None
        arms: dict[str, str] = {}
        if ctx is not None and isinstance(ctx.metadata, dict):
            tt = ctx.metadata.get("task_type")
            task_type = str(tt)[:100] if tt is not None else None
            arms = dict(ctx.metadata.get(SHADOW_KEY) or {})
        with self.db.transaction() as c:
            seq = c.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM fl_turns WHERE tenant = ? AND session_id = ?",
                            (turn.tenant, turn.session_id)).fetchone()[0]
            c.execute(
                "INSERT OR IGNORE INTO fl_turns(turn_id, tenant, session_id, kind, seq, generation, task_type, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (turn.turn_id, turn.tenant, turn.session_id, turn.kind, seq, turn.skill_generation, task_type, now),
            )
            skills = self.plugin.skills.skills
            for name, arm in arms.items():
                sk = skills.get(name)
                if sk is not None and arm in ("with", "without"):
                    c.execute("INSERT OR IGNORE INTO fl_shadow(turn_id, skill, skill_generation, arm, created_at) "
                              "VALUES (?, ?, ?, ?, ?)", (turn.turn_id, name, sk.generation, arm, now))
            if turn.kind != "main":
                return
            prev = c.execute(
                "SELECT turn_id FROM fl_turns WHERE tenant = ? AND session_id = ? AND kind = 'main' AND seq < ? "
                "ORDER BY seq DESC LIMIT 1", (turn.tenant, turn.session_id, seq)).fetchone()
            c.execute(
                "INSERT INTO fl_sessions(tenant, session_id, main_turns, since_review, last_at) VALUES (?, ?, 1, 1, ?) "
                "ON CONFLICT(tenant, session_id) DO UPDATE SET main_turns = main_turns + 1, since_review = since_review + 1, "
                "last_at = excluded.last_at", (turn.tenant, turn.session_id, now))
            row = c.execute("SELECT since_review FROM fl_sessions WHERE tenant = ? AND session_id = ?",
                            (turn.tenant, turn.session_id)).fetchone()
            # every_n_turns main turns have their evidence now (the newest waits for its own)
            review = bool(row and row[0] > self.settings.evolution.every_n_turns)
        if prev is not None:
            prev_id = prev[0]
            if self.settings.reward.detect_corrections:
                iu = next((i for i in range(len(turn.messages) - 1, -1, -1)
                           if isinstance(turn.messages[i], dict) and turn.messages[i].get("role") == "user"), None)
                phrase = detect_correction(message_text(turn.messages[iu])) if iu is not None else None
                if phrase:
                    self.record_reward(prev_id, "correction", -1.0, {"phrase": phrase[:80]})
        # One transaction: a review never sees the session without the judge job it must wait for.
        with self.db.transaction() as c:
            if prev is not None:
                self._queue_judge(prev[0], turn.tenant, turn.session_id, conn=c)
            if review:
                c.execute("UPDATE fl_sessions SET review_due = ?, review_reason = 'every_n_turns', "
                          "review_since = COALESCE(review_since, ?) WHERE tenant = ? AND session_id = ?",
                          (now, now, turn.tenant, turn.session_id))
        self.wake()

    def on_session_end(self, ev: "SessionEnd") -> None:
        now = time.time()
        outcome = ev.outcome or {}
        success = outcome.get("success") if isinstance(outcome.get("success"), bool) else None
        last = self.db.query(
            "SELECT turn_id FROM fl_turns WHERE tenant = ? AND session_id = ? AND kind = 'main' ORDER BY seq DESC LIMIT 1",
            [ev.tenant, ev.session_id])
        if last and success is not None:
            self.record_reward(last[0]["turn_id"], "outcome", 1.0 if success else -1.0, {"reason": ev.reason})
        with self.db.transaction() as c:  # the judge job and the review appear together
            if last:
                self._queue_judge(last[0]["turn_id"], ev.tenant, ev.session_id, conn=c)
            c.execute(
                "INSERT INTO fl_sessions(tenant, session_id, last_at) VALUES (?, ?, ?) ON CONFLICT(tenant, session_id) "
                "DO NOTHING", (ev.tenant, ev.session_id, now))
            c.execute(
                "UPDATE fl_sessions SET ended = 1, success = ?, review_due = ?, review_reason = 'session_end', "
                "review_since = COALESCE(review_since, ?) WHERE tenant = ? AND session_id = ?",
                (None if success is None else int(success), now, now, ev.tenant, ev.session_id))
        self.wake()

    def on_feedback(self, event: dict[str, Any]) -> None:
        if event.get("score") is None or not event.get("turn_id"):
            return
        self.db.execute(
            "INSERT INTO fl_rewards(turn_id, source, score, created_at) VALUES (?, 'explicit', ?, ?) "
            "ON CONFLICT(turn_id, source) DO UPDATE SET score = excluded.score",
            [event["turn_id"], float(event["score"]), time.time()])
        self.wake()

    def _queue_judge(self, turn_id: str, tenant: str, session_id: str, delay: float = 0.2, conn: Any = None) -> None:
        now = time.time()
        sql = "INSERT OR IGNORE INTO fl_judge_queue(turn_id, tenant, session_id, next_at, created_at) VALUES (?, ?, ?, ?, ?)"
        args = (turn_id, tenant, session_id, now + delay, now)
        if conn is not None:
            conn.execute(sql, args)
        else:
            self.db.execute(sql, args)

    # The loop ---------------------------------------------------------------------------------------
    def tick(self, force: bool = False) -> None:
        with self._tick_lock:
            for name, step in (("judge", self._process_judge_queue), ("reviews", self._process_reviews),
                               ("evolve", self._process_evolutions), ("shadow", self._evaluate_shadows),
                               ("sweep", self._sweep_stale_sessions)):
                try:
                    step(force)
                except Exception:
                    self.errors[name] += 1
                    log.exception("fast loop step %s failed (retried on the next tick; the host is unaffected)", name)

    def _session_cache(self) -> Callable[[str, str], Session | None]:
        cache: dict[tuple[str, str], Session | None] = {}

        def get(tenant: str, session_id: str) -> Session | None:
            key = (tenant, session_id)
            if key not in cache:
                cache[key] = self.plugin.store.get_session(session_id, tenant=tenant)
            return cache[key]

        return get

    def _locate(self, session: Session | None, turn_id: str) -> tuple[Turn | None, Turn | None, bool]:
        """The turn, the next turn of the session (evidence), and whether the turn is the last main one."""
        if session is None:
            return None, None, False
        turns = session.turns
        for i, t in enumerate(turns):
            if t.turn_id == turn_id:
                nxt = turns[i + 1] if i + 1 < len(turns) else None
                later_main = any(u.kind == "main" for u in turns[i + 1:])
                return t, nxt, not later_main
        return None, None, False

    def _process_judge_queue(self, force: bool = False) -> None:
        now = time.time()
        cfg = self.settings.reward
        rows = self.db.query(
            "SELECT * FROM fl_judge_queue WHERE state = 'pending' AND next_at <= ? ORDER BY next_at LIMIT ?",
            [float("inf") if force else now, cfg.batch_size])
        if not rows:
            return
        get = self._session_cache()
        jobs = []
        for r in rows:
            session = get(r["tenant"], r["session_id"])
            turn, nxt, is_last = self._locate(session, r["turn_id"])
            if turn is None:
                if now - r["created_at"] > MISSING_TURN_GIVE_UP:
                    self.db.execute("UPDATE fl_judge_queue SET state = 'failed', last_error = 'turn not in the store' "
                                    "WHERE turn_id = ?", [r["turn_id"]])
                else:
                    self.plugin.store.flush(1.0)
                    self.db.execute("UPDATE fl_judge_queue SET next_at = ? WHERE turn_id = ?",
                                    [now + DEFER_MISSING_TURN, r["turn_id"]])
                continue
            outcome = session.outcome if (is_last and session is not None and session.ended_at) else None
            ft = self.db.query("SELECT task_type FROM fl_turns WHERE turn_id = ?", [turn.turn_id])
            view = view_of(turn, nxt, outcome, ft[0]["task_type"] if ft else None)
            jobs.append((r, view))
        if not jobs:
            return
        if len(jobs) > 1 and cfg.concurrency > 1:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=min(cfg.concurrency, len(jobs)), thread_name_prefix="metaclaw-score") as ex:
                list(ex.map(lambda j: self._score(*j), jobs))
        else:
            for j in jobs:
                self._score(*j)

    def _score(self, row: Any, view: Any) -> None:
        turn_id = row["turn_id"]
        cfg = self.settings.reward
        now = time.time()

        def finish(state: str, error: str | None = None) -> None:
            self.db.execute("UPDATE fl_judge_queue SET state = ?, last_error = ? WHERE turn_id = ?", [state, error, turn_id])
            eff = effective_reward(self.rewards_of(turn_id))
            self.db.execute("UPDATE fl_turns SET settled = 1, score = ?, source = ? WHERE turn_id = ?",
                            [eff[0] if eff else None, eff[1] if eff else None, turn_id])
            self.wake()

        try:
            have = {r["source"] for r in self.rewards_of(turn_id)}
            if have & {"explicit", "verifier", "outcome", "correction"}:
                finish("settled")  # a stronger signal than the judge already decided
                return
            if view.task_type and view.task_type in self.verifiers:
                res = self.verifiers.run(view.task_type, view)
                if res is not None:
                    self.record_reward(turn_id, "verifier", res[0], res[1])
                    finish("verified")
                    return
            if not cfg.enabled or self.judge.available():
                finish("skipped")
                return
            result = self.judge.judge(view)
            self.record_reward(turn_id, "judge", result.score, result.detail(self.judge.model))
            self._count("judge_turns")
            if result.cached:
                self._count("judge_cache_hits")
            finish("done")
        except BudgetExhausted as e:
            self._warn_once("judge-budget", f"{e}; judging resumes tomorrow (UTC)")
            self.db.execute("UPDATE fl_judge_queue SET next_at = ?, last_error = ? WHERE turn_id = ?",
                            [day_start() + 86400 + 1, "budget", turn_id])
        except LLMUnavailable as e:
            finish("skipped", str(e)[:300])
        except LLMError as e:
            attempts = row["attempts"] + 1
            err = self.redactor.redact(str(e))[:300]
            if attempts >= cfg.max_attempts:
                log.warning("judging turn %s gave up after %d attempts: %s", turn_id, attempts, err)
                self.db.execute("UPDATE fl_judge_queue SET attempts = ? WHERE turn_id = ?", [attempts, turn_id])
                finish("failed", err)
            else:
                delay = cfg.backoff * 5 * (2 ** (attempts - 1))  # 5 s, 10 s, 20 s... at the default backoff
                self.db.execute("UPDATE fl_judge_queue SET attempts = ?, next_at = ?, last_error = ? WHERE turn_id = ?",
                                [attempts, now + delay, err, turn_id])

    # Reviews ------------------------------------------------------------------------------------------
    def _process_reviews(self, force: bool = False) -> None:
        now = time.time()
        due = self.db.query("SELECT * FROM fl_sessions WHERE review_due IS NOT NULL AND review_due <= ?",
                            [float("inf") if force else now])
        for srow in due:
            self._review(srow, force)

    def _review(self, srow: Any, force: bool = False) -> None:
        tenant, sid = srow["tenant"], srow["session_id"]
        ended = bool(srow["ended"])
        turns = self.db.query(
            "SELECT * FROM fl_turns WHERE tenant = ? AND session_id = ? AND kind = 'main' AND reviewed = 0 ORDER BY seq",
            [tenant, sid])
        if not ended and turns:
            turns = turns[:-1]  # the newest main turn has no evidence yet
        if not turns:
            self._close_review(tenant, sid, ended)
            return
        ids = [t["turn_id"] for t in turns]
        waiting = self.db.query(
            f"SELECT COUNT(*) AS n FROM fl_judge_queue WHERE state = 'pending' AND turn_id IN ({','.join('?' * len(ids))})", ids)
        waited = time.time() - (srow["review_since"] or time.time())
        if waiting[0]["n"] and not force and waited < self.settings.reward.review_wait:
            return  # scores still coming; look again next tick
        scored: list[tuple[Any, float, str]] = []
        unscored = []
        for t in turns:
            eff = effective_reward(self.rewards_of(t["turn_id"]))
            if eff is None:
                unscored.append(t)
            else:
                scored.append((t, eff[0], eff[1]))
        # Turns of a running shadow trial are that experiment's evidence, not support: evolving on them
        # would refine the skill under test and restart its trial.
        on_trial = {r["turn_id"] for r in self.db.query(
            f"SELECT DISTINCT turn_id FROM fl_shadow WHERE turn_id IN ({','.join('?' * len(ids))})", ids)}
        failures = [(t, sc, src) for t, sc, src in scored if sc < 0 and t["turn_id"] not in on_trial]
        cfg = self.settings.evolution
        evolving = bool(failures) and len(failures) >= cfg.min_failures and self._evolver_on()
        support_ids = set()
        if evolving:
            support_ids = {t["turn_id"] for t, _, _ in failures}
            self._enqueue_evolution(tenant, srow["review_reason"] or "review", [t for t, _, _ in failures])
        for t, sc, src in scored:
            self.db.execute("UPDATE fl_turns SET score = ?, source = ? WHERE turn_id = ?", [sc, src, t["turn_id"]])
            self.db.execute("UPDATE fl_shadow SET score = ? WHERE turn_id = ?", [sc, t["turn_id"]])
            if t["turn_id"] in support_ids:
                continue
            self.buffer.add(Sample(t["turn_id"], sid, tenant, int(t["generation"]), float(sc)), source=src)
            if t["turn_id"] in on_trial:
                continue  # a trial's own evidence does not trigger evolution either
            self.db.execute("INSERT OR IGNORE INTO fl_window(tenant, turn_id, success, created_at) VALUES (?, ?, ?, ?)",
                            [tenant, t["turn_id"], int(sc > 0), time.time()])
        self.db.execute(
            f"UPDATE fl_turns SET reviewed = 1 WHERE turn_id IN ({','.join('?' * len(ids))})", ids)
        self._count("reviews")
        self._close_review(tenant, sid, ended)
        self._batch_trigger(tenant)

    def _close_review(self, tenant: str, sid: str, ended: bool) -> None:
        self.db.execute("UPDATE fl_sessions SET review_due = NULL, review_reason = NULL, review_since = NULL, "
                        "since_review = CASE WHEN ? THEN 0 ELSE 1 END WHERE tenant = ? AND session_id = ?",
                        [int(ended), tenant, sid])

    def _batch_trigger(self, tenant: str) -> None:
        """A batch of ``batch_turns`` scored turns whose success rate is under the threshold evolves."""
        cfg = self.settings.evolution
        rows = self.db.query("SELECT * FROM fl_window WHERE tenant = ? AND batched = 0 ORDER BY created_at LIMIT ?",
                             [tenant, cfg.batch_turns])
        if len(rows) < cfg.batch_turns:
            return
        ids = [r["turn_id"] for r in rows]
        self.db.execute(f"UPDATE fl_window SET batched = 1 WHERE turn_id IN ({','.join('?' * len(ids))})", ids)
        rate = sum(r["success"] for r in rows) / len(rows)
        if rate >= cfg.success_rate_threshold or not self._evolver_on():
            return
        losers = [r["turn_id"] for r in rows if not r["success"] and not self.buffer.is_support(r["turn_id"])]
        if not losers:
            return
        turns = self.db.query(f"SELECT * FROM fl_turns WHERE turn_id IN ({','.join('?' * len(losers))})", losers)
        log.info("batch success rate %.2f < %.2f for tenant %s: evolving from %d turns", rate,
                 cfg.success_rate_threshold, tenant, len(turns))
        self._enqueue_evolution(tenant, "low_success_rate", turns)

    def _evolver_on(self) -> bool:
        return self.settings.evolution.enabled and self.evolver.available() is None

    def _enqueue_evolution(self, tenant: str, reason: str, turns: Iterable[Any]) -> None:
        turns = list(turns)
        self.buffer.mark_support(
            [(t["turn_id"], t["session_id"], t["tenant"], int(t["generation"])) for t in turns], reason)
        per = self.settings.evolution.max_support_turns
        now = time.time()
        for i in range(0, len(turns), per):
            chunk = [t["turn_id"] for t in turns[i:i + per]]
            self.db.execute("INSERT INTO fl_evolve_queue(tenant, reason, turn_ids, next_at, created_at) VALUES (?, ?, ?, ?, ?)",
                            [tenant, reason, json.dumps(chunk), now, now])
        self._count(f"evolution_trigger_{reason}")

    # Evolution ----------------------------------------------------------------------------------------
    def _process_evolutions(self, force: bool = False) -> None:
        now = time.time()
        rows = self.db.query("SELECT * FROM fl_evolve_queue WHERE state = 'pending' AND next_at <= ? ORDER BY id",
                             [float("inf") if force else now])
        by_tenant: dict[str, list[Any]] = defaultdict(list)
        for r in rows:
            by_tenant[r["tenant"]].append(r)
        for tenant, jobs in by_tenant.items():
            # Coalesce pending jobs of a tenant into one call, up to max_support_turns failures.
            group, ids = [], []
            for j in jobs:
                jids = json.loads(j["turn_ids"])
                if group and len(ids) + len(jids) > self.settings.evolution.max_support_turns:
                    break
                group.append(j)
                ids += jids
            self._run_evolution(tenant, group, ids)

    def support_turns(self, turn_ids: list[str]) -> list[SupportTurn]:
        get = self._session_cache()
        out = []
        for tid in turn_ids:
            rows = self.db.query("SELECT * FROM fl_turns WHERE turn_id = ?", [tid])
            if not rows:
                continue
            r = rows[0]
            session = get(r["tenant"], r["session_id"])
            turn, nxt, is_last = self._locate(session, tid)
            if turn is None:
                continue
            outcome = session.outcome if (is_last and session is not None and session.ended_at) else None
            eff = effective_reward(self.rewards_of(tid)) or (0.0, "none")
            out.append(SupportTurn(view_of(turn, nxt, outcome, r["task_type"]), eff[0], eff[1]))
        return out

    def _run_evolution(self, tenant: str, jobs: list[Any], turn_ids: list[str], dry_run: bool = False) -> EvolutionReport | None:
        ids = [j["id"] for j in jobs]
        marks = ",".join("?" * len(ids))
        support = self.support_turns(turn_ids)
        if not support:
            self.db.execute(f"UPDATE fl_evolve_queue SET state = 'failed', last_error = 'support turns not found' "
                            f"WHERE id IN ({marks})", ids)
            return None
        try:
            report = self.evolver.evolve(support, tenant=tenant, dry_run=dry_run)
        except BudgetExhausted as e:
            self._warn_once("evolver-budget", f"{e}; evolution resumes tomorrow (UTC)")
            self.db.execute(f"UPDATE fl_evolve_queue SET next_at = ?, last_error = 'budget' WHERE id IN ({marks})",
                            [day_start() + 86400 + 1, *ids])
            return None
        except LLMUnavailable as e:
            self.db.execute(f"UPDATE fl_evolve_queue SET state = 'skipped', last_error = ? WHERE id IN ({marks})",
                            [str(e)[:300], *ids])
            return None
        except LLMError as e:
            return self._evolution_failed(jobs, tenant, str(e))
        if report.error and not report.decisions and not dry_run:  # garbage answer: the call happened, try again later
            self._count("evolver_calls", report.calls)
            return self._evolution_failed(jobs, tenant, report.error)
        if dry_run:
            return report
        doc = json.dumps(self.redactor.redact_obj(report.as_dict()), ensure_ascii=False)
        self.db.execute(f"UPDATE fl_evolve_queue SET state = 'done', report = ?, done_at = ? WHERE id IN ({marks})",
                        [doc, time.time(), *ids])
        self._count("evolver_runs")
        self._count("evolver_calls", report.calls)
        self._count("skills_written", len(report.written))
        self.reports.append(report.as_dict())
        del self.reports[:-20]
        if report.generation_after != report.generation_before:
            self._generation_changed()
        log.info("evolution for tenant %s: %s", tenant,
                 ", ".join(f"{d.name}={d.decision}" for d in report.decisions) or "no candidates")
        return report

    def _evolution_failed(self, jobs: list[Any], tenant: str, error: str) -> None:
        ids = [j["id"] for j in jobs]
        marks = ",".join("?" * len(ids))
        err = self.redactor.redact(error)[:300]
        attempts = max(j["attempts"] for j in jobs) + 1
        if attempts >= self.settings.evolution.max_attempts:
            log.warning("evolution for tenant %s gave up after %d attempts: %s", tenant, attempts, err)
            self.db.execute(f"UPDATE fl_evolve_queue SET state = 'failed', attempts = ?, last_error = ? WHERE id IN ({marks})",
                            [attempts, err, *ids])
        else:
            delay = self.settings.evolution.backoff * 15 * (2 ** (attempts - 1))  # 30 s, 60 s... by default
            self.db.execute(f"UPDATE fl_evolve_queue SET attempts = ?, next_at = ?, last_error = ? WHERE id IN ({marks})",
                            [attempts, time.time() + delay, err, *ids])
        return None

    def _generation_changed(self) -> None:
        self.plugin.skills.refresh(force=True)
        dropped = self.buffer.on_generation(self.plugin.skills.store.generation)
        if dropped:
            log.info("skill generation is now %d: dropped %d stale samples", self.plugin.skills.generation, dropped)

    # Shadow trials ---------------------------------------------------------------------------------------
    def trial_stats(self) -> list[TrialStats]:
        out = []
        for name, skill in self.plugin.skills.skills.items():
            if not is_shadow(skill):
                continue
            rows = self.db.query("SELECT arm, score FROM fl_shadow WHERE skill = ? AND skill_generation = ? AND score IS NOT NULL",
                                 [name, skill.generation])
            w = [r["score"] for r in rows if r["arm"] == "with"]
            o = [r["score"] for r in rows if r["arm"] == "without"]
            sw, so = sum(1 for x in w if x > 0), sum(1 for x in o if x > 0)
            out.append(TrialStats(name, len(w), sw, len(o), so, prob_b_beats_a(so, len(o), sw, len(w))))
        return out

    def _evaluate_shadows(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last_shadow < SHADOW_EVAL_EVERY:
            return
        self._last_shadow = now
        cfg = self.settings.evolution
        changed = False
        for st in self.trial_stats():
            decision = shadow_decision(st, cfg.shadow_min_samples, cfg.shadow_max_samples, cfg.shadow_confidence)
            if decision is None:
                continue
            reason = (f"shadow trial: {decision} (with {st.s_with}/{st.n_with} successes, without "
                      f"{st.s_without}/{st.n_without}, P(better)={st.p_better:.3f}, threshold {cfg.shadow_confidence})")
            status = "active" if decision == "promote" else "retired"
            self.plugin.skills.store.set_status(st.skill, status, actor="shadow-trial", reason=reason, bump=status == "active")
            self._count(f"shadow_{decision}")
            log.info("%s: %s", st.skill, reason)
            changed = True
        if changed:
            self._generation_changed()

    def _sweep_stale_sessions(self, force: bool = False) -> None:
        """Sessions that never ended (the process was killed) are reviewed once they are idle."""
        now = time.time()
        if not force and now - self._last_sweep < STALE_SESSION_SWEEP:
            return
        self._last_sweep = now
        live = {(s.tenant, s.session_id) for s in self.plugin.active_sessions()}
        cutoff = now - self.settings.sessions.session_idle_timeout
        for r in self.db.query("SELECT tenant, session_id FROM fl_sessions WHERE ended = 0 AND last_at < ?", [cutoff]):
            if (r["tenant"], r["session_id"]) in live:
                continue
            self.db.execute("UPDATE fl_sessions SET ended = 1, review_due = ?, review_reason = 'stale', "
                            "review_since = COALESCE(review_since, ?) WHERE tenant = ? AND session_id = ?",
                            [now, now, r["tenant"], r["session_id"]])
        # The buffer follows generation bumps made elsewhere (CLI approve, another process).
        self.buffer.on_generation(self.plugin.skills.store.generation)

    # On demand (CLI) -------------------------------------------------------------------------------------
    def evolve_now(self, session_id: str | None = None, *, tenant: str | None = None, dry_run: bool = False) -> list[dict[str, Any]]:
        """Run evolution now: for one session's failed turns (all its main turns if none failed), or
        for everything pending. ``dry_run`` calls the evolver and screens, but writes nothing."""
        with self._tick_lock:
            self.plugin.store.flush(10.0)
            if session_id is None:
                if not dry_run:
                    self.tick(force=True)
                    self.tick(force=True)
                    return [r for r in self.reports]
                out = []
                rows = self.db.query("SELECT * FROM fl_evolve_queue WHERE state = 'pending' ORDER BY id")
                for r in rows:
                    rep = self._run_evolution(r["tenant"], [r], json.loads(r["turn_ids"]), dry_run=True)
                    if rep is not None:
                        out.append(rep.as_dict())
                return out
            session = self.plugin.store.get_session(session_id, tenant=tenant)
            if session is None:
                raise KeyError(session_id)
            self._adopt(session)
            main = [t for t in session.turns if t.kind == "main"]
            for t in main:
                self._queue_judge(t.turn_id, session.tenant, session.session_id, delay=0)
            self._process_judge_queue(force=True)
            failed = []
            for t in main:
                eff = effective_reward(self.rewards_of(t.turn_id))
                if eff is not None and eff[0] < 0:
                    failed.append(t.turn_id)
            ids = failed or [t.turn_id for t in main]
            ids = ids[-self.settings.evolution.max_support_turns:]
            support = self.support_turns(ids)
            if not support:
                return []
            report = self.evolver.evolve(support, tenant=session.tenant, dry_run=dry_run)
            if not dry_run:
                rows = self.db.query(f"SELECT * FROM fl_turns WHERE turn_id IN ({','.join('?' * len(ids))})", ids)
                self.buffer.mark_support([(r["turn_id"], r["session_id"], r["tenant"], int(r["generation"])) for r in rows],
                                         "cli")
                if report.generation_after != report.generation_before:
                    self._generation_changed()
            out = report.as_dict()
            out["support_kind"] = "failed turns" if failed else "all main turns (none was scored as failed)"
            return [out]

    def _adopt(self, session: Session) -> None:
        """Make sure a session from the store (maybe from before the fast loop existed) has fl_turns rows."""
        now = time.time()
        for i, t in enumerate(session.turns):
            self.db.execute(
                "INSERT OR IGNORE INTO fl_turns(turn_id, tenant, session_id, kind, seq, generation, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)", [t.turn_id, t.tenant, t.session_id, t.kind, i + 1, t.skill_generation, now])

    # Status ---------------------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        return {
            **status_from_db(self.settings),
            "judge": self.judge.available() or "on",
            "evolver": self.evolver.available() or "on",
            "shadow_trials": [s.as_dict() for s in self.trial_stats()],
            "errors": dict(self.errors),
        }


def status_from_db(settings: Any) -> dict[str, Any]:
    """Fast-loop figures for ``status``, read-only (works without a running plugin)."""
    import sqlite3

    from .llm import utc_day
    from .training.buffer import read_stats

    db = settings.db_file
    out: dict[str, Any] = {"buffer": read_stats(db), "rewards_today": {}, "budget": {}, "queues": {}, "counters": {}}
    limits = {"judge": (settings.reward.daily_calls, settings.reward.daily_tokens),
              "evolver": (settings.evolution.daily_calls, settings.evolution.daily_tokens)}
    used: dict[str, tuple[int, int]] = {}
    if db.exists():
        try:
            conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
            try:
                def q(sql: str, args: Iterable[Any] = ()) -> list[Any]:
                    try:
                        return conn.execute(sql, tuple(args)).fetchall()
                    except sqlite3.OperationalError:
                        return []  # table not created yet

                out["rewards_today"] = dict(q("SELECT source, COUNT(*) FROM rewards WHERE created_at >= ? GROUP BY source",
                                              [day_start()]))
                for purpose, calls, tokens in q("SELECT purpose, calls, tokens FROM llm_budget WHERE day = ?", [utc_day()]):
                    used[purpose] = (int(calls), int(tokens))
                out["queues"] = {
                    "judge": dict(q("SELECT state, COUNT(*) FROM fl_judge_queue GROUP BY state")),
                    "evolution": dict(q("SELECT state, COUNT(*) FROM fl_evolve_queue GROUP BY state")),
                }
                out["counters"] = dict(q("SELECT key, value FROM fl_counters"))
            finally:
                conn.close()
        except sqlite3.Error:
            pass
    for purpose, (lc, lt) in limits.items():
        c, t = used.get(purpose, (0, 0))
        out["budget"][purpose] = {
            "calls_used": c, "tokens_used": t,
            "calls_left": max(0, lc - c) if lc else None, "tokens_left": max(0, lt - t) if lt else None,
        }
    return out


def attach(plugin: "MetaClawPlugin") -> FastLoop:
    loop = FastLoop(plugin)
    plugin.add_turn_listener(loop.on_turn)
    plugin.add_session_end_listener(loop.on_session_end)
    if hasattr(plugin, "add_feedback_listener"):
        plugin.add_feedback_listener(loop.on_feedback)
    return loop.start()

