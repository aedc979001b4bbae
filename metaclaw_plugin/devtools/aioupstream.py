"""An aiohttp variant of :mod:`metaclaw_plugin.devtools.upstream`, for load tests.

Same API as :class:`~metaclaw_plugin.devtools.upstream.Upstream` (``start``/``stop``/``url``/``clear``,
``replies``, ``script``, ``requests``, ``headers``, ``record``, context manager), but one event loop
instead of a thread per connection, so 32 concurrent keep-alive clients cost it little CPU: the
benchmark should measure the proxy in front of it, not the stub.

``POST /pace`` (``{"chunks": 50, "delay_ms": 20}``; ``{"chunks": 0}`` for instant) switches how streams
are paced (see :class:`~metaclaw_plugin.devtools.upstream.Upstream`) while it runs, so one benchmark run can
measure both. It also answers ``GET /stats``: request counts, and how many requests carried an injected skill
block (ours, ``<metaclaw-skills>``, or the reference proxy's ``## Active Skills``), so a benchmark
can check that the target under test really injected. Streaming keeps the connection alive
(unlike the stdlib stub), as a real provider does.

Run it alone: ``python -m metaclaw_plugin.devtools.aioupstream --port 0`` prints ``PORT <n>``.
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass
from typing import Any

from ..infra.service import Service
from .upstream import Upstream, generation_time, render_reply
from .upstream import main as upstream_main

MARKERS = {"metaclaw": "<metaclaw-skills>", "reference": "## Active Skills"}


@dataclass
class AioUpstream(Upstream):
    """Same fields and reply logic as :class:`Upstream`; only the server differs."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: Any = None
        self.stats: dict[str, Any] = {
            "requests": 0,
            "stream": 0,
            "injected": {k: 0 for k in MARKERS},
            "max_system_chars": 0,
        }

    # Lifecycle ------------------------------------------------------------------------------
    def start(self) -> AioUpstream:
        ready = threading.Event()
        error: list[BaseException] = []

        def run(stop: threading.Event) -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._start_server())
            except BaseException as e:  # pragma: no cover - reported to the caller
                error.append(e)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._runner.cleanup())
            loop.close()

        def wake() -> None:
            loop = self._loop
            if loop is not None and loop.is_running():
                loop.call_soon_threadsafe(loop.stop)

        self._service = Service("aioupstream", run, wake=wake, retry=None)
        self._service.start()
        ready.wait(30)
        if error:
            raise error[0]
        return self

    async def _start_server(self) -> None:
        from aiohttp import web

        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/models", self._models)
        app.router.add_get("/health", self._health)
        app.router.add_get("/v1/health", self._health)
        app.router.add_get("/stats", self._stats)
        app.router.add_post("/pace", self._pace)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, backlog=512, reuse_address=True)
        await site.start()
        sock = site._server.sockets[0]  # type: ignore[union-attr]
        self.port = sock.getsockname()[1]

    def stop(self) -> None:
        if self._service is not None:
            self._service.stop(10)
            self._service = None
        self._loop = None

    # Handlers -------------------------------------------------------------------------------
    async def _health(self, request: Any) -> Any:
        from aiohttp import web

        return web.json_response({"status": "ok"})

    async def _models(self, request: Any) -> Any:
        from aiohttp import web

        return web.json_response(
            {"object": "list", "data": [{"id": self.model, "object": "model", "owned_by": "stub"}]}
        )

    async def _stats(self, request: Any) -> Any:
        from aiohttp import web

        with self._lock:
            data = json.loads(json.dumps(self.stats))
        return web.json_response(data)

    async def _pace(self, request: Any) -> Any:
        from aiohttp import web

        try:
            data = await request.json()
            chunks, delay = int(data.get("chunks", 0)), float(data.get("delay_ms", 20.0)) / 1000.0
        except (ValueError, TypeError, AttributeError):
            return web.json_response({"error": {"message": "expected {chunks, delay_ms}"}}, status=400)
        if chunks < 0 or delay < 0:
            return web.json_response({"error": {"message": "chunks and delay_ms must be >= 0"}}, status=400)
        self.stream_chunks, self.chunk_delay = chunks, delay
        return web.json_response({"chunks": chunks, "delay_ms": delay * 1000.0})

    def _count_request(self, body: dict[str, Any]) -> None:
        msgs = body.get("messages") or []
        system = ""
        if msgs and isinstance(msgs[0], dict) and msgs[0].get("role") in ("system", "developer"):
            c = msgs[0].get("content")
            system = c if isinstance(c, str) else json.dumps(c)
        with self._lock:
            st = self.stats
            st["requests"] += 1
            if body.get("stream"):
                st["stream"] += 1
            for k, marker in MARKERS.items():
                if marker in system:
                    st["injected"][k] += 1
            st["max_system_chars"] = max(st["max_system_chars"], len(system))

    async def _chat(self, request: Any) -> Any:
        from aiohttp import web

        raw = await request.read()
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return web.json_response({"error": {"message": "bad json", "type": "invalid_request_error"}}, status=400)
        if self.record:
            with self._lock:
                self.headers.append({k.lower(): v for k, v in request.headers.items()})
        self._count_request(body)
        reply = self.next_reply(body)
        delay = reply.get("delay", self.delay)
        if delay:
            await asyncio.sleep(delay)
        pace, gap = self.stream_chunks, self.chunk_delay
        status, payload = render_reply(body, reply, self.model, chunks=pace)
        if isinstance(payload, bytes):
            if status == 200:
                await asyncio.sleep(generation_time(pace, gap))
            return web.Response(status=status, body=payload, content_type="application/json")
        resp = web.StreamResponse(
            status=200, headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await resp.prepare(request)
        for i, event in enumerate(payload):  # one write per event, as a provider streams
            if pace and 1 < i <= pace:  # between content chunks (the first goes with the role event)
                await asyncio.sleep(gap)
            await resp.write(event)
        await resp.write_eof()
        return resp


def main(argv: list[str] | None = None) -> None:
    upstream_main(argv, AioUpstream)


if __name__ == "__main__":
    main()
