"""The dashboard app, mounted by the sidecar (``metaclaw-plugin serve``) at ``/`` behind its one token gate.

Sign-in: the token link that ``serve`` prints (``/?token=...``) or the login form sets a cookie (HttpOnly,
SameSite=Strict) holding an HMAC of the token, never the token; the API's bearer header works too. Every check
against the token is the gate's (``metaclaw_plugin.sidecar.gate.TokenGate``); the dashboard only asks it. Actions are
POST forms carrying a CSRF token (an HMAC of the token as well) and are refused from another origin. Every
response forbids framing, caching and cross-site referrers (the token link must not leak), and the content security policy
allows scripts from this server only (no inline script, no CDN)."""

from __future__ import annotations

import hmac
import importlib.util
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import parse_qs, quote, urlencode, urlsplit

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from ..learning.approval import ApprovalRefused, approve
from ..learning.memory.ops import MemoryError_, MemoryOps
from ..privacy import redactor_for
from ..protocols import PluginLike, plugin_of
from ..store import open_database
from ..types import DEFAULT_TENANT
from . import data, pages

STATIC = Path(__file__).with_name("static")
MAX_FORM = 16_384
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",  # no-referrer would make Chromium send "Origin: null" on our own forms
    "Cache-Control": "no-store",
}


class SignIn(Protocol):
    """What the dashboard needs of the sidecar's token gate (a protocol: the sidecar sits above the dashboard)."""

    def mac(self, purpose: bytes) -> str: ...
    def matches(self, given: str) -> bool: ...
    def signed_in(self, request: Request) -> bool: ...
    def sign_in(self, resp: Response) -> Response: ...
    def sign_out(self, resp: Response) -> Response: ...


def plotly_bundle() -> Path | None:
    """The plotly.js bundle shipped inside the ``plotly`` package (the ``dashboard`` extra), if installed."""
    spec = importlib.util.find_spec("plotly")
    if spec is None or not spec.submodule_search_locations:
        return None
    p = Path(next(iter(spec.submodule_search_locations))) / "package_data" / "plotly.min.js"
    return p if p.is_file() else None


def create_dashboard(plugin: PluginLike, gate: SignIn) -> Any:
    """The dashboard's app: its handlers (module-level, below) read the plugin, the gate and the plotly bundle from
    the app's state."""
    app = Starlette(routes=ROUTES, exception_handlers={404: not_found})
    app.state.plugin = plugin
    app.state.gate = gate
    app.state.plotly = plotly_bundle()
    return app


# What the handlers read from the app's state ------------------------------------------------------------------------
def _gate(request: Request) -> SignIn:
    gate: SignIn = request.app.state.gate
    return gate


def _bundle(request: Request) -> Path | None:
    bundle: Path | None = request.app.state.plotly
    return bundle


def _csrf(request: Request) -> str:
    """The CSRF field of every action form: an HMAC of the token (the same on every page)."""
    return _gate(request).mac(b"csrf")


def _source(plugin: PluginLike) -> data.Source:
    """postgres: the database the plugin's store and shared skill library use (its pool); else the SQLite file."""
    return plugin.library.db if plugin.library is not None else plugin.settings.db_file


# Plumbing: headers, origin, forms, sign-in ------------------------------------------------------------------------
def secure(resp: Response) -> Response:
    for k, v in HEADERS.items():
        resp.headers.setdefault(k, v)
    return resp


def same_origin(request: Request) -> bool:
    origin = request.headers.get("origin")
    if origin is None:
        return True  # browsers send Origin on POST; the SameSite=Strict cookie covers the rest
    return urlsplit(origin).netloc == request.headers.get("host", "")


def _form_ok(request: Request, f: dict[str, str]) -> bool:
    """An action form from this dashboard: same origin and the CSRF field (compared in constant time)."""
    return same_origin(request) and hmac.compare_digest(f.get("csrf", "").encode(), _csrf(request).encode())


async def form(request: Request) -> dict[str, str]:
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM:
            return {}
    return {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}


Handler = Callable[[Request], Awaitable[Response]]


def page(fn: Handler) -> Handler:
    """``fn`` for a signed-in person only: the token link signs in (and drops the token from the URL), a signed-out
    GET goes to the login form, anything else is refused."""

    async def guarded(request: Request) -> Response:
        gate = _gate(request)
        if gate.signed_in(request):
            return secure(await fn(request))
        given = request.query_params.get("token")
        if request.method == "GET" and given and gate.matches(given):
            rest = {k: v for k, v in request.query_params.items() if k != "token"}
            target = request.url.path + ("?" + urlencode(rest) if rest else "")
            return secure(gate.sign_in(RedirectResponse(target, status_code=303)))
        if request.method == "GET":
            return secure(RedirectResponse("/login?" + urlencode({"next": request.url.path}), status_code=303))
        return secure(HTMLResponse(pages.login("sign in first"), status_code=403))

    guarded.__name__ = fn.__name__
    return guarded


async def login_form(request: Request) -> Response:
    if _gate(request).signed_in(request):
        return secure(RedirectResponse("/", status_code=303))
    return secure(HTMLResponse(pages.login(next_path=_local(request.query_params.get("next")))))


async def login(request: Request) -> Response:
    f = await form(request)
    gate = _gate(request)
    if not same_origin(request) or not gate.matches(f.get("token", "")):
        return secure(HTMLResponse(pages.login("wrong token", _local(f.get("next"))), status_code=401))
    return secure(gate.sign_in(RedirectResponse(_local(f.get("next")), status_code=303)))


async def logout(request: Request) -> Response:
    resp = RedirectResponse("/login", status_code=303)
    return secure(_gate(request).sign_out(resp))


# Skills -------------------------------------------------------------------------------------------------------------
def _skill_rows(plugin: PluginLike) -> list[data.SkillRow]:
    plugin.sync_library()  # postgres: this host's copy of the library as the database holds it now
    return data.skills(plugin.settings.skills_path, _source(plugin))


@page
async def skills(request: Request) -> Response:
    rows = await run_in_threadpool(_skill_rows, plugin_of(request))
    return HTMLResponse(pages.skills_page(rows, _csrf(request), request.query_params.get("msg")))


def _act_on_skill(plugin: PluginLike, name: str, action: str) -> str:
    """A person's approve, retire or rollback, and the line the skills page shows about it."""
    settings, store = plugin.settings, plugin.skills.store
    plugin.sync_library()  # postgres: act on the library as the database holds it
    try:
        if action == "approve":
            s = approve(
                store,
                name,
                max_body_chars=settings.evolution.max_body_chars,
                redactor=redactor_for(settings.privacy),
                actor="dashboard",
                reason="approved in the dashboard",
            )
        elif action == "retire":
            s = store.set_status(name, "retired", actor="dashboard", reason="retired in the dashboard")
        else:
            s = store.rollback(name, None, actor="dashboard", reason="rolled back in the dashboard")
    except ApprovalRefused as e:
        return f"not approved: {e}"
    except (KeyError, ValueError) as e:
        return f"{name}: {action} failed: {e}"
    plugin.skills.refresh(force=True)
    done = f"{name}: now {s.status} (version {s.extra_metadata.get('version', 1)})"
    unpublished = plugin.sync_library()  # postgres: in the shared library before the page shows it
    return done if unpublished is None else f"{done} on this host; not yet shared, retried: {unpublished}"


@page
async def skill_action(request: Request) -> Response:
    name, action = request.path_params["name"], request.path_params["action"]
    if action not in ("approve", "retire", "rollback"):
        return HTMLResponse(pages.layout("Not found", "/", f"<p>No action {pages.e(action)}.</p>"), 404)
    f = await form(request)
    if not _form_ok(request, f):
        return HTMLResponse("<p>refused: the form is not from this dashboard (CSRF check)</p>", status_code=403)
    msg = await run_in_threadpool(_act_on_skill, plugin_of(request), name, action)
    return RedirectResponse("/?" + urlencode({"msg": msg}), status_code=303)


# Memory -------------------------------------------------------------------------------------------------------------
def _with_memory(plugin: PluginLike, fn: Callable[[MemoryOps], Any]) -> Any:
    """``fn`` on the memory tables: through the plugin's own connection (pool) when memory is on, else a short one."""
    own = plugin.memory_store.db if plugin.memory_store is not None else None
    mdb = own if own is not None else open_database(plugin.settings)
    try:
        return fn(MemoryOps(mdb, plugin.settings))
    finally:
        if own is None:
            mdb.close()


MemoryRows = tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]


def _memory_rows(plugin: PluginLike, tenant: str, user: str | None, query: str | None, status: str) -> MemoryRows:
    """The users with memories, the memories shown (a search, else a status's list) and what the user said."""
    db = _source(plugin)
    users = data.memory_users(db)
    said = data.passages_of(db, tenant, user) if user else []
    if query:
        return users, _with_memory(plugin, lambda o: o.search(query, tenant, user, 200)), said
    return users, _with_memory(plugin, lambda o: o.list_(tenant, user, None, status, 500)), said


@page
async def memory(request: Request) -> Response:
    qp = request.query_params
    tenant, user = qp.get("tenant") or DEFAULT_TENANT, qp.get("user") or None
    query, status = (qp.get("q") or "").strip() or None, qp.get("status") or "active"
    if status not in pages.MEMORY_STATUSES:
        status = "active"
    users, rows, said = await run_in_threadpool(_memory_rows, plugin_of(request), tenant, user, query, status)
    return HTMLResponse(
        pages.memory_page(
            users,
            rows,
            tenant=tenant,
            user=user,
            query=query,
            status=status,
            csrf=_csrf(request),
            notice=qp.get("msg"),
            said=said,
        )
    )


@page
async def memory_detail(request: Request) -> Response:
    mid, tenant = request.path_params["memory_id"], request.query_params.get("tenant") or DEFAULT_TENANT
    try:
        m = await run_in_threadpool(_with_memory, plugin_of(request), lambda o: o.show(mid, tenant))
    except MemoryError_ as err:
        return HTMLResponse(pages.layout("No such memory", "/memory", f"<p>{pages.e(err)}.</p>"), 404)
    return HTMLResponse(pages.memory_detail_page(m, _csrf(request)))


def _forget(plugin: PluginLike, tenant: str, mid: str) -> str:
    """Forget one memory (its text erased) and the line the memory page shows about it."""
    try:
        gone = _with_memory(plugin, lambda o: o.forget(tenant, mid))
    except MemoryError_ as err:
        return str(err)
    plugin.refresh_memory()  # this process's view drops it now; other processes and hosts within a second
    return f"{mid}: forgotten (its text erased)" if gone else f"{mid}: already forgotten"


@page
async def memory_forget(request: Request) -> Response:
    f = await form(request)
    if not _form_ok(request, f):
        return HTMLResponse("<p>refused: the form is not from this dashboard (CSRF check)</p>", status_code=403)
    mid, tenant, user = request.path_params["memory_id"], f.get("tenant") or DEFAULT_TENANT, f.get("user")
    msg = await run_in_threadpool(_forget, plugin_of(request), tenant, mid)
    back = {"tenant": tenant, **({"user": user} if user else {}), "msg": msg}
    return RedirectResponse("/memory?" + urlencode(back), status_code=303)


# Sessions, training, scheduler ------------------------------------------------------------------------------------
@page
async def sessions(request: Request) -> Response:
    try:
        offset = max(0, int(request.query_params.get("offset", "0")))
    except ValueError:
        offset = 0
    total, rows = await run_in_threadpool(data.sessions, _source(plugin_of(request)), limit=50, offset=offset)
    return HTMLResponse(pages.sessions_page(total, rows, offset, 50))


@page
async def session(request: Request) -> Response:
    sid = request.path_params["session_id"]
    tenant = request.query_params.get("tenant") or None
    plugin = plugin_of(request)
    s = await run_in_threadpool(plugin.read_session, sid, tenant)
    if s is None:
        return HTMLResponse(pages.layout("No such session", "/sessions", f"<p>No session {pages.e(sid)}.</p>"), 404)
    rewards = await run_in_threadpool(data.session_rewards, _source(plugin), [t.turn_id for t in s.turns])
    return HTMLResponse(pages.session_page(s, rewards))


@page
async def training(request: Request) -> Response:
    plugin = plugin_of(request)
    db = _source(plugin)
    steps = await run_in_threadpool(data.train_steps, db)
    daily = await run_in_threadpool(data.daily_success, db)
    spend = await run_in_threadpool(data.model_spend, plugin.settings)
    return HTMLResponse(pages.training_page(steps, _bundle(request) is not None, daily, spend))


@page
async def scheduler(request: Request) -> Response:
    rows = await run_in_threadpool(data.transitions, _source(plugin_of(request)))
    return HTMLResponse(pages.scheduler_page(rows, _bundle(request) is not None))


# Static files and the rest ----------------------------------------------------------------------------------------
def static_file(path: Path, media_type: str) -> Response:
    resp = FileResponse(path, media_type=media_type)
    resp.headers["Cache-Control"] = "private, max-age=3600"
    return secure(resp)


async def own_static(request: Request) -> Response:
    """The dashboard's own stylesheet and script: public (the login form uses them), nothing secret."""
    name = request.path_params["name"]
    if name not in ("dashboard.js", "dashboard.css"):
        return secure(Response("not found", status_code=404, media_type="text/plain"))
    return static_file(STATIC / name, "text/css" if name.endswith(".css") else "text/javascript")


@page
async def plotly_js(request: Request) -> Response:
    bundle = _bundle(request)
    if bundle is None:
        return Response("plotly is not installed: pip install 'metaclaw-plugin[dashboard]'", 404)
    return static_file(bundle, "text/javascript")


async def favicon(request: Request) -> Response:
    return secure(Response(status_code=204))


async def not_found(request: Request, exc: Exception) -> Response:
    if not _gate(request).signed_in(request):
        return secure(RedirectResponse("/login", status_code=303))
    return secure(HTMLResponse(pages.layout("Not found", "", f"<p>No page {pages.e(request.url.path)}.</p>"), 404))


ROUTES = [
    Route("/login", login_form, methods=["GET"]),
    Route("/login", login, methods=["POST"]),
    Route("/logout", logout, methods=["POST"]),
    Route("/", skills, methods=["GET"]),
    Route("/skills/{name}/{action:str}", skill_action, methods=["POST"]),
    Route("/memory", memory, methods=["GET"]),
    Route("/memory/{memory_id}", memory_detail, methods=["GET"]),
    Route("/memory/{memory_id}/forget", memory_forget, methods=["POST"]),
    Route("/sessions", sessions, methods=["GET"]),
    Route("/sessions/{session_id:path}", session, methods=["GET"]),
    Route("/training", training, methods=["GET"]),
    Route("/scheduler", scheduler, methods=["GET"]),
    Route("/favicon.ico", favicon, methods=["GET"]),
    Route("/static/plotly.min.js", plotly_js, methods=["GET"]),
    Route("/static/{name}", own_static, methods=["GET"]),
]


def _local(path: str | None) -> str:
    """A path on this server only (no open redirect to //elsewhere or https://elsewhere)."""
    if not path or not path.startswith("/") or path.startswith("//") or "\\" in path:
        return "/"
    return quote(path, safe="/?=&-_.~%")
