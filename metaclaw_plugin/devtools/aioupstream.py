"""An aiohttp variant of :mod:`metaclaw_plugin.devtools.upstream`, for load tests.

Same API as :class:`~metaclaw_plugin.devtools.upstream.Upstream` (``start``/``stop``/``url``/``clear``,
``replies``, ``script``, ``requests``, ``headers``, ``record``, context manager), but one event loop
instead of a thread per connection, so 32 concurrent keep-alive clients cost it little CPU: the
benchmark should measure the proxy in front of it, not the stub.

It also answers ``GET /stats``: request counts, and how many requests carried an injected skill
block (ours, ``<metaclaw-skills>``, or the reference proxy's ``## Active Skills``), so a benchmark
can check that the target under test really injected. Streaming keeps the connection alive
(unlike the stdlib stub), as a real provider does.

Run it alone: ``python -m metaclaw_plugin.devtools.aioupstream --port 0`` prints ``PORT <n>``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

from .upstream import Upstream, _count, _tool_call

MARKERS = {"metaclaw": "<metaclaw-skills>", "reference": "## Active Skills"}


@dataclass
class AioUpstream(Upstream):
    """Same fields and reply logic as :class:`Upstream`; only the server differs."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: Any = None
        self.stats: dict[str, Any] = {"requests": 0, "stream": 0, "injected": {k: 0 for k in MARKERS}, "max_system_chars": 0}

    # Lifecycle ------------------------------------------------------------------------------
    def start(self) -> "AioUpstream":
        ready = threading.Event()
        error: list[BaseException] = []

        def run() -> None:
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

        self._thread = threading.Thread(target=run, name="aioupstream", daemon=True)
        self._thread.start()
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
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, backlog=512, reuse_address=True)
        await site.start()
        sock = site._server.sockets[0]  # type: ignore[union-attr]
        self.port = sock.getsockname()[1]

    def stop(self) -> None:
        loop = self._loop
        if loop is not None and loop.is_running():
            loop.call_soon_threadsafe(loop.stop)
            if self._thread is not None:
                self._thread.join(10)
        self._loop = None

    # Handlers -------------------------------------------------------------------------------
    async def _health(self, request: Any) -> Any:
        from aiohttp import web

        return web.json_response({"status": "ok"})

    async def _models(self, request: Any) -> Any:
        from aiohttp import web

        return web.json_response({"object": "list", "data": [{"id": self.model, "object": "model", "owned_by": "stub"}]})

    async def _stats(self, request: Any) -> Any:
        from aiohttp import web

        with self._lock:
            data = json.loads(json.dumps(self.stats))
        return web.json_response(data)

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
        status = int(reply.get("status", 200))
        if status != 200:
            err = {"error": {"message": reply.get("error", "upstream error"), "type": "server_error", "code": status}}
            return web.json_response(err, status=status)
        content = reply.get("content")
        tool_calls = reply.get("tool_calls")
        model = body.get("model") or self.model
        usage = {"prompt_tokens": _count(body), "completion_tokens": max(1, len(str(content or "")) // 4)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        cid = "chatcmpl-" + uuid.uuid4().hex[:12]
        created = int(time.time())
        finish = "tool_calls" if tool_calls else "stop"
        if body.get("stream"):
            return await self._stream(request, cid, created, model, content, tool_calls, finish, usage)
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if tool_calls:
            message["tool_calls"] = [_tool_call(i, tc) for i, tc in enumerate(tool_calls)]
        data = {
            "id": cid,
            "object": "chat.completion",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }
        return web.Response(body=json.dumps(data).encode(), content_type="application/json")

    async def _stream(self, request: Any, cid: str, created: int, model: str, content: Any, tool_calls: Any,
                      finish: str, usage: dict[str, Any]) -> Any:
        from aiohttp import web

        resp = web.StreamResponse(status=200, headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await resp.prepare(request)

        def chunk(delta: dict[str, Any], finish_reason: str | None = None, **extra: Any) -> bytes:
            data = {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
                **extra,
            }
            return f"data: {json.dumps(data)}\n\n".encode()

        parts = [chunk({"role": "assistant", "content": ""})]
        text = str(content or "")
        for i in range(0, len(text), 16):
            parts.append(chunk({"content": text[i : i + 16]}))
        for i, tc in enumerate(tool_calls or []):
            parts.append(chunk({"tool_calls": [{**_tool_call(i, tc), "index": i}]}))
        parts.append(chunk({}, finish, usage=usage))
        parts.append(b"data: [DONE]\n\n")
        # One write per chunk, as a provider streams; the client sees the first bytes early.
        for p in parts:
            await resp.write(p)
        await resp.write_eof()
        return resp


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--reply", default="OK.")
    ap.add_argument("--delay", type=float, default=0.0)
    args = ap.parse_args(argv)
    up = AioUpstream(host=args.host, port=args.port, default_reply=args.reply, delay=args.delay, record=False).start()
    print(f"PORT {up.port}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        up.stop()
        sys.exit(0)


if __name__ == "__main__":
    main()
