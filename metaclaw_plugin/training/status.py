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
    "training.run": "run",  # tinker: the training run, the run it continues, why it is new
    "training.reverted": "reverted",  # published steps a restart could not resume
}


def training_status(settings: Settings) -> dict[str, Any]:
    t = settings.training
    out: dict[str, Any] = {
        "backend": t.backend,
        "base_model": t.base_model,
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
    }
    try:  # the home's database: the SQLite file, or the PostgreSQL server the trainer writes to
        with reading_home(settings) as query:
            last = steps.last(query, 1)
            state = runtime_state.values(query, list(_STATE))
    except Exception as e:  # an unreachable server or a torn file: status still answers, and says so
        out["error"] = f"{type(e).__name__}: {e}"
        return out
    if last:
        out["step"] = last[0]["step"]
        out["last"] = {k: v for k, v in last[0].items() if k != "detail"}
    out.update({name: state[key] for key, name in _STATE.items() if key in state})
    return out


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
    if status["evolve_on_failed_batch"]:
        line += f"; a batch with more than {status['evolve_failed_share']:.0%} failed turns feeds the evolver"
    else:
        line += "; failed batches do not feed the evolver (training.evolve_on_failed_batch)"
    return line + (f"; {note}" if note else "")
