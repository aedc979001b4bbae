"""What the dashboard shows, read-only from the skills folder and the home's database: the SQLite file (one short
read-only connection a page) or PostgreSQL (the plugin's pool). The reads are :mod:`metaclaw_plugin.store.activity`'s
and the memory tables' (:mod:`metaclaw_plugin.store.memories`, :mod:`metaclaw_plugin.store.passages`)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

from ..learning.approval import label, trial_evidence
from ..learning.reward import effective_reward
from ..skillbank.files import SkillStore
from ..store import activity, memories, passages
from ..store import steps as train_steps_table
from ..store import transitions as sched_transitions
from ..store.backend import reading
from ..store.postgres import PostgresDatabase
from ..types import Skill

Source: TypeAlias = Path | PostgresDatabase  # the home's SQLite file, or its PostgreSQL database


@dataclass
class SkillRow:
    name: str
    description: str
    kind: str
    status: str  # the label a person reads: active, trial, quarantined, retired, "active (v3 review)"
    origin: str
    version: int
    generation: int
    uses: int
    reward_with: float | None
    reward_without: float | None
    trial: dict[str, Any] | None
    can_approve: bool
    can_retire: bool
    can_rollback: bool
    error: str | None = None  # a skill that cannot be read or shown: why (the row says so; nothing else fails)


def error_row(name: str, reason: str) -> SkillRow:
    """A skill the page cannot show: its folder's name and the reason, in place of a 500 for the whole page."""
    return SkillRow(name, reason, "", "error", "", 0, 0, 0, None, None, None, False, False, False, error=reason)


def _problem_name(path: Path) -> str:
    return path.parent.name if path.name == "SKILL.md" else path.name


def skills(skills_dir: Path, db: Source) -> list[SkillRow]:
    result = SkillStore(skills_dir).load()
    with reading(db) as query:
        used = activity.skill_uses(query)
        overall = activity.scored_main_turns(query)
        trials = trial_evidence(result, query)
    out = [error_row(_problem_name(p), reason) for p, reason in result.problems]
    for name, s in sorted(result.skills.items()):
        try:
            out.append(_row(s, result.pending.get(name), used.get(name, (0, 0, 0.0)), overall, trials))
        except Exception as e:  # one skill the page cannot show must not take the page down
            out.append(error_row(name, f"cannot be shown: {type(e).__name__}: {e}"))
    return sorted(out, key=lambda r: r.name)


def _row(
    s: Skill,
    pending: Skill | None,
    use: tuple[int, int, float],
    overall: tuple[int, float],
    trials: dict[str, dict[str, Any]],
) -> SkillRow:
    (uses, n, total), (n_all, total_all) = use, overall
    version = int(s.extra_metadata.get("version", 1) or 1)
    return SkillRow(
        name=s.name,
        description=s.description,
        kind=s.kind,
        status=label(s, pending),
        origin=s.origin,
        version=version,
        generation=s.generation,
        uses=uses,
        reward_with=total / n if n else None,
        reward_without=(total_all - total) / (n_all - n) if n_all - n > 0 else None,
        trial=trials.get(s.name),
        can_approve=s.status != "active" or pending is not None,
        can_retire=s.status != "retired",
        can_rollback=version > 1,
    )


def sessions(db: Source, *, limit: int = 50, offset: int = 0) -> tuple[int, list[dict[str, Any]]]:
    """The most recent sessions with their turn count, mean reward and the skills their turns carried."""
    with reading(db) as query:
        total = activity.session_count(query)
        out = []
        for r in activity.latest_sessions(query, limit, offset):
            turns = activity.session_turns(query, r["tenant"], r["session_id"])
            scores = [t["score"] for t in turns if t["score"] is not None]
            injected = sorted({n for t in turns for n in json.loads(t["injected"] or "[]")})
            out.append(
                {
                    **dict(r),
                    "outcome": json.loads(r["outcome"]) if r["outcome"] else None,
                    "mean_reward": sum(scores) / len(scores) if scores else None,
                    "scored": len(scores),
                    "injected": injected,
                }
            )
    return total, out


def session_rewards(db: Source, turn_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {t: [] for t in turn_ids}
    if not turn_ids:
        return out
    with reading(db) as query:
        for r in activity.rewards_of(query, turn_ids):
            out[r["turn_id"]].append({"source": r["source"], "score": r["score"]})
    return out


def train_steps(db: Source) -> list[dict[str, Any]]:
    with reading(db) as query:
        return train_steps_table.every(query)


DAILY_DAYS = 90  # how far back the success-per-day figure reaches


def _day(ts: float) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(ts))  # the user's day, as the pages show times


def daily_success(db: Source, *, days: int = DAILY_DAYS, now: float | None = None) -> list[dict[str, Any]]:
    """Per local day, oldest first: the judged main turns (any reward), the share whose effective reward (the
    reward ledger's priority: a person's word over a checker over the judge) is positive, and the training steps
    taken. The figure a user reads beside the training curve: do my turns succeed more often as steps are taken?"""
    since = (time.time() if now is None else now) - days * 86_400
    with reading(db) as query:
        rows = activity.main_rewards_since(query, since)
        steps = train_steps_table.since(query, since)
    turns: dict[str, tuple[float, list[dict[str, Any]]]] = {}
    for r in rows:
        turns.setdefault(r["turn_id"], (r["created_at"], []))[1].append({"source": r["source"], "score": r["score"]})
    out: dict[str, dict[str, Any]] = {}

    def day(d: str) -> dict[str, Any]:
        return out.setdefault(d, {"day": d, "judged": 0, "positive": 0, "success": None, "steps": 0, "last_step": None})

    for at, rewards in turns.values():
        eff = effective_reward(rewards)
        if eff is None:
            continue
        d = day(_day(at))
        d["judged"] += 1
        d["positive"] += eff[0] > 0
    for s in steps:
        d = day(_day(s["created_at"]))
        d["steps"] += 1
        d["last_step"] = max(d["last_step"] or 0, int(s["step"]))
    for d in out.values():
        d["success"] = d["positive"] / d["judged"] if d["judged"] else None
    return [out[k] for k in sorted(out)]


def transitions(db: Source) -> list[dict[str, Any]]:
    with reading(db) as query:
        return sched_transitions.every(query)


def windows(rows: list[dict[str, Any]], now: float | None = None) -> list[dict[str, Any]]:
    """Each state the scheduler was in, from one transition to the next (the last one until now)."""
    now = time.time() if now is None else now
    out = []
    for i, r in enumerate(rows):
        end = rows[i + 1]["at"] if i + 1 < len(rows) else now
        out.append({"state": r["to_state"], "start": r["at"], "end": max(end, r["at"]), "reason": r["reason"]})
    return out


def memory_users(db: Source) -> list[dict[str, Any]]:
    """Every (tenant, user) with memories or passages, and how many per status: the memory page's index."""
    with reading(db) as query:
        rows = memories.per_user(query)
        said = passages.per_user(query)
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for r, field in [*((r, "counts") for r in rows), *((r, "said") for r in said)]:
        key = (r["tenant"], r["user_id"])
        u = out.setdefault(key, {"tenant": r["tenant"], "user": r["user_id"], "counts": {}, "said": {}})
        u[field][r["status"]] = int(r["n"])
    return sorted(out.values(), key=lambda u: (u["tenant"], u["user"]))


def passages_of(db: Source, tenant: str, user: str, limit: int = 50) -> list[dict[str, Any]]:
    """What one user said, the latest first (passages; a forgotten one's text is erased)."""
    with reading(db) as query:
        rows = passages.said_by(query, tenant, user, limit)
    return [dict(r) for r in rows]


def model_spend(settings: Any) -> dict[str, Any]:
    """Today's calls and tokens of the plugin's own model calls per part (judge, evolver, memory, and the host's
    model for all of them), with what the daily budgets leave, and the host's model the plugin calls."""
    from ..learning.status import status_from_db

    fl = status_from_db(settings)
    return {
        "budget": fl.get("budget", {}),
        "host_model": fl.get("host_model"),
        "learning_model": settings.learning.model,
    }
