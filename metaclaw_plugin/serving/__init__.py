"""The trainable policy, served: ``metaclaw/<name>`` for LiteLLM, ``POST /v1/chat/completions`` on the sidecar,
the atomic hot swap, and publishing LoRA weights to a vLLM server. Needs the ``train-local`` extra (torch,
transformers, peft) and ``training.base_model`` (a local Hugging Face folder)."""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Callable
from typing import Any

from ..training.weights import WeightsRef
from .policy import Generation, PolicyInputError, ServedPolicy, Weights
from .toolcalls import parse_tool_calls
from .vllm import VllmPublisher, VllmPublishError, lora_name_for
from .watch import WeightsWatcher

__all__ = [
    "Generation",
    "PolicyInputError",
    "PolicyUnavailable",
    "ServedPolicy",
    "VllmPublishError",
    "VllmPublisher",
    "Weights",
    "WeightsWatcher",
    "describe",
    "from_settings",
    "lora_name_for",
    "parse_tool_calls",
    "policy_status",
    "publish_in_process",
    "shared_policy",
    "unavailable_reason",
]


class PolicyUnavailable(RuntimeError):
    """No policy can be served here; the message says why and how to fix it."""


def unavailable_reason(settings: Any) -> str | None:
    """Why ``settings`` cannot serve a policy, or None. Cheap: looks modules up without importing them.

    The policy follows ``training.backend``: ``local`` samples the model folder here (torch), ``tinker`` samples
    through Tinker's sampling client (the same readiness as the tinker trainer: SDK and ``TINKER_API_KEY``)."""
    from ..training.models import ModelNotFound, resolve

    t = settings.training
    if t.backend == "tinker":
        return t.off_reason()
    missing = [m for m in ("torch", "transformers", "peft") if importlib.util.find_spec(m) is None]
    if missing:
        return f"{', '.join(missing)} not installed: pip install 'metaclaw-plugin[train-local]'"
    if not t.base_model:
        return "training.base_model is not set (a local Hugging Face model folder to serve and train)"
    try:
        resolve(t.base_model)
    except ModelNotFound as e:
        return str(e)
    return None


def policy_status(settings: Any) -> dict[str, Any]:
    """What ``status``/``doctor`` say about the served policy (cheap: nothing is loaded)."""
    s = settings.serving
    reason = unavailable_reason(settings)
    return {
        "model": f"metaclaw/{s.name}",
        "servable": reason is None,
        "reason": reason,
        "base_model": settings.training.base_model,
        "backend": settings.training.backend,
        "device": s.device,
        "vllm_url": s.vllm_url,
    }


def describe(st: dict[str, Any]) -> str:
    if not st["servable"]:
        return f"{st['model']} cannot be served: {st['reason']}"
    where = "Tinker's sampling client" if st["backend"] == "tinker" else st["device"]
    line = f"{st['model']} from {st['base_model']} on {where} (serve: /v1/chat/completions; LiteLLM provider)"
    return line + (f"; LoRA weights published to vLLM at {st['vllm_url']}" if st["vllm_url"] else "")


def from_settings(settings: Any, db: Any = None) -> ServedPolicy:
    """A :class:`ServedPolicy` for ``settings`` (not started). Raises :class:`PolicyUnavailable`.

    Its database is the home's (``open_database``: SQLite, or the PostgreSQL server the trainer writes to), so
    it finds the weights the trainer publishes and records its tokens where the trainer looks them up."""
    from ..store import open_database

    reason = unavailable_reason(settings)
    if reason:
        raise PolicyUnavailable(f"metaclaw/{settings.serving.name} cannot be served: {reason}")
    s = settings.serving
    return ServedPolicy(
        settings.training.base_model,
        name=s.name,
        device=s.device,
        db=db if db is not None else open_database(settings),
        max_new_tokens=s.max_new_tokens,
        workers=s.workers,
        poll_interval=s.poll_interval,
        backend=settings.training.backend,
        scope=settings.training.scope_in_effect()[0],
    )


_shared_lock = threading.Lock()
_shared: dict[tuple[str | None, ...], ServedPolicy] = {}
_shared_where: dict[tuple[str | None, ...], str] = {}  # the database each shared policy reads


def _where(settings: Any) -> str:
    """Which database a home's policy and trainer share: the PostgreSQL URL, or the SQLite file."""
    st = settings.storage
    return str(st.url) if st.backend == "postgres" else str(settings.db_file)


def publish_in_process(settings: Any) -> Callable[[WeightsRef], None]:
    """A trainer's ``publish`` callback: this process's shared policies on the same database swap at once
    (others, in other processes, see the weights through their watcher). Loads no policy."""
    where = _where(settings)

    def publish(ref: WeightsRef) -> None:
        with _shared_lock:
            policies = [p for k, p in _shared.items() if _shared_where.get(k) == where]
        for p in policies:
            p.swap(ref)

    return publish


def shared_policy(name: str | None = None, settings: Any = None) -> ServedPolicy:
    """This process's policy for ``settings`` (default: the default config, ``METACLAW_CONFIG``/``METACLAW_HOME``),
    one per database and model, started on first use (the load runs in the background;
    :meth:`ServedPolicy.wait_ready` waits for it). ``name``, when given, must be ``serving.name``."""
    from ..config import Settings

    if settings is None:
        key: tuple[str | None, ...] = ("default", os.environ.get("METACLAW_CONFIG"), os.environ.get("METACLAW_HOME"))
    else:
        key = ("settings", str(settings.db_file), settings.training.base_model, settings.serving.name)
    with _shared_lock:
        policy = _shared.get(key)
        if policy is None:
            chosen = settings if settings is not None else Settings.load()
            policy = from_settings(chosen)
            policy.start()
            _shared[key] = policy
            _shared_where[key] = _where(chosen)
    if name is not None and name != policy.name:
        raise PolicyUnavailable(
            f"no policy metaclaw/{name} here: this process serves {policy.model_name} (serving.name)"
        )
    return policy
