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
    DELETE /v1/memory/{id}            ?tenant&user -> {"forgotten": [id]} (with user: only that user's, else 404)

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
from ..protocols import PluginLike, plugin_of
from ..requestpath.bounds import ID_SENT_MAX
from ..store import open_database
from ..types import DEFAULT_TENANT
from .http import Api, ApiError, api_of


class AddBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(min_length=1, max_length=4000)
    tenant: str = Field(DEFAULT_TENANT, min_length=1, max_length=ID_SENT_MAX)
    user: str | None = Field(None, min_length=1, max_length=ID_SENT_MAX)
    kind: str | None = None


class ForgetBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    about: str = Field(min_length=1, max_length=4000)
    tenant: str = Field(DEFAULT_TENANT, min_length=1, max_length=ID_SENT_MAX)
    user: str | None = Field(None, min_length=1, max_length=ID_SENT_MAX)


class ImportBody(BaseModel):
    model_config = ConfigDict(extra="allow")
    format: str
    memories: list[Any]  # a row that is not an object is rejected alone, not the whole import


# What the handlers share -------------------------------------------------------------------------------------------
def _run(plugin: PluginLike, fn: Callable[[MemoryOps], Any], write: bool = False) -> Any:
    """``fn`` on a short connection of its own (a missing memory is 404, a refused one 422); a write refreshes this
    process's view at once."""
    db = open_database(plugin.settings)
    try:
        out = fn(MemoryOps(db, plugin.settings))
    except MemoryError_ as e:
        raise ApiError(404 if str(e).startswith("no memory") else 422, str(e)) from None
    finally:
        db.close()
    if write:
        plugin.refresh_memory()
    return out


async def _ops(request: Request, fn: Callable[[MemoryOps], Any], write: bool = False) -> Any:
    """:func:`_run` in the threadpool, on the app's plugin."""
    return await run_in_threadpool(_run, plugin_of(request), fn, write)


def _q(request: Request, name: str, default: str | None = None) -> str | None:
    v = request.query_params.get(name)
    return v if v else default


def _tenant(request: Request) -> str:
    return _q(request, "tenant", DEFAULT_TENANT) or DEFAULT_TENANT


def _limit(request: Request) -> int:
    try:
        return max(1, min(int(_q(request, "limit", "200") or 200), 10_000))
    except ValueError:
        raise ApiError(400, "limit must be an integer") from None


# Handlers (module-level: the plugin and the Api come from the app's state) -----------------------------------------
async def list_or_search(request: Request) -> Response:
    tenant = _tenant(request)
    user, query = _q(request, "user"), _q(request, "q")
    n = _limit(request)
    if query:
        # a user's search also reads the tenant's shared project memories (memory.share: tenant), as the
        # agents' own memory tools do
        rows = await _ops(
            request,
            lambda o: UserMemory(o, tenant, user).search(query, n) if user else o.search(query, tenant, user, n),
        )
    else:
        kind, status = _q(request, "kind"), _q(request, "status", "active") or "active"
        rows = await _ops(request, lambda o: o.list_(tenant, user, kind, status, n))
    return JSONResponse({"memories": rows})


async def add(request: Request) -> Response:
    body: AddBody = await api_of(request).parse(request, AddBody)
    m = await _ops(request, lambda o: o.add(body.text, body.tenant, body.user, body.kind), True)
    return JSONResponse(m, status_code=201)


async def show(request: Request) -> Response:
    mid, tenant = request.path_params["memory_id"], _tenant(request)
    return JSONResponse(await _ops(request, lambda o: o.show(mid, tenant)))


async def delete(request: Request) -> Response:
    mid, tenant, user = request.path_params["memory_id"], _tenant(request), _q(request, "user")
    if user:  # an agent's tool for its user: the owner is checked here, on the user as stored
        gone = await _ops(request, lambda o: UserMemory(o, tenant, user).forget(memory_id=mid), True)
    else:
        gone = await _ops(request, lambda o: o.forget(tenant, mid), True)
    return JSONResponse({"forgotten": gone})


async def forget(request: Request) -> Response:
    body: ForgetBody = await api_of(request).parse(request, ForgetBody)
    gone = await _ops(request, lambda o: o.forget(body.tenant, None, body.user, body.about), True)
    return JSONResponse({"forgotten": gone})


async def export(request: Request) -> Response:
    tenant, user = _tenant(request), _q(request, "user")
    return JSONResponse(await _ops(request, lambda o: o.export(tenant, user)))


async def import_(request: Request) -> Response:
    body: ImportBody = await api_of(request).parse(request, ImportBody)
    tenant, user = _tenant(request), _q(request, "user")
    report = await _ops(request, lambda o: o.import_(body.model_dump(), tenant, user), True)
    return JSONResponse(report)


def routes(api: Api) -> list[Route]:
    """The memory routes, each through ``api``'s endpoint wrapper (counters, errors as JSON)."""
    endpoint = api.endpoint
    return [
        Route("/v1/memory", endpoint(list_or_search), methods=["GET"]),
        Route("/v1/memory", endpoint(add), methods=["POST"]),
        Route("/v1/memory/export", endpoint(export), methods=["GET"]),
        Route("/v1/memory/import", endpoint(import_), methods=["POST"]),
        Route("/v1/memory/forget", endpoint(forget), methods=["POST"]),
        Route("/v1/memory/{memory_id}", endpoint(show), methods=["GET"]),
        Route("/v1/memory/{memory_id}", endpoint(delete), methods=["DELETE"]),
    ]
