"""The trainer's state for ``status`` and ``train``, read-only from the home's database (creates nothing)."""

from __future__ import annotations

from typing import Any

from ..config import Settings
from ..store import runtime_state, steps
from ..store.backend import reading_home

_STATE = {
    "training.checkpoint": "checkpoint",
    "training.skipped": "skipped",
    "policy.weights": "weights",
    "policy.weights.tenants": "tenant_weights",
    "training.run": "run",  # tinker: the training run, the run it continues, why it is new
    "training.reverted": "reverted",  # published steps a restart could not resume
    "training.gate": "gate_state",  # the behaviour gate's counts and last verdict, the live watch's rollbacks
    "training.groups": "groups_state",  # what resampling for groups counted (training/groups.py)
}
SHARED_DISK = (
    "the local backend's LoRA weights are folders on the trainer's disk: on several hosts sharing PostgreSQL, a host "
    "that cannot read training.out_dir at the same path serves the base model (or its last weights) instead: put "
    "training.out_dir on storage every host mounts"
)


def training_status(settings: Settings) -> dict[str, Any]:
    t = settings.training
    out: dict[str, Any] = {
        "backend": t.backend,
        "base_model": t.base_model,
        "scope": t.scope_in_effect()[0],
        "scope_note": t.scope_in_effect()[1],  # why the scope in effect is not the one set (tinker: global)
        "tenants": [],  # scope tenant: each tenant's latest version {"tenant", "step", "steps", "at"}
        "weights_reach": SHARED_DISK if t.backend == "local" and settings.storage.backend == "postgres" else None,
        "off": settings.training.off_reason(),
        "step": 0,
        "last": None,
        "checkpoint": None,
        "weights": None,
        "skipped": None,  # skipped for lack of signal: {"batches", "groups", "samples", "reasons", "last"}
        "run": None,
        "reverted": None,
        # settings set on this home that its backend ignores: [{"setting", "value", "why"}] (config._local_only)
        "ignored_settings": t.ignored_settings(),
        # the second trigger path: a batch whose turns mostly failed feeds the evolver (learning/failed_batches.py)
        "evolve_on_failed_batch": t.evolve_on_failed_batch,
        "evolve_failed_share": t.evolve_failed_share,
        "gate": gate_settings(settings),
        "gate_state": None,
        "groups": group_settings(settings),
        "groups_state": None,
    }
    try:  # the home's database: the SQLite file, or the PostgreSQL server the trainer writes to
        with reading_home(settings) as query:
            last = steps.last(query, 1)
            state = runtime_state.values(query, list(_STATE))
            out["tenants"] = [r for r in steps.by_tenant(query) if r["tenant"] is not None]
    except Exception as e:  # an unreachable server or a torn file: status still answers, and says so
        out["error"] = f"{type(e).__name__}: {e}"
        return out
    if last:
        out["step"] = last[0]["step"]
        out["last"] = {k: v for k, v in last[0].items() if k != "detail"}
    out.update({name: state[key] for key, name in _STATE.items() if key in state})
    return out


def _tenant_line(status: dict[str, Any]) -> str:
    """Scope tenant: each tenant's version (its latest step), a few named."""
    rows = status.get("tenants") or []
    if status["scope"] != "tenant":
        return "; one set of weights for every tenant (training.scope global)"
    if not rows:
        return "; each tenant's own weights (training.scope tenant): none trained yet"
    shown = ", ".join(f"{r['tenant']} at step {r['step']}" for r in rows[:5])
    more = f" and {len(rows) - 5} more" if len(rows) > 5 else ""
    return f"; each tenant's own weights (training.scope tenant): {shown}{more}"


def gate_settings(settings: Settings) -> dict[str, Any]:
    """The behaviour gate and the live watch as set (``training.gate.*``), with what is off and why."""
    g = settings.training.gate
    out: dict[str, Any] = {
        "enabled": g.enabled,
        "watch": g.watch,
        "size": g.size,
        "min_prompts": g.min_prompts,
        "max_kl": g.max_kl,
        "watch_min_turns": g.watch_min_turns,
        "per_tenant": settings.training.scope_in_effect()[0] == "tenant",  # each tenant's step on its own prompts
    }
    if g.enabled and not settings.reward.enabled:
        out["scoring_off"] = "reward.enabled is off: success is not compared (KL budget and likelihood check only)"
    return out


def group_settings(settings: Settings) -> dict[str, Any]:
    """The groups as set (``training.group_size``, ``group_tolerance``, ``advantage``), with why resampling is off
    when the settings alone say it is (the trainer records the rest: no scorer in its process)."""
    t = settings.training
    off = None
    if t.group_size == 1:
        off = "training.group_size is 1: each captured answer is its group's only sampled member"
    elif not settings.reward.enabled:
        off = "reward.enabled is off: no answer can be scored"
    return {"size": t.group_size, "tolerance": t.group_tolerance, "advantage": t.advantage, "off": off}


def groups_note(status: dict[str, Any]) -> str:
    """What ``status`` and ``doctor`` say of the groups: their size, what resampling did, why it is off."""
    g, st = status.get("groups") or {}, status.get("groups_state") or {}
    line = f"groups of {g.get('size')} (advantage {g.get('advantage')}, tolerance {g.get('tolerance', 0):g})"
    off = g.get("off") or st.get("off")
    if off:
        line += f"; resampling off: {off}"
    if st:
        line += (
            f": {st.get('resampled', 0)} answers resampled for {st.get('prompts', 0)} prompts in {st.get('batches', 0)}"
            f" batches, {st.get('unscored', 0)} prompts trained unscored, {st.get('flat', 0)} of {st.get('groups', 0)}"
            " groups skipped without variance"
        )
    return line


def gate_note(status: dict[str, Any]) -> str:
    """What ``status`` and ``doctor`` say of the gate: on or off, its counts, why success is not compared."""
    g, st = status.get("gate") or {}, status.get("gate_state") or {}
    each = " per tenant" if g.get("per_tenant") else ""
    if not g.get("enabled"):
        line = "behaviour gate off (training.gate.enabled)"
    else:
        c = st.get("counts") or {}
        line = (
            f"behaviour gate on ({g['size']} held-back prompts{each}, KL budget {g['max_kl']:g}): "
            f"{c.get('applied', 0)} applied, {c.get('refused', 0)} refused, {c.get('not_applied', 0)} not applied"
        )
        by = st.get("refused_by") or {}
        if by:
            line += " (refused by " + ", ".join(f"{k} {n}" for k, n in sorted(by.items())) + ")"
        last = st.get("last") or {}
        if last and last.get("publish") and not last.get("applied") and last.get("reason"):
            line += f"; last not applied: {last['reason']}"
        off = st.get("scoring_off") or g.get("scoring_off")
        if off:
            line += f"; success not compared: {off}"
    if not g.get("watch"):
        return line + "; live watch off (training.gate.watch)"
    line += f"; live watch on{each}, {st.get('rollbacks', 0)} automatic rollbacks"
    rb = st.get("last_rollback")
    if rb:
        whose = f" of tenant {rb['tenant']}" if rb.get("tenant") else ""
        line += f" (last{whose}: {rb['why']}" + (f"; failed: {rb['failed']})" if rb.get("failed") else ")")
    return line


def ignored_note(backend: str, ignored: list[dict[str, Any]]) -> str | None:
    """What ``status`` and ``doctor`` say of settings this backend ignores, each named with why; None if none."""
    if not ignored:
        return None
    each = "; ".join(f"{i['setting']}={i['value']} ({i['why']})" for i in ignored)
    return f"off on the {backend} backend: {each}"


def describe(status: dict[str, Any]) -> str:
    """One line for the status table."""
    note = ignored_note(status["backend"], status.get("ignored_settings") or [])
    if status["off"]:
        return f"off: {status['off']}" + (f"; {note}" if note else "")
    line = f"{status['backend']} on {status['base_model']}, step {status['step']}"
    last = status["last"]
    if last:
        line += f", loss {last['loss']:.4g}, mean reward {last['mean_reward']:.3g}, {last['step_seconds']:.2f}s/step"
    if status.get("skipped"):
        sk = status["skipped"]
        reasons = ", ".join(f"{n} {r}" for r, n in sorted(sk["reasons"].items()))
        line += f", {sk['batches']} batches and {sk.get('groups', 0)} groups skipped without signal ({reasons})"
    if status["checkpoint"]:
        line += f", checkpoint at step {status['checkpoint']['step']}"
    run = status.get("run")
    if run and run["continues"]:
        line += f", run {run['id']} continuing run {run['continues']}"
    elif run:
        why = run.get("new_because")
        line += f", run {run['id']} (new" + (f": {why})" if why else ")")
    rev = status.get("reverted")
    if rev:
        line += f"; steps {rev['resumed'] + 1}-{rev['published']} were published without a full state: not resumed"
    line += _tenant_line(status)
    if status.get("scope_note"):
        line += f" ({status['scope_note']})"
    if status.get("weights_reach"):
        line += f"; {status['weights_reach']}"
    line += "; " + groups_note(status) + "; " + gate_note(status)
    if status["evolve_on_failed_batch"]:
        line += f"; a batch with more than {status['evolve_failed_share']:.0%} failed turns feeds the evolver"
    else:
        line += "; failed batches do not feed the evolver (training.evolve_on_failed_batch)"
    return line + (f"; {note}" if note else "")
