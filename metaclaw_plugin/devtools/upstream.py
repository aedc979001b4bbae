"""A local OpenAI-compatible upstream for tests, benchmarks and the demo.

It stands in for the remote LLM (the one part the project may replace): ``POST /v1/chat/completions``,
Anthropic's ``POST /v1/messages`` and OpenAI's ``POST /v1/responses`` answer JSON or SSE (``stream: true``) in
their own wire formats (:mod:`.wire`), ``GET /v1/models`` lists its model, and every request is recorded (its
path in ``paths``). Replies come from a script (a list of canned replies, or a function of the request), so
tests can play an evolver or a judge.

Streams are instant by default (every event written at once). With ``stream_chunks`` > 0 the upstream
paces like a model: the reply's text goes out in that many content chunks, ``chunk_delay`` seconds
apart (``--paced``: 50 chunks 20 ms apart, the first byte at once, the last after about a second), so that a benchmark can see time to first byte apart from total time. Built on the standard library only (threaded HTTP server with
TCP_NODELAY), so it runs anywhere the core runs.

Run it alone: ``python -m metaclaw_plugin.devtools.upstream --port 0`` prints ``PORT <n>``.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..infra.service import Service
from ..text import approx_tokens
from .wire import count_tokens, render_messages, render_responses

PACED_CHUNKS, PACED_DELAY = 50, 0.02  # the paced mode's defaults: about a second for a short answer
Reply = dict[str, Any]  # {"content": str, "tool_calls": [...], "status": int, "error": str, "delay": float}


def generation_time(chunks: int, delay: float) -> float:
    """How long a paced answer takes to generate: the gaps between its content chunks. A non-streamed answer
    waits this long too, as a model's does (so a proxy that never streams upstream is not flattered)."""
    return max(chunks - 1, 0) * delay


Script = Callable[[dict[str, Any]], Reply | str]


@dataclass
class Upstream:
    host: str = "127.0.0.1"
    port: int = 0
    model: str = "stub-model"
    delay: float = 0.0
    default_reply: str = "OK."
    script: Script | None = None
    replies: list[Reply | str] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # the route of each recorded request: chat, messages, responses
    record: bool = True
    number_replies: bool = False  # "[n] " before each default reply: no two replies alike, as with a real model
    stream_chunks: int = 0  # 0: instant streams; N: N content chunks, chunk_delay apart (a model's pace)
    chunk_delay: float = PACED_DELAY

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._served = 0
        self._server: ThreadingHTTPServer | None = None
        self._service: Service | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> Upstream:
        upstream = self

        class Handler(_Handler):
            owner = upstream

        server = _Server((self.host, self.port), Handler)
        self.port = server.server_address[1]
        self._server = server
        self._service = Service(
            "upstream", lambda stop: server.serve_forever(poll_interval=0.1), wake=server.shutdown, retry=None
        )
        self._service.start()
        return self

    def stop(self) -> None:
        if self._service is not None:
            self._service.stop()  # its wake is the server's shutdown
            self._service = None
        if self._server is not None:
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Upstream:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()
            self.headers.clear()
            self.paths.clear()

    def next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            if self.record:
                self.requests.append(body)
            queued = self.replies.pop(0) if self.replies else None
            self._served += 1
            n = self._served
        reply: Reply | str | None = queued
        if reply is None and self.script is not None:
            reply = self.script(body)
        if reply is None:
            reply = f"[{n}] {self.default_reply}" if self.number_replies else self.default_reply
        return {"content": reply} if isinstance(reply, str) else reply


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256

    def server_bind(self) -> None:
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        super().server_bind()


class _Handler(BaseHTTPRequestHandler):
    owner: Upstream
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            data = {"object": "list", "data": [{"id": self.owner.model, "object": "model", "owned_by": "stub"}]}
            self._send(200, json.dumps(data).encode())
        elif self.path.rstrip("/") in ("/health", "/v1/health"):
            self._send(200, b'{"status":"ok"}')
        else:
            self._send(404, b'{"error":{"message":"not found"}}')

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0].rstrip("/")
        route = next((name for suffix, name in ROUTES if path.endswith(suffix)), None)
        if route is None:
            self._send(404, b'{"error":{"message":"not found"}}')
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send(400, b'{"error":{"message":"bad json","type":"invalid_request_error"}}')
            return
        if route == "count_tokens":  # Anthropic's token counter: answered, not a turn
            self._send(200, count_tokens(body))
            return
        if self.owner.record:
            with self.owner._lock:
                self.owner.headers.append({k.lower(): v for k, v in self.headers.items()})
                self.owner.paths.append(route)
        reply = self.owner.next_reply(body)
        delay = reply.get("delay", self.owner.delay)
        if delay:
            time.sleep(delay)
        pace = self.owner.stream_chunks
        status, payload = RENDER[route](body, reply, self.owner.model, chunks=pace)
        if isinstance(payload, bytes):
            if status == 200:
                time.sleep(generation_time(pace, self.owner.chunk_delay))
            self._send(status, payload)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        for i, event in enumerate(payload):
            if pace and 1 < i <= pace:  # between content chunks (the first goes with the role event)
                time.sleep(self.owner.chunk_delay)
            self.wfile.write(event)
            self.wfile.flush()


# path suffix -> route; the longest suffixes first
ROUTES = (
    ("/messages/count_tokens", "count_tokens"),
    ("/chat/completions", "chat"),
    ("/messages", "messages"),
    ("/responses", "responses"),
)


def render_reply(
    body: dict[str, Any], reply: Reply, default_model: str, chunks: int = 0
) -> tuple[int, bytes | list[bytes]]:
    """The wire form of one scripted reply: (status, JSON body) or (200, [SSE events]) for ``stream: true``.
    Shared by both upstream servers so that they answer byte for byte alike. A stream carries the text in
    16-character pieces, or with ``chunks`` > 0 in exactly that many (events 1..chunks, after the role
    event 0), which is what a paced server spaces out."""
    status = int(reply.get("status", 200))
    if status != 200:
        err = {"error": {"message": reply.get("error", "upstream error"), "type": "server_error", "code": status}}
        return status, json.dumps(err).encode()
    content = reply.get("content")
    tool_calls = reply.get("tool_calls") or []
    model = body.get("model") or default_model
    usage = {"prompt_tokens": _count(body), "completion_tokens": max(1, approx_tokens(str(content or "")))}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    cid = "chatcmpl-" + uuid.uuid4().hex[:12]
    created = int(time.time())
    finish = "tool_calls" if tool_calls else "stop"
    calls = [_tool_call(i, tc) for i, tc in enumerate(tool_calls)]
    if not body.get("stream"):
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = calls
        data = {
            "id": cid,
            "object": "chat.completion",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }
        return 200, json.dumps(data).encode()

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

    text = str(content or "")
    events = [chunk({"role": "assistant", "content": ""})]
    if chunks > 0:
        cuts = [round(i * len(text) / chunks) for i in range(chunks + 1)]
        events += [chunk({"content": text[cuts[i] : cuts[i + 1]]}) for i in range(chunks)]
    else:
        events += [chunk({"content": text[i : i + 16]}) for i in range(0, len(text), 16)]
    events += [chunk({"tool_calls": [{**c, "index": i}]}) for i, c in enumerate(calls)]
    events += [chunk({}, finish, usage=usage), b"data: [DONE]\n\n"]
    return 200, events


RENDER = {"chat": render_reply, "messages": render_messages, "responses": render_responses}


def _tool_call(i: int, tc: dict[str, Any]) -> dict[str, Any]:
    args = tc.get("arguments", {})
    return {
        "id": tc.get("id") or f"call_{i}_{uuid.uuid4().hex[:6]}",
        "type": "function",
        "function": {"name": tc["name"], "arguments": args if isinstance(args, str) else json.dumps(args)},
    }


def _count(body: dict[str, Any]) -> int:
    return max(1, approx_tokens(json.dumps(body.get("messages", []))))


def main(argv: list[str] | None = None, server: type[Upstream] = Upstream) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--reply", default="OK.")
    ap.add_argument("--delay", type=float, default=0.0)
    ap.add_argument("--number-replies", action="store_true", help="Prefix each default reply with its number.")
    ap.add_argument(
        "--paced", action="store_true", help=f"Pace streams: {PACED_CHUNKS} chunks, {PACED_DELAY * 1000:.0f} ms apart."
    )
    ap.add_argument(
        "--stream-chunks", type=int, default=None, help="Pace streams: this many content chunks (0: instant)."
    )
    ap.add_argument(
        "--chunk-delay-ms", type=float, default=PACED_DELAY * 1000, help="Milliseconds between paced chunks."
    )
    args = ap.parse_args(argv)
    up = server(
        host=args.host,
        port=args.port,
        default_reply=args.reply,
        delay=args.delay,
        record=False,
        number_replies=args.number_replies,
        stream_chunks=args.stream_chunks if args.stream_chunks is not None else (PACED_CHUNKS if args.paced else 0),
        chunk_delay=args.chunk_delay_ms / 1000.0,
    ).start()
    print(f"PORT {up.port}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        up.stop()
        sys.exit(0)


if __name__ == "__main__":
    main()
