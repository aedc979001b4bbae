"""What a person does to a skill, shared by ``skills approve`` and the dashboard: approving re-screens the skill
(a rejected one is refused, a suspicious one needs ``force``), and what a person reads about it (its label and
the evidence of its running trial)."""

from __future__ import annotations

from typing import Any

from ..privacy import Redactor
from ..skillbank.bank import is_shadow, trials_running
from ..skillbank.files import LoadResult, SkillStore
from ..store.backend import Query
from ..types import Skill
from .screening import screen
from .trials import evidence


class ApprovalRefused(ValueError):
    """Screening refuses the skill (or flags it and ``force`` was not given)."""


def approve(
    store: SkillStore,
    name: str,
    *,
    max_body_chars: int,
    actor: str,
    reason: str,
    redactor: Redactor,
    force: bool = False,
) -> Skill:
    """Serve the skill (or its pending version). Raises KeyError for an unknown name, ApprovalRefused."""
    pending = store.pending(name)
    current = pending or store.read(name)
    result = screen(current, strict_provenance=False, max_body_chars=max_body_chars, redactor=redactor)
    if result.verdict == "rejected":
        raise ApprovalRefused(
            f"{name}: screening refuses it; edit the skill first:\n  - " + "\n  - ".join(result.reasons)
        )
    if result.verdict == "suspicious" and not force:
        raise ApprovalRefused(
            f"{name}: screening flags it (approve with force after reading it):\n  - " + "\n  - ".join(result.reasons)
        )
    reason = f"{reason} (screening: {result.verdict})"
    if pending is not None:  # a new version waits: that version is served now
        return store.promote_pending(name, actor=actor, reason=reason)
    return store.set_status(name, "active", actor=actor, reason=reason, bump=True)


def label(skill: Skill, pending: Skill | None) -> str:
    """What a person should read: a skill on shadow trial is on ``trial``, not ``quarantined``."""
    if is_shadow(skill):
        return "trial"
    if pending is not None:
        return f"{skill.status} (v{pending.extra_metadata.get('version')} {pending.extra_metadata.get('pending')})"
    return skill.status


def trial_evidence(result: LoadResult, query: Query) -> dict[str, dict[str, Any]]:
    """Each running trial's evidence so far, read through ``query`` (see :func:`..store.backend.reading`)."""
    return {n: evidence(query, n, g, v).as_dict() for n, g, v in trials_running(result.skills, result.pending)}
