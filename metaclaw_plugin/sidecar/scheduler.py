"""The sidecar's mode and scheduler routes (listed in ``metaclaw_plugin.sidecar.app``'s route table)::

    GET  /v1/mode        the mode in effect, where it came from, whether training can run
    PUT  /v1/mode        {"mode": "skills_only" | "rl" | "auto"} -> stored; this process's scheduler ticks at once
    GET  /v1/scheduler   state, window, signals, recent transitions (the live scheduler's view when attached)

They go through the sidecar's :class:`~metaclaw_plugin.sidecar.http.Api` (errors as JSON; body size cap, JSON,
pydantic) like every route; the token gate wraps the whole app.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..protocols import PluginLike, plugin_of
from ..scheduling.attach import report
from ..scheduling.modes import store_mode
from ..store import open_database
from .http import Api, api_of


class ModeBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    mode: Literal["skills_only", "rl", "auto"]


def _current(plugin: PluginLike, with_signals: bool) -> dict[str, Any]:
    """The mode in effect; with signals, the live scheduler's status when one is attached (else read from the store)."""
    sched = plugin.scheduler
    out = report(plugin.settings, with_signals=with_signals and sched is None)
    out["attached"] = sched is not None
    out["note"] = plugin.scheduler_note
    if sched is not None and with_signals:
        out["live"] = sched.status()
    return out


def _store(plugin: PluginLike, mode: str) -> dict[str, Any]:
    """Store ``mode`` and wake this process's scheduler, so that it ticks at once."""
    db = open_database(plugin.settings)
    try:
        store_mode(db, mode)
    finally:
        db.close()
    if plugin.scheduler is not None:
        plugin.scheduler.wake()
    return _current(plugin, False)


async def get_mode(request: Request) -> Response:
    return JSONResponse(await run_in_threadpool(_current, plugin_of(request), False))


async def put_mode(request: Request) -> Response:
    body: ModeBody = await api_of(request).parse(request, ModeBody)
    return JSONResponse(await run_in_threadpool(_store, plugin_of(request), body.mode))


async def get_scheduler(request: Request) -> Response:
    return JSONResponse(await run_in_threadpool(_current, plugin_of(request), True))


def routes(api: Api) -> list[Route]:
    """The mode and scheduler routes, each through ``api``'s endpoint wrapper (counters, errors as JSON); the
    handlers read the plugin and the Api from the app's state."""
    endpoint = api.endpoint
    return [
        Route("/v1/mode", endpoint(get_mode), methods=["GET"]),
        Route("/v1/mode", endpoint(put_mode), methods=["PUT", "POST"]),
        Route("/v1/scheduler", endpoint(get_scheduler), methods=["GET"]),
    ]
