"""The one token gate in front of every route of the sidecar.

The token lives in ``$METACLAW_HOME/server.token`` (mode 0600), is generated on first start and reused afterwards
(a running OpenClaw plugin keeps working across restarts). Every comparison is constant-time and made here:

- the API (``/v1/...``, ``/health``) needs ``Authorization: Bearer <token>``;
- every other path is the dashboard's, which asks the gate whether a request is signed in: the bearer header, or
  the session cookie (HttpOnly, SameSite=Strict) that holds an HMAC of the token, never the token itself.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ..infra.keyfile import load_or_create_secret
from .http import error_response

TOKEN_FILE = "server.token"
COOKIE = "metaclaw_dashboard"


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


def is_api_path(path: str) -> bool:
    return path.startswith("/v1/") or path in ("/v1", "/health")


class TokenGate:
    """The token and every check made against it (the API's header, the dashboard's cookie and sign-in)."""

    def __init__(self, token: str) -> None:
        if not token:
            raise ValueError("the server needs a non-empty token")
        self._token = token.encode()
        self._session = self.mac(b"session").encode()

    def mac(self, purpose: bytes) -> str:
        """An HMAC of the token for ``purpose`` (the session cookie, the dashboard's CSRF field)."""
        return hmac.new(self._token, b"metaclaw-dashboard:" + purpose, hashlib.sha256).hexdigest()

    def matches(self, given: str | bytes) -> bool:
        raw = given.encode() if isinstance(given, str) else given
        return hmac.compare_digest(raw.strip(), self._token)

    def bearer_ok(self, authorization: str | bytes) -> bool:
        raw = authorization.encode() if isinstance(authorization, str) else authorization
        scheme, _, given = raw.partition(b" ")
        return scheme.lower() == b"bearer" and self.matches(given)

    def signed_in(self, request: Request) -> bool:
        """The dashboard's check: the session cookie, or the API's bearer header."""
        c = request.cookies.get(COOKIE, "")
        if c and hmac.compare_digest(c.encode(), self._session):
            return True
        return self.bearer_ok(request.headers.get("authorization", ""))

    def sign_in(self, resp: Response) -> Response:
        resp.set_cookie(COOKIE, self._session.decode(), httponly=True, samesite="strict", path="/")
        return resp

    def sign_out(self, resp: Response) -> Response:
        resp.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
        return resp


class Gate:
    """The ASGI entry of the sidecar (pure ASGI: cheaper than BaseHTTPMiddleware, and it runs before routing): an API
    path goes to ``api`` only with the bearer header; any other path goes to ``dashboard``, which signs people in
    through the same :class:`TokenGate`."""

    def __init__(self, api: Any, gate: TokenGate, dashboard: Any = None) -> None:
        self.app = api
        self.gate = gate
        self.dashboard = dashboard

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.dashboard is not None and not is_api_path(scope.get("path", "")):
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
        elif not self.gate.bearer_ok(auth):
            resp = error_response(401, "invalid bearer token")
        else:
            await self.app(scope, receive, send)
            return
        resp.headers["WWW-Authenticate"] = 'Bearer realm="metaclaw"'
        await resp(scope, receive, send)
