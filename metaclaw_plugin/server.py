"""The local HTTP API of ``metaclaw-plugin serve``: what the OpenClaw plugin (and later the dashboard) talks to.

- Starlette app, served by uvicorn. Binds 127.0.0.1 unless told otherwise; a non-loopback host needs
  ``allow_remote=True`` (``--allow-remote``).
- Every endpoint needs ``Authorization: Bearer <token>``. The token lives in ``$METACLAW_HOME/server.token``
  (mode 0600), is generated on first start and reused afterwards. It is compared in constant time.
- Bodies are read with a cap (413 before any parsing), parsed as JSON (400: not JSON, nested deeper than
  ``bounds.DEPTH_MAX``, a number that is not finite, an id holding NUL, a control character or a lone surrogate)
  and validated with pydantic (422: a missing field, a wrong type, a value out of its bounds). Every error is JSON:
  ``{"error": "..."}`` (plus ``details`` for validation errors). The bounds are those of the Python hooks
  (``metaclaw_plugin.bounds``), so nothing the sidecar accepts is later refused by the core.
- A session id may hold any text but control characters; one with ``/`` (or ``?``, ``#``, ``%``) is sent in the
  path percent-encoded (``/v1/sessions/a%2Fb``; ``/v1/sessions/a/b`` reads the same). Ending an unknown session
  answers 404 and stores nothing.

Endpoints::

    GET  /v1/health (and /health)        liveness (cheap)
    GET  /v1/status                      plugin + server status
    POST /v1/skills                      {session_id, tenant?, kind?, prompt?, messages?} -> {block, skills, generation}
    POST /v1/turns/input                 {session_id, run_id, messages, model?, tenant?, kind?, injected_skills?, tools?}
    POST /v1/turns/output                {session_id, run_id, response, usage?, error?}
    POST /v1/sessions/{session_id}/end   {outcome?: {success?, feedback?}, reason?}
    POST /v1/feedback                    {session_id, score: 1|-1|0, text?}
    GET  /v1/sessions                    recent sessions (for tests and the dashboard)
    GET  /v1/sessions/{session_id}       one session with its turns
    GET  /  (and every path outside /v1) the dashboard (metaclaw_plugin.dashboard; the same token, as a cookie)
    GET|PUT /v1/mode, GET /v1/scheduler  the mode in effect and the scheduler (metaclaw_plugin.scheduling.api)
    /v1/memory...                        each user's memories (metaclaw_plugin.memory.api)
    POST /v1/chat/completions            the served policy, OpenAI-compatible (serving/http.py)
    GET  /v1/models                      metaclaw/<serving.name>

The plugin hooks are synchronous and cheap (in-memory retrieval, one journal append), so the handlers
call them inline on the event loop: a thread hop would cost more than the hook. A body over ``INLINE_BYTES`` is
parsed and recorded in the threadpool instead: its redaction can take seconds, and ``/health`` (which the OpenClaw
plugin polls before every skill lookup) must not wait for it.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import json
import logging
import os
import secrets
import socket
import time
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import PydanticCustomError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .bounds import (
    DEPTH_MAX,
    GENERATION_MAX,
    ID_MAX,
    LABEL_MAX,
    LATENCY_MAX_MS,
    REASON_MAX,
    TEXT_MAX,
    Refused,
    finite_json,
    json_depth_exceeds,
    text_problem,
)
from .keyfile import load_or_create_secret
from .protocols import PluginLike
from .turns import FailOpen
from .types import DEFAULT_TENANT, TurnContext

log = logging.getLogger("metaclaw_plugin.server")
_fail = FailOpen(log, "metaclaw sidecar", what="the request")

TOKEN_FILE = "server.token"
DEFAULT_MAX_BODY = 4_000_000
HOST_NAME = "openclaw"
INLINE_BYTES = 64 * 1024  # larger bodies are parsed and recorded in the threadpool


# ------------------------------------------------------------------------------------------------
# Token
# ------------------------------------------------------------------------------------------------
def token_path(home: Path) -> Path:
    return Path(home).expanduser() / TOKEN_FILE


def load_or_create_token(home: Path) -> str:
    """Return the server token in ``home/server.token``, creating it (mode 0600) when missing.

    An existing token is reused, so a running OpenClaw plugin keeps working across sidecar restarts.
    A token file readable by others is tightened to 0600; an empty one is replaced.
    """
    home = Path(home).expanduser()
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    return load_or_create_secret(token_path(home), lambda: secrets.token_urlsafe(32))


def is_loopback(host: str) -> bool:
    if host in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


# ------------------------------------------------------------------------------------------------
# Request bodies
# ------------------------------------------------------------------------------------------------
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


Id = Annotated[str, Field(min_length=1, max_length=ID_MAX), AfterValidator(_id_text)]
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


# ------------------------------------------------------------------------------------------------
# Errors and body reading
# ------------------------------------------------------------------------------------------------
class ApiError(Exception):
    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.extra = extra


def error_response(status: int, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": message, **extra}, status_code=status)


async def read_body(request: Request, limit: int) -> bytes:
    """The raw body, refusing more than ``limit`` bytes with 413 before anything is parsed."""
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            n = int(declared)
        except ValueError:
            raise ApiError(400, "the Content-Length header is not a number") from None
        if n > limit:
            raise ApiError(413, f"request body is {n} bytes; the limit is {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ApiError(413, f"request body is larger than the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _describe(e: ValidationError) -> tuple[str, list[dict[str, Any]]]:
    details = []
    parts = []
    for err in e.errors(include_url=False, include_input=False):
        loc = ".".join(str(p) for p in err.get("loc", ())) or "(body)"
        msg = "unknown field" if err.get("type") == "extra_forbidden" else err.get("msg", "invalid")
        details.append({"field": loc, "message": msg})
        parts.append(f"{loc}: {msg}")
    return "invalid request body: " + "; ".join(parts[:10]) + (" ..." if len(parts) > 10 else ""), details


_BAD_TEXT = ("bad_text", "string_unicode")  # malformed text (NUL, control characters, lone surrogates): 400


def _not_finite(text: str) -> Any:
    raise ValueError(f"the number {text[:40]} is not finite")


def _finite(text: str) -> float:
    f = float(text)
    return f if f - f == 0.0 else _not_finite(text)  # inf - inf and nan - nan are nan


def decode(raw: bytes, model: type[BaseModel]) -> Any:
    """A body as ``model``: 400 for what is not a JSON object of finite numbers nested at most ``DEPTH_MAX`` deep
    (or holds an id that is not text), 422 for the rest of what ``model`` refuses."""
    if not raw.strip():
        data: Any = {}
    else:
        try:
            data = json.loads(raw, parse_constant=_not_finite, parse_float=_finite)
        except RecursionError:
            raise ApiError(400, f"request body nests deeper than {DEPTH_MAX} levels") from None
        except ValueError as e:  # not UTF-8, not JSON, a number out of range
            raise ApiError(400, f"request body is not valid JSON: {e}") from None
    if not isinstance(data, dict):
        raise ApiError(400, f"request body must be a JSON object, got {type(data).__name__}")
    if raw.count(b"[") + raw.count(b"{") > DEPTH_MAX and json_depth_exceeds(data):
        raise ApiError(400, f"request body nests deeper than {DEPTH_MAX} levels")
    try:
        return model.model_validate(data)
    except ValidationError as e:
        msg, details = _describe(e)
        bad_text = all(err.get("type") in _BAD_TEXT for err in e.errors(include_url=False, include_input=False))
        raise ApiError(400 if bad_text else 422, msg, details=details) from None


async def parse(request: Request, model: type[BaseModel], limit: int) -> Any:
    return decode(await read_body(request, limit), model)


def path_id(request: Request) -> str:
    """The session id in the path (percent-decoded, ``/`` allowed), checked like one in a body."""
    sid = request.path_params["session_id"]
    if not (0 < len(sid) <= ID_MAX):
        raise ApiError(422, f"session_id must be 1 to {ID_MAX} characters")
    problem = "must not be blank" if not sid.strip() else text_problem(sid)
    if problem:
        raise ApiError(400, f"session_id {problem}")
    return sid


def _dump_messages(msgs: list[ChatMessage]) -> list[dict[str, Any]]:
    return [m.model_dump(exclude_none=True) for m in msgs]


def _jsonable(obj: Any) -> Any:
    if is_dataclass(obj) and not isinstance(obj, type):
        return asdict(obj)
    return obj


# ------------------------------------------------------------------------------------------------
# Auth middleware (pure ASGI: cheaper than BaseHTTPMiddleware, and it runs before routing)
# ------------------------------------------------------------------------------------------------
class BearerAuth:
    """The API (``/v1/...``, ``/health``) needs the bearer header; any other path goes to ``dashboard``, which
    checks the same token itself (a cookie made from it, or the header)."""

    def __init__(self, app: Any, token: str, dashboard: Any = None) -> None:
        self.app = app
        self._token = token.encode()
        self.dashboard = dashboard

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        if self.dashboard is not None and not (path.startswith("/v1/") or path in ("/v1", "/health")):
            await self.dashboard(scope, receive, send)
            return
        auth = b""
        for k, v in scope.get("headers", ()):
            if k == b"authorization":
                auth = v
                break
        if not auth:
            resp = error_response(
                401,
                "missing Authorization header; send 'Authorization: Bearer <token>' "
                "with the token from $METACLAW_HOME/server.token",
            )
        else:
            scheme, _, given = auth.partition(b" ")
            if scheme.lower() != b"bearer" or not hmac.compare_digest(given.strip(), self._token):
                resp = error_response(401, "invalid bearer token")
            else:
                await self.app(scope, receive, send)
                return
        resp.headers["WWW-Authenticate"] = 'Bearer realm="metaclaw"'
        await resp(scope, receive, send)


# ------------------------------------------------------------------------------------------------
# The app
# ------------------------------------------------------------------------------------------------
def create_app(
    plugin: PluginLike,
    token: str,
    *,
    max_body_bytes: int | None = None,
    host_name: str = HOST_NAME,
    manage_plugin: bool = False,
    info: dict[str, Any] | None = None,
    policy: Any = None,
) -> Any:
    """Build the ASGI app around ``plugin`` (a :class:`MetaClawPlugin`).

    With ``manage_plugin=True`` the app starts the plugin on start-up and stops it on shutdown.
    ``policy`` is a :class:`~metaclaw_plugin.serving.ServedPolicy` for ``/v1/chat/completions`` (default: built
    from the plugin's settings). Returns the app wrapped in the bearer-token check.
    """
    from .serving.http import PolicyHost, chat_routes

    if not token:
        raise ValueError("the server needs a non-empty token")
    if max_body_bytes is None:
        server_settings = getattr(getattr(plugin, "settings", None), "server", None)
        max_body_bytes = getattr(server_settings, "max_body_bytes", None) or DEFAULT_MAX_BODY
    limit = int(max_body_bytes)
    started_at = time.time()
    counters = {"requests": 0, "errors": 0}
    server_info = dict(info or {})
    policy_host = PolicyHost(getattr(plugin, "settings", None), policy)

    def ctx_for(
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
            "host": host_name,
            "model": model,
            "user": user,
        }
        if run_id:
            kw["request_id"] = run_id
        return TurnContext(**kw)

    def endpoint(fn):
        async def wrapped(request: Request) -> Response:
            counters["requests"] += 1
            try:
                return await fn(request)
            except ApiError as e:
                counters["errors"] += 1
                return error_response(e.status, e.message, **e.extra)
            except Refused as e:
                counters["errors"] += 1
                return error_response(400, str(e))
            except Exception as e:
                counters["errors"] += 1
                log.exception("%s %s failed", request.method, request.url.path)
                return error_response(500, f"internal error: {type(e).__name__}: {e}")

        wrapped.__name__ = fn.__name__
        return wrapped

    @endpoint
    async def health(request: Request) -> Response:
        return JSONResponse({"ok": True, "pid": os.getpid(), "uptime_s": round(time.time() - started_at, 3)})

    @endpoint
    async def status(request: Request) -> Response:
        st = plugin.status() if hasattr(plugin, "status") else {}
        st = dict(st)
        st["server"] = {
            **server_info,
            "pid": os.getpid(),
            "uptime_s": round(time.time() - started_at, 3),
            "max_body_bytes": limit,
            **counters,
        }
        st["feedback_supported"] = hasattr(plugin, "on_feedback")
        st["policy"] = policy_host.status()
        return JSONResponse(st)

    async def handle(request: Request, model: type[BaseModel], work: Any) -> Response:
        """Decode the body as ``model`` and run ``work`` on it: inline, or in the threadpool for a large body."""
        raw = await read_body(request, limit)

        def run() -> Response:
            return work(decode(raw, model))

        return await run_in_threadpool(run) if len(raw) > INLINE_BYTES else run()

    def _skills(body: SkillsBody) -> Response:
        msgs = _dump_messages(body.messages)
        if body.prompt:
            msgs.append({"role": "user", "content": body.prompt})
        ctx = ctx_for(body.session_id, body.tenant, body.kind, user=body.user)
        inj = plugin.prepare_turn(ctx, msgs, record=False).block  # OpenClaw injects it; turns/input records
        return JSONResponse(
            {"block": inj.text or "", "skills": list(inj.names or []), "generation": int(inj.generation or 0)}
        )

    def _turn_input(body: TurnInputBody) -> Response:
        ctx = ctx_for(body.session_id, body.tenant, body.kind, body.run_id, body.model, body.user)
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
        return JSONResponse({"ok": ok})

    def _turn_output(body: TurnOutputBody) -> Response:
        ctx = ctx_for(body.session_id, body.tenant, body.kind, body.run_id, body.model, body.user)
        response = body.response.model_dump(exclude_none=True) if body.response is not None else None
        kw: dict[str, Any] = {"usage": body.usage, "error": body.error}
        if body.latency_ms is not None:
            kw["latency_ms"] = body.latency_ms
        turn = None
        with _fail.guard("turns.output", plugin):
            prepared = plugin.inflight.pop(ctx.request_id) or plugin.prepare_turn(ctx, [], inject=False, record=False)
            turn = plugin.complete_turn(prepared, response, ctx=ctx, **kw)
        return JSONResponse({"ok": turn is not None, "turn_id": body.run_id})

    def _feedback(body: FeedbackBody) -> Response:
        fn = getattr(plugin, "on_feedback", None)
        if fn is None:
            raise ApiError(
                501,
                "feedback is not supported by this version of the metaclaw-plugin core "
                "(MetaClawPlugin.on_feedback is missing)",
            )
        ctx = ctx_for(body.session_id, body.tenant, "main", body.run_id)
        fn(ctx, body.score, body.text)
        return JSONResponse({"ok": True})

    @endpoint
    async def skills(request: Request) -> Response:
        return await handle(request, SkillsBody, _skills)

    @endpoint
    async def turn_input(request: Request) -> Response:
        return await handle(request, TurnInputBody, _turn_input)

    @endpoint
    async def turn_output(request: Request) -> Response:
        return await handle(request, TurnOutputBody, _turn_output)

    @endpoint
    async def feedback(request: Request) -> Response:
        return await handle(request, FeedbackBody, _feedback)

    @endpoint
    async def session_end(request: Request) -> Response:
        sid = path_id(request)
        body: SessionEndBody = await parse(request, SessionEndBody, limit)
        knows = getattr(plugin, "knows_session", None)
        if knows is not None and not await run_in_threadpool(knows, sid, body.tenant):
            raise ApiError(404, f"no session {sid!r} in tenant {body.tenant!r}; nothing was ended")
        outcome = body.outcome.model_dump(exclude_none=True) if body.outcome is not None else None
        ctx = ctx_for(sid, body.tenant, "main")
        plugin.on_session_end(ctx, outcome or None, reason=body.reason or "host")
        return JSONResponse({"ok": True, "session_id": sid})

    @endpoint
    async def sessions_list(request: Request) -> Response:
        try:
            n = int(request.query_params.get("limit", "50"))
        except ValueError:
            raise ApiError(400, "limit must be an integer") from None
        tenant = request.query_params.get("tenant") or None
        ids = getattr(plugin, "ids", None)
        if tenant and ids is not None:
            tenant = ids.joinable(tenant)  # as the hooks stored it

        def read() -> list[dict[str, Any]]:
            plugin.store.flush(2.0)  # reads are for people and tests: show what was just captured
            return finite_json(plugin.store.list_sessions(limit=max(1, min(n, 1000)), tenant=tenant))

        return JSONResponse({"sessions": await run_in_threadpool(read)})

    @endpoint
    async def session_show(request: Request) -> Response:
        sid = path_id(request)
        tenant = request.query_params.get("tenant") or None

        s = await run_in_threadpool(plugin.read_session, sid, tenant)
        if s is None:
            raise ApiError(404, f"no session {sid!r}")
        return JSONResponse(finite_json(_jsonable(s)))

    @contextlib.asynccontextmanager
    async def lifespan(app: Any):
        if manage_plugin:
            plugin.start()
        policy_host.start()
        try:
            yield
        finally:
            policy_host.stop()
            if manage_plugin:
                plugin.stop()

    async def not_found(request: Request, exc: Exception) -> Response:
        return error_response(404, f"no endpoint {request.method} {request.url.path}")

    async def not_allowed(request: Request, exc: Exception) -> Response:
        return error_response(405, f"method {request.method} is not allowed on {request.url.path}")

    routes = [
        Route("/v1/health", health, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
        Route("/v1/status", status, methods=["GET"]),
        Route("/v1/skills", skills, methods=["POST"]),
        Route("/v1/turns/input", turn_input, methods=["POST"]),
        Route("/v1/turns/output", turn_output, methods=["POST"]),
        Route("/v1/sessions", sessions_list, methods=["GET"]),
        Route("/v1/sessions/{session_id:path}/end", session_end, methods=["POST"]),
        Route("/v1/sessions/{session_id:path}", session_show, methods=["GET"]),
        Route("/v1/feedback", feedback, methods=["POST"]),
        *chat_routes(policy_host, lambda request, model: parse(request, model, limit), endpoint),
    ]
    from .scheduling.api import routes as scheduling_routes  # GET/PUT /v1/mode, GET /v1/scheduler

    routes += scheduling_routes(plugin, endpoint, lambda request, model: parse(request, model, limit))
    from .memory.api import routes as memory_routes  # /v1/memory: list, search, add, forget, history, export, import

    routes += memory_routes(plugin, endpoint, lambda request, model: parse(request, model, limit), ApiError)
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={404: not_found, 405: not_allowed})
    app.state.plugin = plugin
    from .dashboard import create_dashboard

    return BearerAuth(app, token, create_dashboard(plugin, token))


# ------------------------------------------------------------------------------------------------
# Serving
# ------------------------------------------------------------------------------------------------
class RemoteBindRefused(ValueError):
    pass


def check_bind(host: str, allow_remote: bool) -> None:
    if not is_loopback(host) and not allow_remote:
        raise RemoteBindRefused(
            f"refusing to bind {host}: it is not a loopback address. The API gives access to your sessions; "
            "pass --allow-remote to bind it anyway (the bearer token is still required)."
        )


def bind_socket(host: str, port: int) -> socket.socket:
    """Bind (and listen) before anything says the server is up, so that a busy port fails with one line."""
    info = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(info[0], socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(info[4])
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def serve(
    settings: Any = None,
    *,
    host: str | None = None,
    port: int | None = None,
    allow_remote: bool = False,
    plugin: PluginLike | None = None,
    log_level: str = "warning",
    sock: socket.socket | None = None,
) -> None:
    """Run the API until interrupted (``metaclaw-plugin serve``); on ``sock`` when given (see :func:`bind_socket`)."""
    import uvicorn

    from .plugin import MetaClawPlugin

    if plugin is None:
        plugin = MetaClawPlugin(settings)
    settings = plugin.settings
    host = host or settings.server.host
    port = int(port if port is not None else settings.server.port)
    check_bind(host, allow_remote)
    token = load_or_create_token(settings.home_dir)
    app = create_app(
        plugin,
        token,
        max_body_bytes=settings.server.max_body_bytes,
        manage_plugin=True,
        info={"host": host, "port": port},
    )
    kw: dict[str, Any] = {}
    try:
        import httptools  # noqa: F401

        kw["http"] = "httptools"
    except ImportError:
        pass
    try:
        import uvloop  # noqa: F401

        kw["loop"] = "uvloop"
    except ImportError:
        pass
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,
        lifespan="on",
        server_header=False,
        date_header=False,
        **kw,
    )
    uvicorn.Server(config).run(sockets=[sock] if sock is not None else None)
