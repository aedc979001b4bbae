"""An OpenClaw gateway's own provider as the host's model (``learning.model: host``, issue 47).

The OpenClaw plugin sends the provider of a turn's model (its ``baseUrl``, ``api`` and key, as the gateway's config
and auth resolve them) to ``POST /v1/openclaw/host_model`` when the sidecar asks for it: the ``turns/input`` answer
says ``host_model.wanted`` only while ``learning.model`` is ``host`` and no model is kept or refused, so the key
leaves the gateway only when it will be used. The plugin's calls then go to the provider directly (not through the
gateway, so they are never OpenClaw turns), non-streaming, with the standard library's HTTP client: no extra is
needed.

Supported provider APIs: ``openai-completions`` (OpenAI-compatible ``POST {baseUrl}/chat/completions``) and
``anthropic-messages`` (``POST {baseUrl}/v1/messages``). Any other (``openai-responses``, ``google-generative-ai``,
``bedrock-converse-stream``, ...) is refused
with the reason, which ``GET /v1/openclaw/host_model`` shows. The key lives in this process's memory only: it is
never logged, stored or shown, and an error text of the provider is cut short with the key masked.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from ..hostmodel import TAG, HostModel, HostModels, HostReply
from ..learning.llm import is_local_endpoint
from ..protocols import PluginLike
from ..text import content_text

SUPPORTED_APIS = ("openai-completions", "anthropic-messages")
ANTHROPIC_VERSION = "2023-06-01"
CALL_TIMEOUT_S = 180.0
ERROR_TEXT_MAX = 300


class ProviderError(RuntimeError):
    """The provider answered with an error or something that is not a chat completion."""


def _masked(text: str, secret: str | None) -> str:
    text = text[:ERROR_TEXT_MAX]
    return text.replace(secret, "***") if secret else text


def provider_model(
    provider: str,
    model: str,
    base_url: str,
    api_key: str | None,
    headers: dict[str, str] | None = None,
    api: str = "openai-completions",
) -> HostModel:
    """``provider/model`` called directly with its key, in its API's wire format: ``openai-completions``
    (``POST {base_url}/chat/completions``) or ``anthropic-messages`` (``POST {base_url}/v1/messages``)."""
    anthropic = api == "anthropic-messages"
    base = base_url.rstrip("/")
    url = (base if base.endswith("/v1") else base + "/v1") + "/messages" if anthropic else base + "/chat/completions"
    sent = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": TAG}
    if anthropic:
        sent["anthropic-version"] = ANTHROPIC_VERSION
    sent.update(headers or {})
    if api_key:
        sent.update({"x-api-key": api_key} if anthropic else {"Authorization": f"Bearer {api_key}"})

    def post(body: dict[str, Any], purpose: str) -> dict[str, Any]:
        req = urllib.request.Request(url, data=json.dumps(body).encode(), headers=sent, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=CALL_TIMEOUT_S) as r:
                data = json.loads(r.read())
        except urllib.error.HTTPError as e:
            detail = _masked(e.read().decode("utf-8", "replace"), api_key)
            raise ProviderError(f"{provider} answered {e.code} ({purpose}): {detail}") from None
        except urllib.error.URLError as e:
            raise ProviderError(f"{provider} at {base_url} is unreachable ({purpose}): {e.reason}") from None
        except ValueError as e:
            raise ProviderError(f"{provider} answered something that is not JSON ({purpose}): {e}") from None
        if not isinstance(data, dict):
            raise ProviderError(f"{provider} answered no {api} reply ({purpose})")
        return data

    def call(messages: Sequence[dict[str, Any]], temperature: float, max_tokens: int, purpose: str) -> HostReply:
        common = {"model": model, "temperature": temperature, "max_tokens": max_tokens, "stream": False}
        if anthropic:  # the system prompt is its own field; turns alternate user / assistant
            system = "\n\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
            turns = [dict(m) for m in messages if m.get("role") != "system"]
            data = post({**common, **({"system": system} if system else {}), "messages": turns}, purpose)
            blocks = data.get("content")
            if not isinstance(blocks, list):
                raise ProviderError(f"{provider} answered no message ({purpose})")
            text = "".join(str(b.get("text") or "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")
            usage = _usage(data)
            return HostReply(text, int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0))
        data = post({**common, "messages": list(messages)}, purpose)
        try:
            message = data["choices"][0]["message"]
        except (KeyError, IndexError, TypeError):
            raise ProviderError(f"{provider} answered no chat completion ({purpose})") from None
        content = message.get("content") if isinstance(message, dict) else None
        text = content_text(content) if isinstance(content, list) else str(content or "")
        usage = _usage(data)
        return HostReply(text, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))

    via = f"the OpenClaw gateway's provider {provider!r} ({base_url}, {api}), called directly"
    return HostModel(f"{provider}/{model}", via, call, local=is_local_endpoint(None, base_url))


def _usage(data: dict[str, Any]) -> dict[str, Any]:
    usage = data.get("usage")
    return usage if isinstance(usage, dict) else {}


class OpenClawHostModel:
    """The sidecar's side of the offer: whether it wants one, the offer itself, and what became of it."""

    def __init__(self, plugin: PluginLike) -> None:
        self.plugin = plugin
        self.on = plugin.settings.learning.model == "host"
        self.name = plugin.settings.learning.host_model  # "provider/model" to offer instead of the turn's model
        self.refused: str | None = None  # why the last offer was refused (then nothing is asked for again)
        self._lock = threading.Lock()

    @property
    def host_models(self) -> HostModels:
        return self.plugin.host_models

    def wanted(self) -> bool:
        return self.on and self.refused is None and self.host_models.wanted()

    def ask(self) -> dict[str, Any] | None:
        """What the ``turns/input`` answer carries: the request for an offer, while one is wanted."""
        return {"wanted": True, "name": self.name} if self.wanted() else None

    def offer(
        self,
        provider: str,
        model: str,
        api: str | None,
        base_url: str | None,
        api_key: str | None,
        headers: dict[str, str] | None,
    ) -> dict[str, Any]:
        with self._lock:
            if not self.on:
                return {"kept": False, "reason": "learning.model is not host: the plugin does not use the host's model"}
            kept = self.host_models.get()
            if kept is not None:
                return {"kept": False, "reason": f"a model is kept already: {kept.describe()}"}
            why = self._problem(provider, api, base_url)
            if why is not None:
                self.refused = why
                return {"kept": False, "reason": why}
            assert base_url is not None
            assert api is not None
            hm = provider_model(provider, model, base_url, api_key, headers, api)
            self.host_models.offer(hm)
            return {"kept": True, "name": hm.name, "local": hm.local}

    @staticmethod
    def _problem(provider: str, api: str | None, base_url: str | None) -> str | None:
        if api not in SUPPORTED_APIS:
            return (
                f"the provider {provider!r} speaks {api or 'an unnamed API'!r}; the plugin calls only "
                f"{', '.join(SUPPORTED_APIS)} providers (set learning.model to a LiteLLM model string instead)"
            )
        if not base_url or not base_url.startswith(("http://", "https://")):
            return f"the provider {provider!r} has no http(s) baseUrl"
        return None

    def status(self) -> dict[str, Any]:
        kept = self.host_models.get()
        return {
            "on": self.on,
            "wanted": self.wanted(),
            "kept": {"name": kept.name, "via": kept.via, "local": kept.local} if kept is not None else None,
            "refused": self.refused,
            "supported_apis": list(SUPPORTED_APIS),
        }
