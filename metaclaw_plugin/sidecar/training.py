"""The sidecar's training figures (listed in ``metaclaw_plugin.sidecar.app``'s route table)::

    GET /v1/training/daily[?days=N]   per day: judged main turns, the share rewarded above 0, training steps

The same figures as the dashboard's success-per-day chart (:func:`metaclaw_plugin.dashboard.data.daily_success`),
for tools; behind the token like every ``/v1`` route.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..dashboard.data import DAILY_DAYS, daily_success
from ..protocols import plugin_of
from .http import Api, ApiError


async def daily(request: Request) -> Response:
    raw = request.query_params.get("days", str(DAILY_DAYS))
    if not raw.isdigit() or not 1 <= int(raw) <= 3650:
        raise ApiError(400, f"days must be a whole number of days from 1 to 3650, not {raw!r}")
    plugin = plugin_of(request)
    # postgres: the database the plugin's store uses (its pool); else the SQLite file, as the dashboard reads it
    db = plugin.library.db if plugin.library is not None else plugin.settings.db_file
    days = await run_in_threadpool(daily_success, db, days=int(raw))
    return JSONResponse({"days": days, "window_days": int(raw)})


def routes(api: Api) -> list[Route]:
    """The training route, through ``api``'s endpoint wrapper (counters, errors as JSON)."""
    return [Route("/v1/training/daily", api.endpoint(daily), methods=["GET"])]
