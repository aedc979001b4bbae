"""The OpenClaw plugin's API on the sidecar (listed in ``metaclaw_plugin.sidecar.app``'s route table)::

    POST /v1/skills                      {session_id, tenant?, kind?, prompt?, messages?} -> {block, skills, generation}
    POST /v1/turns/input                 {session_id, run_id, messages, model?, tenant?, kind?, injected_skills?, tools?}
    POST /v1/turns/output                {session_id, run_id, response, usage?, error?}
    POST /v1/sessions/{session_id}/end   {outcome?: {success?, feedback?}, reason?}
    POST /v1/feedback                    {session_id, score: 1|-1|0, text?}
    POST /v1/openclaw/host_model         {provider, model, api?, base_url?, api_key?, headers?} -> {kept, name?, reason?}
    GET  /v1/openclaw/host_model         whether the host's model is wanted, kept or refused (and why)
    GET  /v1/sessions                    recent sessions (for tests and the dashboard)
    GET  /v1/sessions/{session_id}       one session with its turns

The bounds are those of the Python hooks (``metaclaw_plugin.requestpath.bounds``), so nothing the sidecar accepts is later
refused by the core. A session id may hold any text but control characters; one with ``/`` (or ``?``, ``#``,
``%``) is sent in the path percent-encoded (``/v1/sessions/a%2Fb``; ``/v1/sessions/a/b`` reads the same). Ending
an unknown session answers 404 and stores nothing.

The hooks are synchronous and cheap (in-memory retrieval, one journal append), so the handlers call them inline on
the event loop: a thread hop would cost more than the hook. A body over ``INLINE_BYTES`` is parsed and recorded in
the threadpool instead: its redaction can take seconds, and ``/health`` (which the OpenClaw plugin polls before
every skill lookup) must not wait for it. In-flight turns wait between ``turns/input`` and ``turns/output`` in the
plugin's shared ``inflight`` table (HTTP has no per-call object).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass, is_dataclass
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..protocols import PluginLike, plugin_of
from ..requestpath.bounds import (
    GENERATION_MAX,
    ID_SENT_MAX,
    LABEL_MAX,
    LATENCY_MAX_MS,
    REASON_MAX,
    TEXT_MAX,
    finite_json,
    text_problem,
)
from ..requestpath.turns import FailOpen
from ..types import DEFAULT_TENANT, TurnContext
from .hostmodel import OpenClawHostModel
from .http import Api, ApiError, api_of, decode, path_id

log = logging.getLogger("metaclaw_plugin.sidecar")
_fail = FailOpen(log, "metaclaw sidecar", what="the request")

HOST_NAME = "openclaw"
INLINE_BYTES = 64 * 1024  # larger bodies are parsed and recorded in the threadpool


# Request bodies ---------------------------------------------------------------------------------
class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ChatMessage(BaseModel):
    """An OpenAI chat-format message. Extra keys (tool_calls, tool_call_id, name, ...) are kept."""

    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[dict[str, Any]] | None = None


class AssistantMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["assistant"] = "assistant"
    content: str | list[dict[str, Any]] | None = None
    tool_calls: list[dict[str, Any]] | None = None


def _id_text(value: str) -> str:
    """An id or label holds text: not blank, no NUL, no control character, no lone surrogate (answered with 400)."""
    problem = "must not be blank" if not value.strip() else text_problem(value)
    if problem:
        raise PydanticCustomError("bad_text", problem)
    return value


Id = Annotated[str, Field(min_length=1, max_length=ID_SENT_MAX), AfterValidator(_id_text)]
Label = Annotated[str, Field(min_length=1, max_length=LABEL_MAX), AfterValidator(_id_text)]


class SkillsBody(_Body):
    session_id: Id
    tenant: Id = DEFAULT_TENANT
    kind: Literal["main", "side"] = "main"
    prompt: str | None = None
    messages: list[ChatMessage] = Field(default_factory=list, max_length=10_000)
    user: Id | None = None


class TurnInputBody(_Body):
    session_id: Id
    run_id: Id
    messages: list[ChatMessage] = Field(max_length=100_000)
    model: Label | None = None
    tenant: Id = DEFAULT_TENANT
    kind: Literal["main", "side"] = "main"
    user: Id | None = None
    injected_skills: list[Annotated[str, Field(max_length=LABEL_MAX)]] | None = Field(None, max_length=1000)
    skill_generation: int | None = Field(None, ge=0, le=GENERATION_MAX)
    tools: list[dict[str, Any]] | None = Field(None, max_length=1000, description="OpenAI-format tool definitions")


class TurnOutputBody(_Body):
    session_id: Id
    run_id: Id
    response: AssistantMessage | None = None
    usage: dict[str, Any] | None = None
    error: str | None = Field(None, max_length=TEXT_MAX)
    tenant: Id = DEFAULT_TENANT
    kind: Literal["main", "side"] = "main"
    model: Label | None = None
    user: Id | None = None
    latency_ms: float | None = Field(None, ge=0, le=LATENCY_MAX_MS, allow_inf_nan=False)


class Outcome(BaseModel):
    model_config = ConfigDict(extra="allow")
    success: bool | None = None
    feedback: str | None = Field(None, max_length=100_000)


class HostModelBody(_Body):
    """The provider of a turn's model as the gateway's config and auth resolve it (``learning.model: host``)."""

    provider: Label
    model: Label
    api: Label | None = None
    base_url: Annotated[str, Field(max_length=2048)] | None = None
    api_key: Annotated[str, Field(max_length=16_384)] | None = Field(None, repr=False)
    headers: dict[str, Annotated[str, Field(max_length=16_384)]] | None = Field(None, max_length=64, repr=False)


class SessionEndBody(_Body):
    outcome: Outcome | None = None
    reason: Annotated[str, Field(max_length=REASON_MAX), AfterValidator(_id_text)] | None = None
    tenant: Id = DEFAULT_TENANT


class FeedbackBody(_Body):
    session_id: Id
    score: Literal[1, -1, 0]
    text: str | None = Field(None, max_length=TEXT_MAX)
    tenant: Id = DEFAULT_TENANT
    run_id: Id | None = None


def _dump_messages(msgs: list[ChatMessage]) -> list[dict[str, Any]]:
    return [m.model_dump(exclude_none=True) for m in msgs]


def _jsonable(obj: Any) -> Any:
    if is_dataclass(obj) and not isinstance(obj, type):
        return asdict(obj)
    return obj


# Routes -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Gateway:
    """The OpenClaw side of the sidecar, kept in the app's state beside the plugin: the host name its turns are
    recorded under, and its offer of the host's model (a refusal is remembered across requests)."""

    host_name: str
    host_model: OpenClawHostModel

    def context(
        self,
        session_id: str,
        tenant: str,
        kind: str,
        run_id: str | None = None,
        model: str | None = None,
        user: str | None = None,
    ) -> TurnContext:
        kw: dict[str, Any] = {
            "session_id": session_id,
            "tenant": tenant,
            "kind": kind,
            "host": self.host_name,
            "model": model,
            "user": user,
        }
        if run_id:
            kw["request_id"] = run_id
        return TurnContext(**kw)


def _gateway(request: Request) -> Gateway:
    gateway: Gateway = request.app.state.openclaw
    return gateway


Work = Callable[[PluginLike, Gateway, Any], Response]


async def _handle(request: Request, model: type[BaseModel], work: Work) -> Response:
    """Decode the body as ``model`` and run ``work`` on it: inline, or in the threadpool for a large body."""
    plugin, gateway = plugin_of(request), _gateway(request)
    raw = await api_of(request).body(request)

    def run() -> Response:
        return work(plugin, gateway, decode(raw, model))

    return await run_in_threadpool(run) if len(raw) > INLINE_BYTES else run()


def _skills(plugin: PluginLike, gateway: Gateway, body: SkillsBody) -> Response:
    msgs = _dump_messages(body.messages)
    if body.prompt:
        msgs.append({"role": "user", "content": body.prompt})
    ctx = gateway.context(body.session_id, body.tenant, body.kind, user=body.user)
    inj = plugin.prepare_turn(ctx, msgs, record=False).block  # OpenClaw injects it; turns/input records
    return JSONResponse(
        {"block": inj.text or "", "skills": list(inj.names or []), "generation": int(inj.generation or 0)}
    )


def _turn_input(plugin: PluginLike, gateway: Gateway, body: TurnInputBody) -> Response:
    ctx = gateway.context(body.session_id, body.tenant, body.kind, body.run_id, body.model, body.user)
    if body.skill_generation is not None:
        ctx.skill_generation = body.skill_generation
    ok = False
    with _fail.guard("turns.input", plugin):  # kept until turns/output: HTTP has no per-call object
        prepared = plugin.prepare_turn(
            ctx,
            _dump_messages(body.messages),
            tools=body.tools,
            inject=False,
            injected_skills=body.injected_skills or [],
        )
        plugin.inflight.put(ctx.request_id, prepared)
        ok = True
    out: dict[str, Any] = {"ok": ok}
    ask = gateway.host_model.ask()  # the plugin sends its provider only when asked (the key leaves the gateway then)
    if ask is not None:
        out["host_model"] = ask
    return JSONResponse(out)


def _turn_output(plugin: PluginLike, gateway: Gateway, body: TurnOutputBody) -> Response:
    ctx = gateway.context(body.session_id, body.tenant, body.kind, body.run_id, body.model, body.user)
    response = body.response.model_dump(exclude_none=True) if body.response is not None else None
    kw: dict[str, Any] = {"usage": body.usage, "error": body.error}
    if body.latency_ms is not None:
        kw["latency_ms"] = body.latency_ms
    turn = None
    with _fail.guard("turns.output", plugin):
        prepared = plugin.inflight.pop(ctx.request_id) or plugin.prepare_turn(ctx, [], inject=False, record=False)
        turn = plugin.complete_turn(prepared, response, ctx=ctx, **kw)
    return JSONResponse({"ok": turn is not None, "turn_id": body.run_id})


def _feedback(plugin: PluginLike, gateway: Gateway, body: FeedbackBody) -> Response:
    plugin.on_feedback(gateway.context(body.session_id, body.tenant, "main", body.run_id), body.score, body.text)
    return JSONResponse({"ok": True})


def _host_model_offer(plugin: PluginLike, gateway: Gateway, body: HostModelBody) -> Response:
    return JSONResponse(
        gateway.host_model.offer(body.provider, body.model, body.api, body.base_url, body.api_key, body.headers)
    )


async def host_model_offer(request: Request) -> Response:
    return await _handle(request, HostModelBody, _host_model_offer)


async def host_model_status(request: Request) -> Response:
    return JSONResponse(_gateway(request).host_model.status())


async def skills(request: Request) -> Response:
    return await _handle(request, SkillsBody, _skills)


async def turn_input(request: Request) -> Response:
    return await _handle(request, TurnInputBody, _turn_input)


async def turn_output(request: Request) -> Response:
    return await _handle(request, TurnOutputBody, _turn_output)


async def feedback(request: Request) -> Response:
    return await _handle(request, FeedbackBody, _feedback)


async def session_end(request: Request) -> Response:
    sid = path_id(request)
    plugin = plugin_of(request)
    body: SessionEndBody = await api_of(request).parse(request, SessionEndBody)
    if not await run_in_threadpool(plugin.knows_session, sid, body.tenant):
        raise ApiError(404, f"no session {sid!r} in tenant {body.tenant!r}; nothing was ended")
    outcome = body.outcome.model_dump(exclude_none=True) if body.outcome is not None else None
    # the session as the host knows it: every user's part of it (no user named)
    await run_in_threadpool(plugin.end_named_session, sid, body.tenant, outcome or None, body.reason or "host")
    return JSONResponse({"ok": True, "session_id": sid})


async def sessions_list(request: Request) -> Response:
    try:
        n = int(request.query_params.get("limit", "50"))
    except ValueError:
        raise ApiError(400, "limit must be an integer") from None
    plugin = plugin_of(request)
    tenant = request.query_params.get("tenant") or None
    if tenant:
        tenant = plugin.ids.joinable(tenant)  # as the hooks stored it

    def read() -> list[dict[str, Any]]:
        plugin.store.flush(2.0)  # reads are for people and tests: show what was just captured
        return finite_json(plugin.store.list_sessions(limit=max(1, min(n, 1000)), tenant=tenant))

    return JSONResponse({"sessions": await run_in_threadpool(read)})


async def session_show(request: Request) -> Response:
    sid = path_id(request)
    tenant = request.query_params.get("tenant") or None
    user = request.query_params.get("user") or None  # that user's session of the id (else the latest one's)

    s = await run_in_threadpool(plugin_of(request).read_session, sid, tenant, user)
    if s is None:
        raise ApiError(404, f"no session {sid!r}")
    return JSONResponse(finite_json(_jsonable(s)))


def routes(api: Api) -> list[Route]:
    """The OpenClaw routes, each through ``api``'s endpoint wrapper (counters, errors as JSON); the handlers read the
    plugin, the API and the :class:`Gateway` from the app's state."""
    endpoint = api.endpoint
    return [
        Route("/v1/skills", endpoint(skills), methods=["POST"]),
        Route("/v1/turns/input", endpoint(turn_input), methods=["POST"]),
        Route("/v1/turns/output", endpoint(turn_output), methods=["POST"]),
        Route("/v1/sessions", endpoint(sessions_list), methods=["GET"]),
        Route("/v1/sessions/{session_id:path}/end", endpoint(session_end), methods=["POST"]),
        Route("/v1/sessions/{session_id:path}", endpoint(session_show), methods=["GET"]),
        Route("/v1/feedback", endpoint(feedback), methods=["POST"]),
        Route("/v1/openclaw/host_model", endpoint(host_model_offer), methods=["POST"]),
        Route("/v1/openclaw/host_model", endpoint(host_model_status), methods=["GET"]),
    ]
