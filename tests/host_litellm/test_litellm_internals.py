"""The LiteLLM internals the adapter touches (``metaclaw_litellm._internals``), checked against the installed
LiteLLM: this fails loudly, naming the touch, when a LiteLLM release changes one of them."""

from __future__ import annotations

from importlib.metadata import version

import metaclaw_litellm
from metaclaw_litellm import _internals


def test_every_internal_the_adapter_touches_is_there() -> None:
    assert _internals.problems() == (), f"LiteLLM {version('litellm')}"


def test_a_missing_internal_is_named(monkeypatch) -> None:
    """The check is real: with the proxy's slot gone, it names that touch (and only that one)."""
    from litellm.proxy.utils import ProxyLogging

    monkeypatch.delattr(ProxyLogging, "fire_deferred_stream_logging")
    monkeypatch.setattr(_internals, "_SLOT", [])
    _internals.problems.cache_clear()
    try:
        found = _internals.problems()
        assert len(found) == 1 and "fire_deferred_stream_logging" in found[0]
        logging_obj = _LoggingObj()
        assert not _internals.arm_deferred_slot(logging_obj, lambda *a: None)
        assert getattr(logging_obj, _internals.DEFERRED_SLOT, None) is None
    finally:
        _internals.problems.cache_clear()


class _LoggingObj:
    def dispatch_success_handlers(self, *args: object, **kwargs: object) -> None:
        return None


def test_the_slot_is_armed_once() -> None:
    """Armed when the proxy fires it; a slot already taken (the proxy's guardrails) is left alone."""
    logging_obj = _LoggingObj()
    first, second = (lambda *a: None), (lambda *a: None)
    assert _internals.arm_deferred_slot(logging_obj, first)
    assert not _internals.arm_deferred_slot(logging_obj, second)
    assert getattr(logging_obj, _internals.DEFERRED_SLOT) is first


def test_the_callback_status_shows_them() -> None:
    cb = metaclaw_litellm.MetaClawCallback(start=False)
    assert cb.status()["litellm_internals_missing"] == []
