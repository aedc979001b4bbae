"""``POST /v1/chat/completions`` and ``GET /v1/models`` on the sidecar (``metaclaw-plugin serve``; listed in
``metaclaw_plugin.sidecar.app``'s route table): the served policy for any OpenAI-API host (OpenClaw's ``openai-completions`` provider, LangChain's ChatOpenAI, the openai SDK).

- JSON, or server-sent events with ``stream: true`` (``stream_options.include_usage`` adds a usage chunk).
- ``tools`` are rendered by the model's chat template; ``<tool_call>`` blocks in its text come back as
  ``tool_calls`` (finish reason ``tool_calls``). ``logprobs: true`` returns the sampled tokens' logprobs.
- Sampling: ``temperature``, ``top_p`` (nucleus), ``seed``, ``max_tokens``/``max_completion_tokens``;
  ``n`` must be 1. Other OpenAI fields are accepted and have no effect.
- **Whose weights** (``training.scope: tenant``): the request's tenant, from the ``X-Metaclaw-Tenant`` header, else
  the body's ``metadata.tenant`` (as LiteLLM SDK calls name theirs), else the default tenant; it is answered with
  that tenant's own weights, or the base model while it has none. Under ``scope: global`` every request gets the
  same weights.
- ``model`` must be ``metaclaw/<serving.name>`` (or ``<serving.name>``). The answer names the weights that
  produced it in ``metaclaw.weights``/``metaclaw.step`` and the ``X-Metaclaw-Weights`` header.
- The route sits behind the sidecar's bearer token like every other. Sampling runs on the policy's worker
  threads; the event loop only parses and writes.

The policy loads from ``training.base_model`` at start-up in ``rl``/``auto`` modes, and on the first request in
``skills_only`` (which waits for that one load). With ``serving.vllm_url`` set, a watcher also publishes each
step's LoRA weights to that vLLM server.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ..config import Settings
from ..serving import PolicyUnavailable, from_settings, unavailable_reason
from ..serving.policy import Generation, PolicyInputError, ServedPolicy
from ..serving.vllm import VllmPublisher
from ..serving.watch import WeightsWatcher
from ..types import DEFAULT_TENANT
from .http import Api, api_of

log = logging.getLogger("metaclaw_plugin.serving")

READY_TIMEOUT = 600.0


class ChatCompletionBody(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: str = Field(min_length=1, max_length=256)
    messages: list[dict[str, Any]] = Field(min_length=1, max_length=100_000)
    tools: list[dict[str, Any]] | None = Field(None, max_length=1000)
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    temperature: float = Field(1.0, ge=0.0, le=2.0)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    seed: int | None = None
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    n: int = Field(1, ge=1, le=1, description="one answer per request")
    logprobs: bool = False
    metadata: dict[str, Any] | None = None

    @field_validator("messages")
    @classmethod
    def _roles(cls, v: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for i, m in enumerate(v):
            if not isinstance(m.get("role"), str):
                raise ValueError(f"message {i} has no role")
        return v

    @field_validator("temperature", mode="before")
    @classmethod
    def _temp(cls, v: Any) -> Any:
        return 1.0 if v is None else v

    @field_validator("top_p", mode="before")
    @classmethod
    def _top_p(cls, v: Any) -> Any:
        return 1.0 if v is None else v


TENANT_HEADER = "X-Metaclaw-Tenant"


def tenant_of(request: Request, body: ChatCompletionBody) -> str:
    """The request's tenant: the header, else ``metadata.tenant``, else the default tenant (whole, stripped)."""
    for value in (request.headers.get(TENANT_HEADER), (body.metadata or {}).get("tenant")):
        if isinstance(value, str) and value.strip():
            return value.strip()
    return DEFAULT_TENANT


class PolicyHost:
    """The sidecar's policy: built from the settings on first use, or at start-up in ``rl``/``auto``."""

    def __init__(self, settings: Settings, policy: ServedPolicy | None = None) -> None:
        self.settings = settings
        self._policy = policy
        self._error: str | None = None
        self._vllm: WeightsWatcher | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        s = self.settings
        if s.mode in ("rl", "auto") and self._policy is None and unavailable_reason(s) is None:
            self.get()
        if s.serving.vllm_url:
            from ..store import open_database

            pub = VllmPublisher(s.serving.vllm_url, lora_name=s.serving.name, api_key=s.serving.vllm_api_key)
            self._vllm = WeightsWatcher(  # the home's database: where the trainer stores the latest weights
                open_database(s), [pub.publish], interval=s.serving.poll_interval, name="vllm"
            )
            self._vllm.start()

    def stop(self) -> None:
        if self._vllm is not None:
            self._vllm.stop()
        if self._policy is not None:
            self._policy.close()

    def get(self) -> ServedPolicy:
        with self._lock:  # two first requests build one policy
            if self._policy is None:
                self._policy = from_settings(self.settings)
        self._policy.start()
        return self._policy

    def name(self) -> str:
        if self._policy is not None:
            return self._policy.name
        return self.settings.serving.name

    def status(self) -> dict[str, Any]:
        st: dict[str, Any] = {"model": f"metaclaw/{self.name()}"}
        if self._policy is not None:
            st.update(self._policy.status())
        else:
            st["ready"] = False
            st["reason"] = unavailable_reason(self.settings) or "loads on first request"
        return st


def _err(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _completion(g: Generation, rid: str, created: int, logprobs: bool) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "message": g.message(), "finish_reason": g.finish_reason}
    choice["logprobs"] = {"content": _logprob_items(g)} if logprobs else None
    return {
        "id": rid,
        "object": "chat.completion",
        "created": created,
        "model": g.model,
        "choices": [choice],
        "usage": g.usage(),
        "metaclaw": {"weights": g.weights, "step": g.step},
    }


def _logprob_items(g: Generation) -> list[dict[str, Any]]:
    return [{"token_id": t, "logprob": lp, "top_logprobs": []} for t, lp in zip(g.response_ids, g.logprobs)]


def _sse(obj: Any) -> bytes:
    return b"data: " + json.dumps(obj, ensure_ascii=False).encode() + b"\n\n"


async def _events(
    policy: ServedPolicy, body: ChatCompletionBody, items: AsyncGenerator[Any, None], first: Any, rid: str, created: int
) -> AsyncIterator[bytes]:
    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        return _sse(
            {
                "id": rid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": policy.model_name,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
                **extra,
            }
        )

    async def all_items() -> AsyncIterator[Any]:
        yield first
        async for x in items:
            yield x

    yield chunk({"role": "assistant", "content": ""})
    try:
        async for item in all_items():
            if isinstance(item, str):
                yield chunk({"content": item})
                continue
            for i, c in enumerate(item.tool_calls):
                yield chunk({"tool_calls": [{"index": i, **c}]})
            yield chunk({}, item.finish_reason, metaclaw={"weights": item.weights, "step": item.step})
            if (body.stream_options or {}).get("include_usage"):
                yield _sse(
                    {
                        "id": rid,
                        "object": "chat.completion.chunk",
                        "created": created,
                        "model": policy.model_name,
                        "choices": [],
                        "usage": item.usage(),
                    }
                )
    except Exception as e:  # the status line is sent: report in the stream
        log.exception("streaming an answer of %s failed", policy.model_name)
        yield _sse({"error": f"internal error: {type(e).__name__}: {e}"})
    finally:
        await items.aclose()  # a client that went away cancels the sampling
    yield b"data: [DONE]\n\n"


def host_of(request: Request) -> PolicyHost:
    """The app's :class:`PolicyHost`, kept in its state beside the plugin (``app.state.policy``)."""
    host: PolicyHost = request.app.state.policy
    return host


async def chat_completions(request: Request) -> Response:
    body: ChatCompletionBody = await api_of(request).parse(request, ChatCompletionBody)
    host = host_of(request)
    name = host.name()
    if body.model not in (f"metaclaw/{name}", name):
        return _err(404, f"no model {body.model!r}: this server serves metaclaw/{name}")
    try:
        policy = host.get()
        await asyncio.to_thread(policy.wait_ready, READY_TIMEOUT)
    except PolicyUnavailable as e:
        return _err(503, str(e))
    except Exception as e:
        return _err(503, f"the served policy did not load: {type(e).__name__}: {e}")
    kw: dict[str, Any] = {
        "max_tokens": body.max_completion_tokens or body.max_tokens,
        "temperature": body.temperature,
        "top_p": body.top_p,
        "seed": body.seed,
        "tenant": tenant_of(request, body),
    }
    rid = "chatcmpl-" + secrets.token_hex(12)
    created = int(time.time())
    if body.stream:
        items = policy.astream(body.messages, body.tools, **kw)
        try:
            first = await anext(items)  # bad input is a plain HTTP error, before any event is sent
        except PolicyInputError as e:
            return _err(400, str(e))
        return StreamingResponse(
            _events(policy, body, items, first, rid, created),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    try:
        g = await policy.agenerate(body.messages, body.tools, **kw)
    except PolicyInputError as e:
        return _err(400, str(e))
    return JSONResponse(_completion(g, rid, created, body.logprobs), headers={"X-Metaclaw-Weights": g.weights})


async def models(request: Request) -> Response:
    st = host_of(request).status()
    return JSONResponse(
        {"object": "list", "data": [{"id": st["model"], "object": "model", "created": 0, "owned_by": "metaclaw"}]}
    )


def routes(api: Api) -> list[Route]:
    """The routes, through the sidecar's :class:`~metaclaw_plugin.sidecar.http.Api` (body reading and errors,
    counters) like every other; the handlers read the :class:`PolicyHost` and the Api from the app's state."""
    wrap = api.endpoint
    return [
        Route("/v1/chat/completions", wrap(chat_completions), methods=["POST"]),
        Route("/v1/models", wrap(models), methods=["GET"]),
    ]
