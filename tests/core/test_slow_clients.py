"""Slow clients cannot hold the HTTP servers (``serve``, ``mcp --http``): a request that does not arrive whole within
the read deadline gets a 408 and is closed, one address holds a bounded number of connections, and other clients
are served meanwhile. In process with both of uvicorn's HTTP protocols (sidecar/conn.py subclasses them, so a
uvicorn release that changes their callbacks fails here), then through ``metaclaw-plugin serve`` and
``metaclaw-plugin mcp --http`` as a user starts them."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from metaclaw_plugin.infra.procs import free_port
from metaclaw_plugin.sidecar.conn import STATS, guarded_protocol

DEADLINE = 1.0
SLOW = 50  # slow connections at once (the figure)
CLOSED_WITHIN = DEADLINE + 8.0  # generous: the check is that they close at all, not when to the millisecond


async def _echo(request: Request) -> JSONResponse:
    body = await request.body()
    return JSONResponse({"got": len(body)})


@contextlib.contextmanager
def app_server(http: str, per_client: int = 200) -> Iterator[int]:
    app = Starlette(routes=[Route("/echo", _echo, methods=["GET", "POST"])])
    port = free_port()
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        http=guarded_protocol(http, deadline=DEADLINE, per_client=per_client),
        lifespan="off",
    )
    server = uvicorn.Server(config)
    t = threading.Thread(target=server.run, daemon=True)
    t.start()
    until = time.monotonic() + 20
    while not server.started and time.monotonic() < until:
        time.sleep(0.02)
    assert server.started
    try:
        yield port
    finally:
        server.should_exit = True
        t.join(10)


def _open(port: int, first: bytes) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=CLOSED_WITHIN)
    if first:
        s.sendall(first)
    return s


def _answer(s: socket.socket) -> bytes:
    """What the server says before it closes the connection (b"" when it closes without a word)."""
    out = b""
    with contextlib.suppress(OSError):
        while chunk := s.recv(4096):
            out += chunk
    s.close()
    return out


SLOW_HEADERS = b"GET /echo HTTP/1.1\r\nHost: x\r\nX-Slow: "
SLOW_BODY = b'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"a": '


@pytest.mark.perf
@pytest.mark.parametrize("http", ["httptools", "h11"])
@pytest.mark.parametrize("first", [SLOW_HEADERS, SLOW_BODY, b""], ids=["headers", "body", "nothing"])
def test_slow_requests_are_closed_at_the_deadline_and_others_are_served(http: str, first: bytes) -> None:
    timed_out = STATS["timed_out"]
    with app_server(http) as port:
        t0 = time.monotonic()
        slow = [_open(port, first) for _ in range(SLOW)]
        r = httpx.post(f"http://127.0.0.1:{port}/echo", content=b"x" * 5000, timeout=5)  # served meanwhile
        assert r.status_code == 200 and r.json() == {"got": 5000}
        answers = [_answer(s) for s in slow]
        took = time.monotonic() - t0
    assert took < CLOSED_WITHIN, took
    assert all(a.startswith(b"HTTP/1.1 408") for a in answers), {a[:40] for a in answers}
    assert STATS["timed_out"] - timed_out == SLOW


@pytest.mark.parametrize("http", ["httptools", "h11"])
def test_a_request_that_arrives_in_time_on_a_kept_alive_connection_is_not_cut(http: str) -> None:
    """The deadline runs per request, from its first byte: a keep-alive connection that serves several requests,
    each sent whole, over more than the deadline in all, is never cut."""
    with app_server(http) as port, httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=5) as client:
        for _ in range(4):
            assert client.post("/echo", content=b"y" * 100).json() == {"got": 100}
            time.sleep(DEADLINE / 2)


@pytest.mark.parametrize("http", ["httptools", "h11"])
def test_one_address_holds_a_bounded_number_of_connections(http: str) -> None:
    refused = STATS["refused"]
    with app_server(http, per_client=5) as port:
        held = [_open(port, SLOW_HEADERS) for _ in range(5)]
        time.sleep(0.2)
        extra = _open(port, b"")
        assert _answer(extra).startswith(b"HTTP/1.1 503")
        for s in held:
            _answer(s)
        # the held ones are gone: the address may connect again
        r = httpx.get(f"http://127.0.0.1:{port}/echo", timeout=5)
        assert r.status_code == 200
    assert STATS["refused"] - refused == 1


def _cli() -> list[str]:
    return [str(Path(sys.executable).with_name("metaclaw-plugin"))]


@contextlib.contextmanager
def cli_server(tmp_path: Path, *args: str) -> Iterator[tuple[int, str]]:
    home = tmp_path / "home"
    home.mkdir(mode=0o700, exist_ok=True)
    port = free_port()
    env = {**os.environ, "METACLAW_HOME": str(home), "METACLAW_SERVER__READ_DEADLINE": str(DEADLINE)}
    env.pop("METACLAW_CONFIG", None)
    log = tmp_path / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [*_cli(), *args, "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    try:
        until = time.monotonic() + 120
        while time.monotonic() < until:  # up: the port answers and the token is written (the socket is bound first)
            assert proc.poll() is None, log.read_text("utf-8", "replace")[-3000:]
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                if (home / "server.token").exists():
                    break
            time.sleep(0.2)
        yield port, (home / "server.token").read_text().strip()
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.mark.slow
@pytest.mark.perf
@pytest.mark.parametrize("command", [("serve",), ("mcp", "--http")], ids=["serve", "mcp-http"])
def test_the_cli_servers_close_slow_bodies_within_the_deadline(tmp_path: Path, command: tuple[str, ...]) -> None:
    """Authenticated (the token gate answers 401 as soon as the headers are in), then the body trickles."""
    path = b"/mcp" if "mcp" in command else b"/v1/feedback"
    with cli_server(tmp_path, *command) as (port, token):
        head = SLOW_BODY.replace(b"/echo", path).replace(
            b"Host: x\r\n", b"Host: x\r\nAuthorization: Bearer " + token.encode() + b"\r\n"
        )
        t0 = time.monotonic()
        slow = [_open(port, head) for _ in range(SLOW)]
        answers = [_answer(s) for s in slow]
        took = time.monotonic() - t0
        assert took < CLOSED_WITHIN + 5, took
        assert all(a.startswith(b"HTTP/1.1 408") for a in answers), {a[:40] for a in answers}
