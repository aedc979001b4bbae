"""The sidecar's one app: every route in one table, behind the one token gate (:mod:`.gate`).

``create_app`` builds it around a plugin; ``metaclaw_plugin.sidecar.run.serve`` runs it with uvicorn
(``metaclaw-plugin serve``).
"""

from __future__ import annotations

import contextlib
import os
import time
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..dashboard import create_dashboard
from ..protocols import PluginLike, plugin_of
from . import memory, openclaw, scheduler, training
from .gate import Gate, TokenGate
from .hostmodel import OpenClawHostModel
from .http import DEFAULT_MAX_BODY, Api, api_of, error_response
from .policy import PolicyHost, host_of
from .policy import routes as policy_routes


# The handlers (module-level: the plugin, the Api, the server's info and the PolicyHost come from the app's state) ----
def _info(request: Request) -> dict[str, Any]:
    """What the caller of :func:`create_app` said about this server (``info``), shown under ``server`` in status."""
    info: dict[str, Any] = request.app.state.info
    return info


async def health(request: Request) -> Response:
    api = api_of(request)
    return JSONResponse({"ok": True, "pid": os.getpid(), "uptime_s": round(time.time() - api.started_at, 3)})


async def status(request: Request) -> Response:
    api = api_of(request)
    st = plugin_of(request).status()
    st["server"] = {
        **_info(request),
        "pid": os.getpid(),
        "uptime_s": round(time.time() - api.started_at, 3),
        "max_body_bytes": api.limit,
        **api.counters,
    }
    st["feedback_supported"] = True  # on_feedback is part of PluginLike; the key stays for hosts that read it
    st["policy"] = host_of(request).status()
    return JSONResponse(st)


async def not_found(request: Request, exc: Exception) -> Response:
    return error_response(404, f"no endpoint {request.method} {request.url.path}")


async def not_allowed(request: Request, exc: Exception) -> Response:
    return error_response(405, f"method {request.method} is not allowed on {request.url.path}")


def create_app(
    plugin: PluginLike,
    token: str,
    *,
    max_body_bytes: int | None = None,
    host_name: str = openclaw.HOST_NAME,
    manage_plugin: bool = False,
    info: dict[str, Any] | None = None,
    policy: Any = None,
) -> Any:
    """Build the ASGI app around ``plugin`` (a :class:`MetaClawPlugin`).

    With ``manage_plugin=True`` the app starts the plugin on start-up and stops it on shutdown.
    ``policy`` is a :class:`~metaclaw_plugin.serving.ServedPolicy` for ``/v1/chat/completions`` (default: built
    from the plugin's settings). Returns the app behind the token gate.
    """
    gate = TokenGate(token)  # refuses an empty token
    if max_body_bytes is None:
        max_body_bytes = plugin.settings.server.max_body_bytes or DEFAULT_MAX_BODY
    api = Api(int(max_body_bytes))
    policy_host = PolicyHost(plugin.settings, policy)
    endpoint = api.endpoint

    # The route table: every path the sidecar answers (the dashboard takes every path outside /v1, see Gate).
    routes = [
        Route("/v1/health", endpoint(health), methods=["GET"]),
        Route("/health", endpoint(health), methods=["GET"]),
        Route("/v1/status", endpoint(status), methods=["GET"]),
        # /v1/skills, /v1/turns/input|output, /v1/sessions[/{id}[/end]], /v1/feedback: the OpenClaw plugin's API
        *openclaw.routes(api),
        # POST /v1/chat/completions, GET /v1/models: the served policy
        *policy_routes(api),
        # GET|PUT /v1/mode, GET /v1/scheduler: the mode and the training scheduler
        *scheduler.routes(api),
        # GET /v1/training/daily: success per day beside the training steps (the dashboard's chart, as JSON)
        *training.routes(api),
        # /v1/memory: list, search, add, show, forget, history, export, import
        *memory.routes(api),
    ]

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

    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={404: not_found, 405: not_allowed})
    app.state.plugin = plugin
    app.state.api = api
    app.state.info = dict(info or {})
    app.state.policy = policy_host
    app.state.openclaw = openclaw.Gateway(host_name, OpenClawHostModel(plugin))
    return Gate(app, gate, create_dashboard(plugin, gate))
