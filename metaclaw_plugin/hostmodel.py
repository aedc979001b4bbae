"""The host's own model, offered by its adapter, for the plugin's own calls (``learning.model: host``).

Every host already has a model it can call: the LiteLLM proxy its router (its ``model_list`` and keys), an SDK
caller the model of its own requests, a LangChain agent its chat model. The adapter offers one here when it sees
the first request; the evolver, the judge, memory extraction and skill review use it where no model is set for
them. Calls made through it run inside :func:`plugin_call`, which the adapters check so that the plugin's own
calls are never recorded as turns, injected into, or counted as the host's side calls. They give way to the host's
own traffic first (:mod:`.hosttraffic`, held here as :attr:`HostModels.give_way`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .hosttraffic import GiveWay

# The tag the plugin's own calls carry, so the host's spend logs show them as the plugin's.
TAG = "metaclaw-plugin"
HOST_MODEL_KEY = "host_model"  # where the offered model is noted for `status` (runtime_state)


@dataclass(frozen=True)
class HostReply:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0


# (messages, temperature, max_tokens, purpose) -> reply; raises on failure (the client retries and counts).
HostCall = Callable[[Sequence[dict[str, Any]], float, int, str], HostReply]


@dataclass(frozen=True)
class HostModel:
    name: str  # the model as the host names it
    via: str  # how it is called, for status ("the LiteLLM proxy's router", "the LangChain agent's chat model")
    call: HostCall
    local: bool = False  # the endpoint is on this machine (privacy.local_only allows it)

    def describe(self) -> str:
        return f"{self.name} ({self.via})"


class HostModels:
    """The model the host offered. The first offer stays, so the parts do not switch models between calls (an
    adapter offers ``learning.host_model`` where it is set, else the model of the first request it sees)."""

    def __init__(self, on_offer: Callable[[HostModel], object] | None = None, give_way: GiveWay | None = None) -> None:
        self._model: HostModel | None = None
        self.give_way = give_way or GiveWay()  # the calls wait here while the host is busy (the request path counts)
        self._lock = threading.Lock()
        self._on_offer = on_offer  # told once, when a model is kept (the plugin notes it for `status`, off the path)

    def offer(self, model: HostModel) -> bool:
        """Keep ``model`` unless one is kept already; True if kept."""
        with self._lock:
            if self._model is not None:
                return False
            self._model = model
        if self._on_offer is not None:
            self._on_offer(model)
        return True

    def get(self) -> HostModel | None:
        return self._model

    def wanted(self) -> bool:
        """Whether an offer would be kept (adapters build one only then: one read, no lock)."""
        return self._model is None


_local = threading.local()


@contextmanager
def plugin_call() -> Iterator[None]:
    """Mark this thread as making one of the plugin's own calls (the adapters pass it through untouched)."""
    depth = getattr(_local, "depth", 0)
    _local.depth = depth + 1
    try:
        yield
    finally:
        _local.depth = depth


def in_plugin_call() -> bool:
    return getattr(_local, "depth", 0) > 0
