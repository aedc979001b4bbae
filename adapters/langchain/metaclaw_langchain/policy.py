"""``policy_chat_model``: the trainable policy as a LangChain chat model, for ``rl`` and ``auto`` modes.

The model runs in this process (``metaclaw_plugin.served_policy``: ``training.base_model`` plus the latest adapter
the trainer published, hot-swapped as new ones appear). Each answer samples from the current weights and records
its token ids and logprobs, so the turns that :class:`MetaClawMiddleware` captures become training samples with
valid importance ratios. It supports ``invoke``/``ainvoke``, streaming, and ``bind_tools`` (tool-trained models
write ``<tool_call>`` blocks, returned as ``tool_calls``); sampling runs on the policy's worker threads.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, convert_to_openai_messages
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field

import metaclaw_plugin
from metaclaw_plugin.integration import MetaClawPlugin


class PolicyNotAvailableError(RuntimeError):
    """No policy can be served with this config (the message says why: no ``training.base_model``, no torch)."""


def _metadata(g: Any) -> dict[str, Any]:
    return {
        "model_name": g.model,
        "finish_reason": g.finish_reason,
        "metaclaw_weights": g.weights,
        "metaclaw_step": g.step,
    }


def _usage(g: Any) -> dict[str, int]:
    u = g.usage()
    return {
        "input_tokens": u["prompt_tokens"],
        "output_tokens": u["completion_tokens"],
        "total_tokens": u["total_tokens"],
    }


def _tool_calls(g: Any) -> list[dict[str, Any]]:
    out = []
    for c in g.tool_calls:
        try:
            args = json.loads(c["function"]["arguments"] or "{}")
        except json.JSONDecodeError:
            args = {"__raw__": c["function"]["arguments"]}
        out.append({"name": c["function"]["name"], "args": args, "id": c["id"], "type": "tool_call"})
    return out


class PolicyChatModel(BaseChatModel):
    """A chat model answered by a served policy (``metaclaw/<name>``)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    policy: Any = Field(exclude=True)
    temperature: float = Field(1.0, ge=0.0)
    max_tokens: int | None = Field(None, ge=1)
    seed: int | None = None

    @property
    def _llm_type(self) -> str:
        return "metaclaw-policy"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model": self.policy.model_name, "temperature": self.temperature}

    def _args(self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]) -> tuple:
        if stop:
            raise ValueError("the served policy does not support stop sequences")
        kw = {
            "max_tokens": kwargs.get("max_tokens", self.max_tokens),
            "temperature": kwargs.get("temperature", self.temperature),
            "seed": kwargs.get("seed", self.seed),
        }
        return convert_to_openai_messages(messages), kwargs.get("tools"), kw

    def _result(self, g: Any) -> ChatResult:
        msg = AIMessage(
            content=g.content, tool_calls=_tool_calls(g), response_metadata=_metadata(g), usage_metadata=_usage(g)
        )
        return ChatResult(generations=[ChatGeneration(message=msg, generation_info={"finish_reason": g.finish_reason})])

    @staticmethod
    def _last_chunk(g: Any) -> ChatGenerationChunk:
        calls = [
            {"name": c["function"]["name"], "args": c["function"]["arguments"], "id": c["id"], "index": i}
            for i, c in enumerate(g.tool_calls)
        ]
        msg = AIMessageChunk(
            content="", tool_call_chunks=calls, response_metadata=_metadata(g), usage_metadata=_usage(g)
        )
        return ChatGenerationChunk(message=msg, generation_info={"finish_reason": g.finish_reason})

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        msgs, tools, kw = self._args(messages, stop, kwargs)
        return self._result(self.policy.generate(msgs, tools, **kw))

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        msgs, tools, kw = self._args(messages, stop, kwargs)
        return self._result(await self.policy.agenerate(msgs, tools, **kw))

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        msgs, tools, kw = self._args(messages, stop, kwargs)
        for item in self.policy.stream(msgs, tools, **kw):
            if isinstance(item, str):
                chunk = ChatGenerationChunk(message=AIMessageChunk(content=item))
                if run_manager:
                    run_manager.on_llm_new_token(item, chunk=chunk)
                yield chunk
            else:
                yield self._last_chunk(item)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        msgs, tools, kw = self._args(messages, stop, kwargs)
        async for item in self.policy.astream(msgs, tools, **kw):
            if isinstance(item, str):
                chunk = ChatGenerationChunk(message=AIMessageChunk(content=item))
                if run_manager:
                    await run_manager.on_llm_new_token(item, chunk=chunk)
                yield chunk
            else:
                yield self._last_chunk(item)

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any) -> Any:
        """Tools go to the model's chat template; ``tool_choice`` is not enforced (the model decides)."""
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)


def policy_chat_model(
    plugin: MetaClawPlugin | None = None, *, name: str | None = None, **kwargs: Any
) -> PolicyChatModel:
    """A LangChain chat model answered by the plugin-served policy ``metaclaw/<name>`` (rl/auto modes).

    ``plugin`` picks the config (default: the default config); ``name`` must be its ``serving.name`` when given.
    ``kwargs`` set ``temperature``, ``max_tokens`` and ``seed``. The model loads in the background; the first call
    waits for it. Raises :class:`PolicyNotAvailableError` when this config cannot serve a policy.
    """
    settings = plugin.settings if plugin is not None else None
    try:
        policy = metaclaw_plugin.served_policy(name, settings)
    except RuntimeError as e:
        raise PolicyNotAvailableError(f"metaclaw_langchain.policy_chat_model: {e}") from e
    return PolicyChatModel(policy=policy, **kwargs)
