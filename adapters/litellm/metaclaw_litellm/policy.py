"""``metaclaw/<name>``: the trainable policy as a LiteLLM custom provider, for ``rl`` and ``auto`` modes.

The policy runs in the LiteLLM process itself (``metaclaw_plugin.served_policy``: ``training.base_model``, the
latest LoRA weights the trainer published, hot-swapped as new ones appear). Every answer samples from the current
weights and records its token ids and logprobs for training. Completion, ``acompletion``, streaming (sync and
async) and tool calls (``<tool_call>`` blocks of tool-trained models) are supported; sampling runs on the
policy's worker threads, so the proxy's event loop never waits for it. Under ``training.scope: tenant`` a request is
answered with its tenant's own weights (the base model while it has none): the tenant the metaclaw callback derives
for it (a proxy request's key: team, else key; an SDK call's ``metadata.tenant``), so the callback must be
registered beside the provider, as below.

Proxy ``config.yaml``::

    model_list:
      - model_name: metaclaw/policy          # what clients ask for
        litellm_params:
          model: metaclaw/policy             # metaclaw/<serving.name>
    litellm_settings:
      custom_provider_map:
        - {provider: metaclaw, custom_handler: metaclaw_litellm.policy.handler}
      callbacks: ["metaclaw_litellm.callback"]   # skills in, turns captured (their rewards train the policy)

SDK::

    import litellm
    import metaclaw_litellm.policy
    metaclaw_litellm.policy.register()           # adds the provider to litellm.custom_provider_map
    litellm.completion(model="metaclaw/policy", messages=[...])
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import litellm
from litellm.llms.custom_llm import CustomLLM, CustomLLMError
from litellm.types.utils import GenericStreamingChunk, ModelResponse

import metaclaw_plugin

from . import _internals as internals
from .adapter import MetaClawCallback

PROVIDER = "metaclaw"
READY_TIMEOUT = 600.0


def _params(optional_params: dict[str, Any]) -> dict[str, Any]:
    temperature = optional_params.get("temperature")
    return {
        "max_tokens": optional_params.get("max_completion_tokens") or optional_params.get("max_tokens"),
        "temperature": 1.0 if temperature is None else float(temperature),
        "seed": optional_params.get("seed"),
    }


def _tenant(logging_obj: Any) -> str | None:
    """The request's tenant as the registered metaclaw callback derives it (a proxy request's key, an SDK call's
    ``metadata.tenant``): under ``training.scope: tenant`` its own weights answer. None (the default tenant's)
    where no metaclaw callback is registered."""
    for cb in litellm.callbacks:
        if isinstance(cb, MetaClawCallback):
            return cb.tenant_of(getattr(logging_obj, "litellm_call_id", None), internals.call_details(logging_obj))
    return None


def _chunk(text: str = "", **kw: Any) -> GenericStreamingChunk:
    c: GenericStreamingChunk = {"text": text, "is_finished": False, "finish_reason": "", "usage": None, "index": 0}
    c.update(kw)  # type: ignore[typeddict-item]
    return c


def _final_chunks(g: Any) -> Iterator[GenericStreamingChunk]:
    for i, call in enumerate(g.tool_calls):
        yield _chunk(tool_use={"id": call["id"], "type": "function", "function": call["function"], "index": i})
    yield _chunk(is_finished=True, finish_reason=g.finish_reason, usage=g.usage())


class MetaClawPolicyLLM(CustomLLM):
    """The handler behind ``metaclaw/<name>``. ``policy`` pins one served policy (tests, embedding); by default
    it is the process's, from the plugin's config."""

    def __init__(self, policy: Any = None) -> None:
        super().__init__()
        self._policy = policy

    def _policy_for(self, model: str) -> Any:
        name = model.split("/", 1)[1] if model.startswith(PROVIDER + "/") else model
        try:
            policy = self._policy if self._policy is not None else metaclaw_plugin.served_policy(name)
            if policy.name != name:
                raise RuntimeError(f"no policy metaclaw/{name} here: this handler serves {policy.model_name}")
            policy.wait_ready(READY_TIMEOUT)
        except Exception as e:
            raise CustomLLMError(status_code=503, message=f"metaclaw/{name} is not available: {e}") from e
        return policy

    @staticmethod
    def _response(g: Any) -> ModelResponse:
        r = ModelResponse(
            model=g.model,
            choices=[{"index": 0, "finish_reason": g.finish_reason, "message": g.message()}],
            usage=g.usage(),
        )
        internals.tag_response(r, "metaclaw", {"weights": g.weights, "step": g.step})
        return r

    def completion(self, model: str, messages: list, api_base: str, custom_prompt_dict: dict, model_response: ModelResponse, print_verbose: Any, encoding: Any, api_key: Any, logging_obj: Any, optional_params: dict, *args: Any, **kwargs: Any) -> Any:  # fmt: skip
        policy = self._policy_for(model)
        try:
            g = policy.generate(
                messages, optional_params.get("tools"), tenant=_tenant(logging_obj), **_params(optional_params)
            )
        except ValueError as e:
            raise CustomLLMError(status_code=400, message=str(e)) from e
        return self._response(g)

    async def acompletion(self, model: str, messages: list, api_base: str, custom_prompt_dict: dict, model_response: ModelResponse, print_verbose: Any, encoding: Any, api_key: Any, logging_obj: Any, optional_params: dict, *args: Any, **kwargs: Any) -> Any:  # fmt: skip
        policy = await asyncio.to_thread(self._policy_for, model)  # the first call may wait for the load
        try:
            g = await policy.agenerate(
                messages, optional_params.get("tools"), tenant=_tenant(logging_obj), **_params(optional_params)
            )
        except ValueError as e:
            raise CustomLLMError(status_code=400, message=str(e)) from e
        return self._response(g)

    def streaming(self, model: str, messages: list, api_base: str, custom_prompt_dict: dict, model_response: ModelResponse, print_verbose: Any, encoding: Any, api_key: Any, logging_obj: Any, optional_params: dict, *args: Any, **kwargs: Any) -> Iterator[GenericStreamingChunk]:  # fmt: skip
        policy = self._policy_for(model)
        try:
            tenant = _tenant(logging_obj)
            for item in policy.stream(
                messages, optional_params.get("tools"), tenant=tenant, **_params(optional_params)
            ):
                if isinstance(item, str):
                    yield _chunk(item)
                else:
                    yield from _final_chunks(item)
        except ValueError as e:
            raise CustomLLMError(status_code=400, message=str(e)) from e

    async def astreaming(self, model: str, messages: list, api_base: str, custom_prompt_dict: dict, model_response: ModelResponse, print_verbose: Any, encoding: Any, api_key: Any, logging_obj: Any, optional_params: dict, *args: Any, **kwargs: Any) -> AsyncIterator[GenericStreamingChunk]:  # type: ignore[override]  # fmt: skip
        policy = await asyncio.to_thread(self._policy_for, model)
        try:
            tenant = _tenant(logging_obj)
            async for item in policy.astream(
                messages, optional_params.get("tools"), tenant=tenant, **_params(optional_params)
            ):
                if isinstance(item, str):
                    yield _chunk(item)
                else:
                    for c in _final_chunks(item):
                        yield c
        except ValueError as e:
            raise CustomLLMError(status_code=400, message=str(e)) from e


handler = MetaClawPolicyLLM()


def register(custom_handler: MetaClawPolicyLLM | None = None) -> MetaClawPolicyLLM:
    """Add ``metaclaw/...`` to the LiteLLM SDK's providers (idempotent); returns the handler in use."""
    h = custom_handler or handler
    litellm.custom_provider_map = [p for p in litellm.custom_provider_map if p.get("provider") != PROVIDER]
    litellm.custom_provider_map.append({"provider": PROVIDER, "custom_handler": h})
    internals.refresh_custom_providers()
    return h
