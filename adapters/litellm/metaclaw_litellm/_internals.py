"""Every touch of LiteLLM's internals, in one place, with a check of each against the installed LiteLLM.

The adapter otherwise uses LiteLLM's public surface (``CustomLogger`` and its hooks, ``CustomLLM``, the
``litellm_call_id`` and ``litellm_logging_obj`` request keys). The few internals below let it record a proxy
stream from the response LiteLLM assembles anyway, with no work per chunk, and read a native Anthropic stream's
bytes from LiteLLM's own logging coroutine, and call the proxy's router for the plugin's own calls. :func:`problems` says, for the installed LiteLLM, which of them are not
as this module expects; ``tests/host_litellm/test_litellm_internals.py`` fails loudly on any, and
``MetaClawCallback.status()`` shows them. Where one is missing, the adapter falls back to LiteLLM's log events (the turn is still recorded, after
the client has the reply).
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable
from typing import Any

# The attribute of a request's logging object that the proxy fires at a stream's end (LiteLLM >= 1.108).
DEFERRED_SLOT = "_on_deferred_stream_complete"

_SLOT: list[bool] = []


def deferred_slot_fires() -> bool:
    """Whether this LiteLLM proxy fires the deferred stream-completion slot; checked once."""
    if not _SLOT:
        try:
            from litellm.proxy.utils import ProxyLogging

            _SLOT.append(callable(getattr(ProxyLogging, "fire_deferred_stream_logging", None)))
        except Exception:
            _SLOT.append(False)
    return _SLOT[0]


def arm_deferred_slot(logging_obj: Any, slot: Callable[..., Any]) -> bool:
    """Park ``slot`` in the request's deferred stream-completion slot; False where it cannot fire here or is taken
    (the proxy's post-call guardrails arm it themselves)."""
    if logging_obj is None or not callable(getattr(logging_obj, "dispatch_success_handlers", None)):
        return False
    if not deferred_slot_fires() or getattr(logging_obj, DEFERRED_SLOT, None) is not None:
        return False
    setattr(logging_obj, DEFERRED_SLOT, slot)
    return True


def dispatch_success(logging_obj: Any, response: Any, cache_hit: Any) -> Any:
    """The success dispatch the stream wrapper schedules when the slot is empty (a coroutine)."""
    return logging_obj.dispatch_success_handlers(
        response, cache_hit=cache_hit, start_time=None, end_time=None, prefer_async_handlers=True
    )


def passthrough_stream(logging_coroutine: Any) -> tuple[str, list[bytes]] | None:
    """(endpoint type, raw SSE bytes) from LiteLLM's pass-through logging coroutine, not started yet
    (``route_streaming_logging_to_handler(..., endpoint_type, ..., raw_bytes, ...)``); None when it is not one."""
    args = inspect.getcoroutinelocals(logging_coroutine)
    raw, kind = args.get("raw_bytes"), args.get("endpoint_type")
    if kind is None or not isinstance(raw, (list, tuple)):
        return None
    return str(getattr(kind, "value", kind)), [b for b in raw if isinstance(b, bytes)]


def call_details(logging_obj: Any) -> dict[str, Any] | None:
    """The logging object's view of the call (model, messages, litellm_params), where it has one."""
    details = getattr(logging_obj, "model_call_details", None)
    return details if isinstance(details, dict) else None


def tag_response(response: Any, key: str, value: Any) -> None:
    """Attach ``value`` to a response's hidden parameters (not sent to the client)."""
    response._hidden_params[key] = value


def refresh_custom_providers() -> None:
    """Make LiteLLM read ``litellm.custom_provider_map`` again after it changed."""
    from litellm.utils import custom_llm_setup

    custom_llm_setup()


def proxy_router() -> Any:
    """The running proxy's router (its ``model_list``, deployments and keys), or None outside a proxy."""
    server = sys.modules.get("litellm.proxy.proxy_server")
    return getattr(server, "llm_router", None) if server is not None else None


def _params(fn: Any) -> set[str]:
    return set(inspect.signature(fn).parameters)


def _accepts(fn: Any, names: set[str]) -> bool:
    """``fn`` takes these keyword arguments: by name, or through ``**kwargs`` (1.110 wraps Router.completion)."""
    params = inspect.signature(fn).parameters
    return names <= set(params) or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


@functools.cache
def problems() -> tuple[str, ...]:
    """What of the above the installed LiteLLM does not have as expected; empty when all is there (read once)."""
    found: list[str] = []

    def need(what: str, ok: Callable[[], bool]) -> None:
        try:
            if not ok():
                found.append(what)
        except Exception as e:
            found.append(f"{what} ({type(e).__name__}: {e})")

    def has_slot() -> bool:
        from litellm.proxy.common_request_processing import ProxyBaseLLMRequestProcessing as proc

        source = inspect.getsource(inspect.getmodule(proc))  # type: ignore[arg-type]
        return deferred_slot_fires() and DEFERRED_SLOT in source

    def dispatch_ok() -> bool:
        from litellm.litellm_core_utils.litellm_logging import Logging

        return {"result", "cache_hit", "start_time", "end_time", "prefer_async_handlers"} <= _params(
            Logging.dispatch_success_handlers
        )

    def passthrough_ok() -> bool:
        from litellm.proxy.pass_through_endpoints.streaming_handler import PassThroughStreamingHandler as h

        return {"raw_bytes", "endpoint_type"} <= _params(h.route_streaming_logging_to_handler)

    def details_ok() -> bool:
        from litellm.litellm_core_utils.litellm_logging import Logging

        return "model_call_details" in inspect.getsource(Logging.__init__)

    def hidden_ok() -> bool:
        from litellm.types.utils import ModelResponse

        return isinstance(ModelResponse()._hidden_params, dict)

    def providers_ok() -> bool:
        import litellm
        from litellm.utils import custom_llm_setup

        return isinstance(litellm.custom_provider_map, list) and callable(custom_llm_setup)

    def router_ok() -> bool:
        import litellm.proxy.proxy_server as server
        from litellm.router import Router

        return hasattr(server, "llm_router") and _accepts(Router.completion, {"model", "messages"})

    need("the proxy's deferred stream-completion slot (ProxyLogging.fire_deferred_stream_logging)", has_slot)
    need(
        "Logging.dispatch_success_handlers(result, cache_hit, start_time, end_time, prefer_async_handlers)", dispatch_ok
    )
    need("PassThroughStreamingHandler.route_streaming_logging_to_handler(raw_bytes, endpoint_type)", passthrough_ok)
    need("Logging.model_call_details", details_ok)
    need("ModelResponse._hidden_params", hidden_ok)
    need("litellm.custom_provider_map and litellm.utils.custom_llm_setup", providers_ok)
    need("the proxy's router (litellm.proxy.proxy_server.llm_router, Router.completion)", router_ok)
    return tuple(found)
