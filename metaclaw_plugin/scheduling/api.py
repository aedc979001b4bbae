"""The local API's mode and scheduler routes, mounted by ``metaclaw_plugin.server``::

    GET  /v1/mode        the mode in effect, where it came from, whether training can run
    PUT  /v1/mode        {"mode": "skills_only" | "rl" | "auto"} -> stored; this process's scheduler ticks at once
    GET  /v1/scheduler   state, window, signals, recent transitions (the live scheduler's view when attached)

The server passes its ``endpoint`` wrapper (errors as JSON) and body ``parse`` (size cap, JSON, pydantic), so
these routes behave like the others; the bearer-token check wraps the whole app.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..protocols import PluginLike
from ..store import open_database
from .attach import report
from .modes import store_mode

Handler = Callable[[Request], Awaitable[Response]]


class ModeBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    mode: Literal["skills_only", "rl", "auto"]


def routes(
    plugin: PluginLike,
    endpoint: Callable[[Handler], Handler],
    parse: Callable[[Request, type[BaseModel]], Awaitable[Any]],
) -> list[Route]:
    def current(with_signals: bool) -> dict[str, Any]:
        out = report(plugin.settings, with_signals=with_signals and getattr(plugin, "scheduler", None) is None)
        sched = getattr(plugin, "scheduler", None)
        out["attached"] = sched is not None
        out["note"] = getattr(plugin, "scheduler_note", None)
        if sched is not None and with_signals:
            out["live"] = sched.status()
        return out

    @endpoint
    async def get_mode(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(current, False))

    @endpoint
    async def put_mode(request: Request) -> Response:
        body: ModeBody = await parse(request, ModeBody)

        def write() -> dict[str, Any]:
            db = open_database(plugin.settings)
            try:
                store_mode(db, body.mode)
            finally:
                db.close()
            sched = getattr(plugin, "scheduler", None)
            if sched is not None:
                sched.wake()
            return current(False)

        return JSONResponse(await run_in_threadpool(write))

    @endpoint
    async def get_scheduler(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(current, True))

    return [
        Route("/v1/mode", get_mode, methods=["GET"]),
        Route("/v1/mode", put_mode, methods=["PUT", "POST"]),
        Route("/v1/scheduler", get_scheduler, methods=["GET"]),
    ]
