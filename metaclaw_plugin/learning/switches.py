"""Whether each part of learning is on, and why not, from the settings alone (for ``status`` and ``doctor``).

A newcomer's first ``status`` showed a table of zeros and nothing said that the defaults learn nothing:
each switch here carries the reason and the setting that turns it on, and :func:`next_step` the one thing
to do next.
"""

from __future__ import annotations

import importlib.util
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..infra.logfile import log_file
from .llm import is_local_endpoint, model_source


@dataclass(frozen=True)
class Switch:
    on: bool
    why: str  # what is used when on; why not (and how to turn it on) when off
    configured: bool = False  # a model is set (a budget applies), whether or not it can run


def _llm_switch(section: Any, role: str, key: str, settings: Any) -> Switch:
    env = f"METACLAW_{key.upper()}__MODEL"
    if not section.enabled:
        return Switch(False, f"off: {key}.enabled is false")
    source, model = model_source(section, settings.learning)
    if source == "none":
        return Switch(
            False,
            f"off: no {role} model and learning.model is none; set {key}.model (or {env}) to any LiteLLM model, "
            "or learning.model to host",
        )
    if source == "host":
        return Switch(
            True,
            f"on: the host's own model (learning.model: host), as its adapter offers it with the first request; "
            f"{settings.learning.daily_calls} calls a day at most",
            True,
        )
    where = f"{model}" + (f" at {section.api_base}" if section.api_base and source == "own" else "")
    if source == "learning":
        where += " (learning.model)"
    if settings.privacy.local_only and not is_local_endpoint(model, section.api_base if source == "own" else None):
        return Switch(False, f"off: privacy.local_only forbids the non-local {role} {where}", True)
    if importlib.util.find_spec("litellm") is None:
        return Switch(
            False, f"off: {where} is set but litellm is not installed (pip install 'metaclaw-plugin[litellm]')", True
        )
    return Switch(True, f"on: {where}", True)


def learning_switches(settings: Any) -> dict[str, Switch]:
    """``evolver``, ``judge`` and ``training``, each on or off with the reason."""
    out = {
        "evolver": _llm_switch(settings.evolution, "evolver", "evolution", settings),
        "judge": _llm_switch(settings.reward, "judge", "reward", settings),
    }
    if settings.mode == "skills_only":
        out["training"] = Switch(False, "off: mode skills_only learns skills, not policy weights")
    elif settings.mode_note:
        out["training"] = Switch(False, f"off: {settings.mode_note}")
    else:
        out["training"] = Switch(True, f"on: mode {settings.mode}, backend {settings.training.backend}")
    return out


def fast_loop_note(settings: Any, switches: dict[str, Switch]) -> str | None:
    """When a judge or evolver is set but cannot run, where its failures are written."""
    if any(s.configured and not s.on for s in switches.values()):
        return f"the fast loop is unavailable; its failures are logged to {log_file(settings.home_dir)}"
    return None


def next_step(settings: Any, switches: dict[str, Switch], *, sessions: int) -> str:
    """The one command or setting a person should try next."""
    home: Path = settings.home_dir
    if not (home / "config.yaml").exists() and settings.config_file is None:
        return "metaclaw-plugin init   (then `metaclaw-plugin demo` shows the whole loop offline)"
    if not switches["evolver"].on and not switches["judge"].on:
        return (
            "metaclaw-plugin demo   (the loop on scripted endpoints, offline); to learn from your own use set "
            "evolution.model and reward.model in config.yaml (any LiteLLM model)"
        )
    if not switches["evolver"].on:
        return "set evolution.model (any LiteLLM model) so failed sessions become skills"
    if not switches["judge"].on:
        return "set reward.model (any LiteLLM model) so turns are scored without explicit feedback"
    if sessions == 0:
        return "point your host at the plugin (README: LiteLLM proxy, LangChain or OpenClaw), then watch `status`"
    return "metaclaw-plugin serve   (the dashboard at http://127.0.0.1:8765/)"


def as_dict(switches: dict[str, Switch]) -> dict[str, dict[str, Any]]:
    return {k: asdict(v) for k, v in switches.items()}
