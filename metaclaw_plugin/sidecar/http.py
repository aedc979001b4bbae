"""What every route of the sidecar shares: reading a body (size cap, JSON, pydantic), errors as JSON, the endpoint
wrapper that counts requests and turns exceptions into those errors.

Bodies are read with a cap (413 before any parsing), parsed as JSON (400: not JSON, nested deeper than
``bounds.DEPTH_MAX``, a number that is not finite, an id holding NUL, a control character or a lone surrogate) and
validated with pydantic (422: a missing field, a wrong type, a value out of its bounds). Every error is JSON:
``{"error": "..."}`` (plus ``details`` for validation errors).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..requestpath.bounds import DEPTH_MAX, ID_SENT_MAX, Refused, json_depth_exceeds, text_problem

log = logging.getLogger("metaclaw_plugin.sidecar")

DEFAULT_MAX_BODY = 4_000_000
Handler = Callable[[Request], Awaitable[Response]]


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


def path_id(request: Request, name: str = "session_id") -> str:
    """An id in the path (percent-decoded, ``/`` allowed), checked like one in a body."""
    sid = request.path_params[name]
    if not (0 < len(sid) <= ID_SENT_MAX):
        raise ApiError(422, f"{name} must be 1 to {ID_SENT_MAX} characters")
    problem = "must not be blank" if not sid.strip() else text_problem(sid)
    if problem:
        raise ApiError(400, f"{name} {problem}")
    return sid


def api_of(request: Request) -> Api:
    """The app's :class:`Api` (its body limit), kept in its state beside the plugin."""
    api: Api = request.app.state.api
    return api


class Api:
    """One app's request plumbing: its body limit, its counters, and the wrapper every route goes through."""

    def __init__(self, limit: int) -> None:
        self.limit = int(limit)
        self.started_at = time.time()
        self.counters = {"requests": 0, "errors": 0}

    async def body(self, request: Request) -> bytes:
        return await read_body(request, self.limit)

    async def parse(self, request: Request, model: type[BaseModel]) -> Any:
        return decode(await read_body(request, self.limit), model)

    def endpoint(self, fn: Handler) -> Handler:
        """``fn`` with the counters and every failure answered as a JSON error (500s logged)."""
        counters = self.counters

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
