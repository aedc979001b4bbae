"""The sidecar's memory routes (listed in ``metaclaw_plugin.sidecar.app``'s route table; the token gate guards
them like every route)::

    GET    /v1/memory                 ?tenant&user&kind&status&limit, or ?q= to search -> {"memories": [...]}
    POST   /v1/memory                 {text, tenant?, user?, kind?} -> the memory (screened; 422 saying why when not kept)
    GET    /v1/memory/export          ?tenant&user -> an export document (malformed rows under "skipped")
    POST   /v1/memory/import          {format, memories, ...} ?tenant&user (the caller's: default tenant and user
                                      unless named; never the file's) -> {"imported": n, "quarantined": q,
                                      "rejected": [{"row": i, "why": ...}]}
    POST   /v1/memory/forget          {tenant?, user?, about} -> {"forgotten": [ids]}
    GET    /v1/memory/{id}            ?tenant -> the memory with its history
    DELETE /v1/memory/{id}            ?tenant -> {"forgotten": [id]}

Writes refresh this process's view at once; other processes and hosts follow within a second.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..learning.memory.ops import MemoryError_, MemoryOps, UserMemory
from ..protocols import PluginLike
from ..store import open_database
from ..types import DEFAULT_TENANT
from .http import Api, ApiError


class AddBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(min_length=1, max_length=4000)
    tenant: str = Field(DEFAULT_TENANT, min_length=1, max_length=256)
    user: str | None = Field(None, min_length=1, max_length=256)
    kind: str | None = None


class ForgetBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    about: str = Field(min_length=1, max_length=4000)
    tenant: str = Field(DEFAULT_TENANT, min_length=1, max_length=256)
    user: str | None = Field(None, min_length=1, max_length=256)


class ImportBody(BaseModel):
    model_config = ConfigDict(extra="allow")
    format: str
    memories: list[Any]  # a row that is not an object is rejected alone, not the whole import


def routes(plugin: PluginLike, api: Api) -> list[Route]:
    endpoint, parse, api_error = api.endpoint, api.parse, ApiError

    def run(fn: Callable[[MemoryOps], Any], write: bool = False) -> Any:
        db = open_database(plugin.settings)
        try:
            out = fn(MemoryOps(db, plugin.settings))
        except MemoryError_ as e:
            raise api_error(404 if str(e).startswith("no memory") else 422, str(e)) from None
        finally:
            db.close()
        if write:
            plugin.refresh_memory()
        return out

    def q(request: Request, name: str, default: str | None = None) -> str | None:
        v = request.query_params.get(name)
        return v if v else default

    def limit(request: Request) -> int:
        try:
            return max(1, min(int(q(request, "limit", "200") or 200), 10_000))
        except ValueError:
            raise api_error(400, "limit must be an integer") from None

    @endpoint
    async def list_or_search(request: Request) -> Response:
        tenant = q(request, "tenant", DEFAULT_TENANT) or DEFAULT_TENANT
        user, query = q(request, "user"), q(request, "q")
        n = limit(request)
        if query:
            # a user's search also reads the tenant's shared project memories (memory.share: tenant), as the
            # agents' own memory tools do
            rows = await run_in_threadpool(
                run,
                lambda o: UserMemory(o, tenant, user).search(query, n) if user else o.search(query, tenant, user, n),
            )
        else:
            kind, status = q(request, "kind"), q(request, "status", "active") or "active"
            rows = await run_in_threadpool(run, lambda o: o.list_(tenant, user, kind, status, n))
        return JSONResponse({"memories": rows})

    @endpoint
    async def add(request: Request) -> Response:
        body: AddBody = await parse(request, AddBody)
        m = await run_in_threadpool(run, lambda o: o.add(body.text, body.tenant, body.user, body.kind), True)
        return JSONResponse(m, status_code=201)

    @endpoint
    async def show(request: Request) -> Response:
        mid, tenant = request.path_params["memory_id"], q(request, "tenant", DEFAULT_TENANT) or DEFAULT_TENANT
        return JSONResponse(await run_in_threadpool(run, lambda o: o.show(mid, tenant)))

    @endpoint
    async def delete(request: Request) -> Response:
        mid, tenant = request.path_params["memory_id"], q(request, "tenant", DEFAULT_TENANT) or DEFAULT_TENANT
        gone = await run_in_threadpool(run, lambda o: o.forget(tenant, mid), True)
        return JSONResponse({"forgotten": gone})

    @endpoint
    async def forget(request: Request) -> Response:
        body: ForgetBody = await parse(request, ForgetBody)
        gone = await run_in_threadpool(run, lambda o: o.forget(body.tenant, None, body.user, body.about), True)
        return JSONResponse({"forgotten": gone})

    @endpoint
    async def export(request: Request) -> Response:
        tenant, user = q(request, "tenant", DEFAULT_TENANT) or DEFAULT_TENANT, q(request, "user")
        return JSONResponse(await run_in_threadpool(run, lambda o: o.export(tenant, user)))

    @endpoint
    async def import_(request: Request) -> Response:
        body: ImportBody = await parse(request, ImportBody)
        tenant, user = q(request, "tenant", DEFAULT_TENANT) or DEFAULT_TENANT, q(request, "user")
        report = await run_in_threadpool(run, lambda o: o.import_(body.model_dump(), tenant, user), True)
        return JSONResponse(report)

    return [
        Route("/v1/memory", list_or_search, methods=["GET"]),
        Route("/v1/memory", add, methods=["POST"]),
        Route("/v1/memory/export", export, methods=["GET"]),
        Route("/v1/memory/import", import_, methods=["POST"]),
        Route("/v1/memory/forget", forget, methods=["POST"]),
        Route("/v1/memory/{memory_id}", show, methods=["GET"]),
        Route("/v1/memory/{memory_id}", delete, methods=["DELETE"]),
    ]
