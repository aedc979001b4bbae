"""The host's own model for the plugin's calls (``learning.model: host``), and telling those calls apart.

In a proxy the plugin calls the proxy's router: the ``model_list`` name of the first request it sees (or
``learning.host_model``), with the proxy's deployments and keys. An SDK caller's model is the model of its own
first request, called with that request's ``api_base`` and key. Either way the call carries the plugin's tag in its
metadata (so the host's spend logs show it as the plugin's) and runs inside the core's plugin-call mark; the
callback's hooks pass such calls through, unrecorded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from metaclaw_plugin import MetaClawPlugin
from metaclaw_plugin.integration import PLUGIN_CALL_TAG, HostModel, HostReply, content_text, in_plugin_call

from . import _internals as internals

MARK = "metaclaw_internal"


def metadata(purpose: str) -> dict[str, Any]:
    """What the plugin's own calls carry: its tag (spend logs), the mark the hooks read, the part calling."""
    return {"tags": [PLUGIN_CALL_TAG], MARK: True, "purpose": purpose}


def is_plugin_call(kwargs: Any) -> bool:
    """One of the plugin's own calls: made inside the core's mark (this thread) or carrying it in its metadata."""
    if in_plugin_call():
        return True
    if not isinstance(kwargs, Mapping):
        return False
    lp = kwargs.get("litellm_params")
    for md in (kwargs.get("metadata"), lp.get("metadata") if isinstance(lp, Mapping) else None):
        if isinstance(md, Mapping) and md.get(MARK) is True:
            return True
    return False


def reply_of(resp: Any) -> HostReply:
    """Text and token counts of a chat completion (LiteLLM's ModelResponse)."""
    choice = resp.choices[0]
    content = choice.message.content
    text = content_text(content) if isinstance(content, list) else str(content or "")
    usage = getattr(resp, "usage", None)
    return HostReply(
        text,
        int(getattr(usage, "prompt_tokens", 0) or 0),
        int(getattr(usage, "completion_tokens", 0) or 0),
    )


def _model(name: str, via: str, complete: Any, local: bool = False, **endpoint: Any) -> HostModel:
    """A host model whose calls are ``complete(model=name, ...)`` with the plugin's metadata (tag and mark)."""

    def call(messages: Sequence[dict[str, Any]], temperature: float, max_tokens: int, purpose: str) -> HostReply:
        resp = complete(
            model=name,
            messages=list(messages),
            temperature=temperature,
            max_tokens=max_tokens,
            metadata=metadata(purpose),
            **endpoint,
        )
        return reply_of(resp)

    return HostModel(name, via, call, local)


def router_model(router: Any, name: str) -> HostModel:
    """``name`` through the proxy's router (its deployments, keys and retries)."""
    return _model(name, "the LiteLLM proxy's router", router.completion)


def sdk_model(name: str, api_base: str | None, api_key: str | None) -> HostModel:
    """``name`` through the LiteLLM SDK, with the endpoint and key of the caller's own request."""
    import litellm

    local = bool(api_base) and any(h in str(api_base) for h in ("://127.", "://localhost", "://[::1]"))
    return _model(
        name, "the LiteLLM SDK, as the host calls it", litellm.completion, local, api_base=api_base, api_key=api_key
    )


def offer_proxy(plugin: MetaClawPlugin, data: Mapping[str, Any]) -> None:
    """Offer the proxy's model: ``learning.host_model``, else the model this request names."""
    if not plugin.host_models.wanted() or plugin.settings.learning.model != "host":
        return
    router = internals.proxy_router()
    name = plugin.settings.learning.host_model or data.get("model")
    if router is not None and isinstance(name, str) and name:
        plugin.host_models.offer(router_model(router, name))


def offer_sdk(plugin: MetaClawPlugin, details: Mapping[str, Any]) -> None:
    """Offer an SDK caller's model: the model of this call, with its endpoint and key."""
    if not plugin.host_models.wanted() or plugin.settings.learning.model != "host":
        return
    lp = details.get("litellm_params")
    lp = lp if isinstance(lp, Mapping) else {}
    name = details.get("model")
    provider = lp.get("custom_llm_provider")
    if not isinstance(name, str) or not name or str(provider) == "metaclaw":
        return
    if isinstance(provider, str) and provider and not name.startswith(provider + "/"):
        name = f"{provider}/{name}"
    base = lp.get("api_base") or details.get("api_base")
    key = details.get("api_key") or lp.get("api_key")
    plugin.host_models.offer(
        sdk_model(name, base if isinstance(base, str) else None, key if isinstance(key, str) else None)
    )
