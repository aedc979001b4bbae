"""SkillBank: the in-memory view of the library that the request path reads.

The request path only reads an immutable snapshot (skills + search index). Reloading from disk
and rebuilding the index happen in the background worker, then the snapshot is swapped by a
single assignment, so a request never waits on a file, a lock or an index build.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..config import Settings
from ..infra.memo import Memo
from ..tasktext import Repeats, TurnTask
from ..text import folded_words
from ..types import DEFAULT_TENANT, Message, Skill, TurnContext, task_type_of
from .files import SkillStore
from .render import fit_conventions, render_block
from .rerank import POOL, Picks, Pool, Reranker
from .retrieve import KeywordIndex, Retriever, allow_all, is_long, task_parts, without_ids
from .skillmd import kind_reason, task_scope

log = logging.getLogger("metaclaw_plugin.skills")

SHADOW_KEY = "metaclaw_shadow"  # ctx.metadata key: {skill name: "with" | "without"}
MAX_SHADOW_PER_TURN = 2
FULL_SCAN_EVERY = (
    60.0  # seconds; catches hand edits that bypass the store's change counter (a scan stats every SKILL.md)
)
BLOCKS_MAX = 1024  # rendered blocks remembered per snapshot (~5 MB at most)


@dataclass(frozen=True)
class Snapshot:
    version: int = -1
    generation: int = 0
    fingerprint: int = 0
    skills: dict[str, Skill] = field(default_factory=dict)
    index: Retriever = field(default_factory=lambda: KeywordIndex([]))
    pinned: tuple[Skill, ...] = ()
    shadow: KeywordIndex | None = None  # skills on shadow trial (quarantined, metadata.promotion: shadow)
    pending: dict[str, Skill] = field(default_factory=dict)  # name -> version waiting for its trial or review
    trial_versions: dict[str, Skill] = field(default_factory=dict)  # active name -> new version on trial against it
    hidden: dict[str, frozenset[str]] = field(default_factory=dict)  # tenant -> shared skills its variants replace
    tenanted: bool = False  # a tenant's own skill is in the index: requests are filtered by tenant
    # Conventions (metadata.kind: convention): on every main turn of their tenant, best evidence first.
    conventions: tuple[Skill, ...] = ()
    trial_conventions: tuple[Skill, ...] = ()  # new conventions on shadow trial (a share of the tenant's turns)
    rules: dict[str, str] = field(default_factory=dict)  # convention name -> its stated_key ("" when too short)
    # Per (tenant, task type, budget, work request): the conventions' rendered entries, their names, and the names
    # left out for the budget (task type None: every convention of the tenant, as status shows them).
    plans: Memo[tuple[str, str | None, int, bool], tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = field(
        default_factory=lambda: Memo(BLOCKS_MAX), compare=False, repr=False
    )
    # Rendered blocks by (tenant, query, context, live settings, the conversation's second-stage picks), with the
    # candidates found for the second stage. An agent's tool loop sends the same user message and context on every
    # step of one turn, so each step after the first skips retrieval and rendering.
    # The cache goes with the snapshot: a library change starts an empty one.
    blocks: Memo[tuple[Any, ...], tuple[str, tuple[str, ...], dict[str, float], Pool | None]] = field(
        default_factory=lambda: Memo(BLOCKS_MAX), compare=False, repr=False
    )


STATED_MIN_WORDS = 5  # a shorter rule is too close to a passing phrase ("use tabs") to count as stated


def stated_key(rule: str) -> str:
    """A convention's rule as it would read in a request (:func:`folded_words`, the end punctuation off), or ""
    when it has fewer than :data:`STATED_MIN_WORDS` words."""
    key = folded_words(rule).rstrip(" .!?;:")
    return key if len(key.split()) >= STATED_MIN_WORDS else ""


def _unsaid(entries: list[str], names: list[str], rules: dict[str, str], said: str) -> tuple[list[str], list[str]]:
    """The conventions less those the request or its recent context already states word for word (the user
    said the rule again in this conversation): the block would only repeat it. Repeating it is not free: with
    SmolLM2-135M, a block that restated each conversation's own rule lowered its success on the rules from 14
    to 9 of 48 requests, where a block of the other conversations' rules left it at 14 (docs/bench-learning.md).
    The budget is not refilled: the rule is in the prompt already."""
    keys = [rules.get(n, "") for n in names]
    if not any(keys):
        return entries, names
    heard = folded_words(said)
    keep = [i for i, k in enumerate(keys) if not (k and k in heard)]
    if len(keep) == len(names):
        return entries, names
    return [entries[i] for i in keep], [names[i] for i in keep]


@dataclass
class Injection:
    text: str
    names: list[str]
    generation: int
    scores: dict[str, float] = field(default_factory=dict)


def bundled_skills_dir() -> Path:
    """The starter library: package data in an installed wheel, the top-level skills/ folder in a checkout."""
    installed = Path(__file__).resolve().parents[1] / "bundled_skills"
    if installed.is_dir():
        return installed
    return Path(__file__).resolve().parents[2] / "skills"


def _fingerprint(root: Path) -> int:
    fp = 0
    try:
        with os.scandir(root) as it:
            for e in it:
                if e.name.startswith(".") or not e.is_dir():
                    continue
                try:
                    fp ^= hash((e.name, os.stat(os.path.join(e.path, "SKILL.md")).st_mtime_ns))
                except OSError:
                    continue
    except OSError:
        return 0
    return fp


def is_shadow(skill: Skill) -> bool:
    """A skill on shadow trial: screened clean, waiting for its rewards to decide (see learning.trials)."""
    return skill.status == "quarantined" and skill.extra_metadata.get("promotion") == "shadow"


def versions_on_trial(skills: dict[str, Skill], pending: dict[str, Skill]) -> dict[str, Skill]:
    """New versions on shadow trial against the active version being served, by skill name."""
    return {
        n: c
        for n, c in pending.items()
        if c.extra_metadata.get("pending") == "trial" and n in skills and skills[n].status == "active"
    }


def trials_running(skills: dict[str, Skill], pending: dict[str, Skill]) -> list[tuple[str, int, bool]]:
    """Every trial: (skill, generation of what is on trial, whether it is a new version of a served skill)."""
    out = [(n, s.generation, False) for n, s in skills.items() if is_shadow(s)]
    return out + [(n, c.generation, True) for n, c in versions_on_trial(skills, pending).items()]


def _allowed(skill: Skill, tenant: str, share: bool, replaced: frozenset[str]) -> bool:
    """A tenant sees the shared skills, its own, and (``share``) other tenants' learned ones; a tenant's variant
    replaces the shared skill it was made from, for that tenant only."""
    return (skill.tenant is None or share or skill.tenant == tenant) and skill.name not in replaced


class SkillBank:
    def __init__(self, settings: Settings, tenant_key: Callable[[str], str | None] | None = None):
        """``tenant_key``: a tenant name as the hooks store it (the plugin's ``ids.joinable``), applied to each skill's
        ``metadata.tenant`` when the library loads, so that a rule written for a tenant by name (long, with spaces
        around it, in another Unicode form) is compared with the request's tenant in the same form."""
        self.settings = settings
        self.tenant_key = tenant_key
        self.store = SkillStore(settings.skills_path)
        self._snap = Snapshot()
        self._refresh_lock = threading.Lock()
        self._last_full_scan = 0.0
        self.problems: list[tuple[Path, str]] = []
        self.index_error: str | None = None
        self.conventions_left_out = 0  # main turns that had a convention left out for its budget
        self.repeats = Repeats()  # clients' per-turn preambles, learned from the requests (not the client's words)
        # The second ranking stage (retrieval.rerank), a background service the plugin starts with itself.
        model = settings.retrieval.rerank_model
        self.reranker = Reranker(model, settings.sessions.session_idle_timeout) if model else None

    # Background side ---------------------------------------------------------------------------
    def refresh(self, force: bool = False) -> bool:
        """Reload the library if it changed. Safe to call from any thread; never on the request path."""
        with self._refresh_lock:
            state = self.store.state()
            now = time.monotonic()
            fp = self._snap.fingerprint
            if not force and state.version == self._snap.version:
                if now - self._last_full_scan < FULL_SCAN_EVERY:
                    return False
                self._last_full_scan = now
                fp = _fingerprint(self.store.root)
                if fp == self._snap.fingerprint:
                    return False
            result = self.store.load()
            self.problems = result.problems
            if self.tenant_key is not None:
                result.skills = self._keyed(result.skills)
                result.pending = self._keyed(result.pending)
            live = [s for s in result.skills.values() if s.status == "active"]
            # procedures, retrieved by relevance; an inferred convention too, for the turns it reaches only that way
            active = [s for s in live if s.kind != "convention" or s.kind_from == "inferred"]
            evidence = result.evidence
            conventions = tuple(
                sorted(
                    (s for s in live if s.kind == "convention"),
                    key=lambda s: (-evidence.get(s.name, 0.0), -s.generation, s.name),
                )
            )
            index = self._build_index(active)
            pinned_cats = set(self.settings.injection.pinned_categories)
            pinned = tuple(s for s in active if s.always or s.category in pinned_cats)
            on_trial = [
                s
                for s in result.skills.values()
                if is_shadow(s) and (s.kind != "convention" or s.kind_from == "inferred")
            ]
            trial_conventions = tuple(s for s in result.skills.values() if is_shadow(s) and s.kind == "convention")
            hidden: dict[str, set[str]] = {}
            for s in live:
                base = s.extra_metadata.get("variant_of")
                if s.tenant is not None and isinstance(base, str):
                    hidden.setdefault(s.tenant, set()).add(base)
            trial_versions = versions_on_trial(result.skills, result.pending)
            self._snap = Snapshot(
                version=state.version,
                generation=state.generation,
                fingerprint=fp if fp else _fingerprint(self.store.root),
                skills=result.skills,
                index=index,
                pinned=pinned,
                # skills on trial: their own small index, without the rare-term gate (in a library of a few
                # skills every term is common, so the gate would starve every trial); min_score still applies
                shadow=KeywordIndex(on_trial, self.settings.retrieval.min_score) if on_trial else None,
                pending=result.pending,
                trial_versions=trial_versions,
                hidden={t: frozenset(n) for t, n in hidden.items()},
                tenanted=any(s.tenant is not None for s in active),
                conventions=conventions,
                trial_conventions=trial_conventions,
                rules={s.name: stated_key(s.description) for s in conventions},
            )
            self._last_full_scan = now
            return True

    def _keyed(self, skills: dict[str, Skill]) -> dict[str, Skill]:
        key = self.tenant_key
        assert key is not None
        out = dict(skills)
        for name, s in skills.items():
            if s.tenant is not None:
                t = key(s.tenant) or s.tenant
                if t != s.tenant:
                    out[name] = replace(s, tenant=t)
        return out

    def _keyword(self, skills: list[Skill]) -> KeywordIndex:
        cfg = self.settings.retrieval
        return KeywordIndex(skills, cfg.min_score, cfg.min_evidence)

    def _build_index(self, active: list[Skill]) -> Retriever:
        mode = self.settings.retrieval.mode
        if mode == "keyword":
            return self._keyword(active)
        try:
            from .embedding import build_embedding_index

            index = build_embedding_index(self.settings, active, mode, previous=self._snap.index)
            self.index_error = None
            return index
        except Exception as e:  # the host comes first: fall back to keyword search, loudly
            self.index_error = f"{type(e).__name__}: {e}"
            log.error("embedding retrieval unavailable, using keyword retrieval: %s", self.index_error)
            return self._keyword(active)

    # Request side (pure, in memory) --------------------------------------------------------------
    @property
    def generation(self) -> int:
        return self._snap.generation

    @property
    def skills(self) -> dict[str, Skill]:
        return self._snap.skills

    @property
    def pending(self) -> dict[str, Skill]:
        """Versions waiting for their trial or their review, by skill name."""
        return self._snap.pending

    def visible(self, tenant: str, skill: Skill) -> bool:
        """Whether ``tenant`` may be served ``skill`` (by status aside): the rule retrieval applies, and for a
        convention the stricter one (never another tenant's, whatever ``share_learned_skills`` says)."""
        snap = self._snap
        replaced = snap.hidden.get(tenant, frozenset())
        share = self.settings.sessions.share_learned_skills and skill.kind != "convention"
        return _allowed(skill, tenant, share, replaced)

    def select(
        self, ctx: TurnContext, query: str, context: str = "", snap: Snapshot | None = None, turn: int | None = None
    ) -> list[tuple[Skill, float]]:
        """The pinned skills, the best matches, then skills on shadow trial. With ``turn`` (the index of the task
        message in its conversation), the conversation's second-stage picks from an earlier turn apply and this
        turn's candidates go to the second stage (when it is on); without it, the first stage alone."""
        snap = snap or self._snap
        picks = self._picks(ctx, turn, query)
        chosen, pool = self._select(ctx, query, context, snap, picks, turn is not None)
        self._offer(ctx, turn, query, pool)
        return chosen

    def _select(
        self, ctx: TurnContext, query: str, context: str, snap: Snapshot, picks: Picks | None, pooled: bool
    ) -> tuple[list[tuple[Skill, float]], Pool | None]:
        """``select``'s work, and (``pooled``, with the second stage on) the candidates for it."""
        cfg = self.settings.retrieval
        share = self.settings.sessions.share_learned_skills
        query, context = without_ids(query), without_ids(context)  # ids name no topic (retrieve._OPAQUE)

        replaced = snap.hidden.get(ctx.tenant, frozenset()) if snap.hidden else frozenset()

        def tenants(s: Skill) -> bool:
            return _allowed(s, ctx.tenant, share, replaced)

        # every skill may be served (no tenant's own in the library, none replaced): no call per candidate
        allow: Callable[[Skill], bool] = allow_all if not replaced and (share or not snap.tenanted) else tenants

        chosen: list[tuple[Skill, float]] = [(s, 1.0) for s in snap.pinned if allow(s)][: cfg.top_k]
        seen = {s.name for s, _ in chosen}
        pool = None
        if query and len(chosen) < cfg.top_k:
            if pooled and self.reranker is not None and not self.reranker.unavailable:
                found, pool = self._second_stage(query, context, snap, allow, seen, picks)
            else:
                found = snap.index.search(query, cfg.top_k + len(seen), allow, context)
            for s, score in found:
                if s.name in seen:
                    continue
                chosen.append((s, score))
                seen.add(s.name)
                if len(chosen) >= cfg.top_k:
                    break
        if snap.shadow is not None and query:
            chosen += self._shadow_picks(ctx, query, snap.shadow, allow, seen)
        return chosen, pool

    def _second_stage(
        self,
        query: str,
        context: str,
        snap: Snapshot,
        allow: Callable[[Skill], bool],
        seen: set[str],
        picks: Picks | None,
    ) -> tuple[list[tuple[Skill, float]], Pool]:
        """The first stage's matches with the conversation's picks applied (a dictionary's worth of work; any error
        leaves the first stage's), and this turn's wider candidates for the second stage."""
        rr = self.reranker
        assert rr is not None
        room = self.settings.retrieval.top_k - len(seen)
        passed, served, ranked = snap.index.ranked(query, max(room, POOL) + len(seen), allow, context)
        ranked = [(s, sc) for s, sc in ranked if s.name not in seen][:POOL]
        found = [(s, sc) for s, sc in served if s.name not in seen] if passed else []
        if picks is not None:
            try:
                got = picks.apply(ranked, room)
            except Exception as e:
                rr.failed("applying a conversation's picks", e)
            else:
                if got is None:
                    rr.new_topic += 1
                else:
                    found = got
                    rr.applied += 1
        return found, Pool(query, tuple(ranked), passed, room)

    def _picks(self, ctx: TurnContext, turn: int | None, query: str) -> Picks | None:
        """The conversation's second-stage picks from an earlier turn, if any."""
        if self.reranker is None or turn is None:
            return None
        return self.reranker.picks((ctx.tenant, ctx.session_id), (turn, query))

    def _offer(self, ctx: TurnContext, turn: int | None, query: str, pool: Pool | None) -> None:
        if self.reranker is None or turn is None or pool is None:
            return
        try:
            self.reranker.offer((ctx.tenant, ctx.session_id), (turn, query), pool)
        except Exception as e:
            self.reranker.failed("queueing a turn", e)

    def rerank_status(self) -> dict[str, Any]:
        """For ``status``: whether the second stage is on and why, and its counters."""
        reason = self.settings.retrieval.rerank_reason
        if self.reranker is None:
            return {"state": "off", "reason": reason}
        return {"reason": reason, **self.reranker.status()}

    def _shadow_picks(
        self, ctx: TurnContext, query: str, index: KeywordIndex, allow, seen: set[str]
    ) -> list[tuple[Skill, float]]:
        """Shadow trial: a matching skill on trial goes in for ``shadow_fraction`` of the matching turns
        (chosen by a hash of the request id, so it is random across turns and stable for one turn); the
        other turns are the control arm. The arm is noted in ``ctx.metadata`` for the reward comparison."""
        fraction = self.settings.evolution.shadow_fraction
        arms: dict[str, str] = {}
        picks: list[tuple[Skill, float]] = []
        min_score = self.settings.retrieval.min_score
        for s, score in index.search(query, MAX_SHADOW_PER_TURN, allow):
            if s.name in seen or score < min_score:
                continue
            digest = hashlib.blake2b(f"{ctx.request_id}:{s.name}".encode(), digest_size=8).digest()
            if int.from_bytes(digest, "big") / 2**64 < fraction:
                arms[s.name] = "with"
                picks.append((s, score))
            else:
                arms[s.name] = "without"
        if arms:
            ctx.metadata[SHADOW_KEY] = arms
        return picks

    def _version_arms(
        self, ctx: TurnContext, chosen: list[tuple[Skill, float]], trials: dict[str, Skill]
    ) -> list[tuple[Skill, float]]:
        """A refinement on trial: a turn that picks the served skill gets the new version in
        ``shadow_fraction`` of cases (arm "with") and the served one otherwise ("without")."""
        fraction = self.settings.evolution.shadow_fraction
        arms = ctx.metadata.get(SHADOW_KEY) or {}
        out = []
        for s, score in chosen:
            cand = trials.get(s.name)
            if cand is not None:
                digest = hashlib.blake2b(f"{ctx.request_id}:{s.name}".encode(), digest_size=8).digest()
                if int.from_bytes(digest, "big") / 2**64 < fraction:
                    arms[s.name] = "with"
                    s = cand
                else:
                    arms[s.name] = "without"
            out.append((s, score))
        if arms:
            ctx.metadata[SHADOW_KEY] = arms
        return out

    def convention_plan(self, tenant: str, snap: Snapshot | None = None) -> tuple[list[Skill], list[Skill]]:
        """The tenant's conventions, best evidence first, split into those that fit
        ``injection.convention_tokens`` and those left out (for ``status``)."""
        snap = snap or self._snap
        _, names, dropped = self._plan(tenant, None, snap, self.settings.injection.convention_tokens, True)
        by_name = {s.name: s for s in snap.conventions}
        return [by_name[n] for n in names], [by_name[n] for n in dropped]

    def conventions_status(self) -> dict[str, Any]:
        """For ``status``: each tenant's conventions that fit the budget (over every task type), those left out
        (lowest evidence first), how many main turns had one left out in this process, and which conventions
        reach only some of the host's task types."""
        snap = self._snap
        tenants = sorted({s.tenant for s in snap.conventions if s.tenant is not None} | {DEFAULT_TENANT})
        by_tenant = {}
        for t in tenants:
            fit, out = self.convention_plan(t, snap)
            if fit or out:
                by_tenant[t] = {"injected": [s.name for s in fit], "left_out": [s.name for s in out]}
        return {
            "active": len(snap.conventions),
            "on_trial": len(snap.trial_conventions),
            "budget_tokens": self.settings.injection.convention_tokens,
            "by_tenant": by_tenant,
            "turns_with_left_out": self.conventions_left_out,
            # which turns they reach: with task_type, the ones listed here only turns of those host task types
            "scope": self.settings.injection.convention_scope,
            "task_types": {s.name: sorted(task_scope(s)) for s in snap.conventions if task_scope(s)},
            # learned skills stored without a kind whose text states a rule: on work requests only (is_long)
            "inferred": {s.name: kind_reason(s) for s in snap.conventions if s.kind_from == "inferred"},
        }

    def _plan(
        self, tenant: str, task: str | None, snap: Snapshot, budget: int, work: bool
    ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        plan = snap.plans.get((tenant, task, budget, work))
        if plan is None:
            mine = self._tenant_conventions(tenant, task, snap, snap.conventions, work)
            entries, names = fit_conventions(mine, budget)
            plan = (tuple(entries), tuple(names), tuple(s.name for s in mine if s.name not in names))
            snap.plans.put((tenant, task, budget, work), plan)
        return plan

    def _task_of(self, ctx: TurnContext) -> str | None:
        """The turn's task type as conventions are scoped by it (``injection.convention_scope``): "" for a turn
        the host did not label, None when conventions are not scoped (every one reaches every turn)."""
        if self.settings.injection.convention_scope != "task_type":
            return None
        return task_type_of(ctx) or ""

    @staticmethod
    def _tenant_conventions(
        tenant: str, task: str | None, snap: Snapshot, pool: Sequence[Skill], work: bool
    ) -> list[Skill]:
        """A tenant's standing rules: its own and the shared ones, never another tenant's (even with
        ``share_learned_skills``: a convention is how one user or team wants work done). With a task type, only
        the conventions that reach it: a rule learned in one kind of the host's work (its ``metadata.task_types``)
        stays there, the way the user stated it there; SmolLM2 answered a French conversation in English when
        the block carried the rules of the user's other conversations (docs/bench-learning.md). An inferred
        convention (nobody said its kind) reaches work requests only (``work``: :func:`is_long`): a line of chat
        gets it by relevance or not at all."""
        replaced = snap.hidden.get(tenant, frozenset())
        return [
            s
            for s in pool
            if (s.tenant is None or s.tenant == tenant)
            and s.name not in replaced
            and (task is None or not (scope := task_scope(s)) or task in scope)
            and (work or s.kind_from != "inferred")
        ]

    def _convention_entries(
        self, ctx: TurnContext, snap: Snapshot, budget: int, said: str, work: bool
    ) -> tuple[list[str], list[str]]:
        if not snap.conventions and not snap.trial_conventions:
            return [], []
        task = self._task_of(ctx)
        if not snap.trial_conventions and not any(s.name in snap.trial_versions for s in snap.conventions):
            entries, names, dropped = self._plan(ctx.tenant, task, snap, budget, work)
            if dropped:
                self.conventions_left_out += 1
            return _unsaid(list(entries), list(names), snap.rules, said)
        # A trial is running: arms per request (a new convention in a share of the turns; a new version of one
        # against the served version), then the same budget and order.
        mine = self._tenant_conventions(ctx.tenant, task, snap, snap.conventions, work)
        pairs = self._version_arms(ctx, [(s, 1.0) for s in mine], snap.trial_versions)
        fraction = self.settings.evolution.shadow_fraction
        arms = ctx.metadata.get(SHADOW_KEY) or {}
        for s in self._tenant_conventions(ctx.tenant, task, snap, snap.trial_conventions, work):
            digest = hashlib.blake2b(f"{ctx.request_id}:{s.name}".encode(), digest_size=8).digest()
            arms[s.name] = "with" if int.from_bytes(digest, "big") / 2**64 < fraction else "without"
            if arms[s.name] == "with":
                pairs.append((s, 0.0))
        if arms:
            ctx.metadata[SHADOW_KEY] = arms
        fitted, fitted_names = fit_conventions([s for s, _ in pairs], budget)
        if len(fitted_names) < len(pairs):
            self.conventions_left_out += 1
        return _unsaid(fitted, fitted_names, {s.name: stated_key(s.description) for s, _ in pairs}, said)

    def injection(self, ctx: TurnContext, messages: Sequence[Message], task: TurnTask | None = None) -> Injection:
        snap = self._snap  # one snapshot for the whole turn, even if the worker swaps it meanwhile
        if not self.settings.injection.enabled or ctx.kind != "main":
            return Injection("", [], snap.generation)
        cfg = self.settings.retrieval
        task = task or TurnTask(messages, self.repeats)
        query, context, repeated = task_parts(messages, cfg.context_messages, cfg.max_query_chars, self.repeats, task)
        turn = task.get(cfg.max_query_chars)[1]
        picks = self._picks(ctx, turn, query)
        # Shadow trials pick per request (the arm hangs on the request id): those turns are not cached.
        # The settings read live below are part of the key, so a changed budget is honoured at once.
        budget = self.settings.injection.max_injected_tokens
        conv_budget = self.settings.injection.convention_tokens
        key = None
        if snap.shadow is None and not snap.trial_versions and not snap.trial_conventions:
            key = (
                ctx.tenant,
                self._task_of(ctx),
                query,
                context,
                repeated,
                cfg.top_k,
                budget,
                conv_budget,
                self.settings.sessions.share_learned_skills,
                picks.seq if picks is not None else 0,
            )
        hit = snap.blocks.get(key) if key is not None else None
        if hit is not None:
            self._offer(ctx, turn, query, hit[3])  # another conversation's turn may have filled the cache
            return Injection(hit[0], list(hit[1]), snap.generation, dict(hit[2]))
        work = is_long(query)
        conv_entries, conv_names = self._convention_entries(
            ctx, snap, conv_budget, f"{query}\n{context}\n{repeated}", work
        )
        # A line of chat is judged on its own words: the context would carry the lessons of the conversation's last
        # work turn to every short question after it (issue 44: a question it does not govern got them).
        chosen, pool = self._select(ctx, query, context if work else "", snap, picks, True)
        if work:  # a work request has the inferred conventions in their own tier, not again among the procedures
            chosen = [(s, sc) for s, sc in chosen if s.kind_from != "inferred"]
        self._offer(ctx, turn, query, pool)
        if snap.trial_versions:
            chosen = self._version_arms(ctx, chosen, snap.trial_versions)
        text, proc_names = render_block([s for s, _ in chosen], budget, conv_entries)
        names = [*conv_names, *proc_names]
        scores = {s.name: round(sc, 4) for s, sc in chosen if s.name in proc_names}
        arms = ctx.metadata.get(SHADOW_KEY) if ctx.metadata else None
        if arms:  # a trial skill (or, for a new version, either version) that did not fit the budget is in neither arm
            for name in [
                n for n, arm in arms.items() if n not in names and (arm == "with" or n in snap.trial_versions)
            ]:
                del arms[name]
        if key is not None:
            snap.blocks.put(key, (text, tuple(names), scores, pool))
        return Injection(text, names, snap.generation, dict(scores))
