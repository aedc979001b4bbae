"""Connections of the HTTP servers (``serve``, ``mcp --http``): a read deadline and a cap per client.

uvicorn waits as long as a client takes to send its headers and body, so a client that sends them a byte at a time
holds a connection, a task and its buffers for as long as it likes, and a few hundred such clients starve the server.
Here every request must arrive whole (request line, headers and body) within ``deadline`` seconds of its first
byte, else it gets a 408 and its connection is closed; and one address may hold at most ``per_client`` connections
at once (the next gets a 503 and is closed). Both are counted (:data:`STATS`).

This is the one place that reaches into uvicorn's HTTP protocols (``httptools`` and ``h11``): it subclasses the
protocol uvicorn would pick and uses its documented parser callbacks (``on_message_begin``/``on_message_complete``)
and h11's connection state. ``tests/core/test_slow_clients.py`` fails loudly when a uvicorn release changes them.
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections import Counter
from typing import Any

READ_DEADLINE = 10.0  # seconds a request may take to arrive whole, from its first byte
PER_CLIENT = 64  # connections one address may hold open at once
STATS: Counter[str] = Counter()  # "timed_out", "refused": for status and tests


def _reply(status: str, message: str) -> bytes:
    body = b'{"error": "' + message.encode() + b'"}'
    head = f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {len(body)}"
    return head.encode() + b"\r\n\r\n" + body


_TIMEOUT = _reply("408 Request Timeout", "the request did not arrive within the deadline")
_BUSY = _reply("503 Service Unavailable", "too many connections from this address")


def guarded_protocol(
    http: str = "auto", *, deadline: float = READ_DEADLINE, per_client: int = PER_CLIENT
) -> type[asyncio.Protocol]:
    """The uvicorn HTTP protocol class for ``http`` ("auto": httptools when installed, else h11), with the deadline
    and the cap. Pass it as ``uvicorn.Config(http=...)``. Each call makes a class with its own count of connections."""
    use_httptools = http == "httptools" or (http == "auto" and importlib.util.find_spec("httptools") is not None)
    if use_httptools:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as base
    else:
        from uvicorn.protocols.http.h11_impl import H11Protocol as base  # type: ignore[assignment]
    open_by: Counter[str] = Counter()

    class Guarded(base):
        _mc_timer: asyncio.TimerHandle | None = None
        _mc_client = ""
        _mc_counted = False

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            peer = transport.get_extra_info("peername")
            self._mc_client = str(peer[0]) if isinstance(peer, tuple) and peer else "?"
            open_by[self._mc_client] += 1
            self._mc_counted = True
            if open_by[self._mc_client] > per_client:
                STATS["refused"] += 1
                self._mc_close(_BUSY)
                return
            self._mc_arm()  # the first request's headers are on their way

        def connection_lost(self, exc: Exception | None) -> None:
            self._mc_disarm()
            if self._mc_counted:
                self._mc_counted = False
                open_by[self._mc_client] -= 1
                if open_by[self._mc_client] <= 0:
                    del open_by[self._mc_client]
            super().connection_lost(exc)

        # httptools: a request begins and ends
        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._mc_arm()

        def on_message_complete(self) -> None:
            super().on_message_complete()
            self._mc_disarm()

        # h11: the connection's state tells whether the request is in
        def data_received(self, data: bytes) -> None:
            if not use_httptools and data:
                self._mc_arm()
            super().data_received(data)
            if not use_httptools:
                import h11

                state = self.conn.their_state  # type: ignore[attr-defined]  # h11's protocol has a conn
                if state in (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR):
                    self._mc_disarm()

        def _mc_arm(self) -> None:
            if self._mc_timer is None:
                self._mc_timer = self.loop.call_later(deadline, self._mc_expire)

        def _mc_disarm(self) -> None:
            if self._mc_timer is not None:
                self._mc_timer.cancel()
                self._mc_timer = None

        def _mc_expire(self) -> None:
            self._mc_timer = None
            if self.transport.is_closing():
                return
            STATS["timed_out"] += 1
            cycle = getattr(self, "cycle", None)
            started = cycle is not None and getattr(cycle, "response_started", False)
            self._mc_close(None if started else _TIMEOUT)

        def _mc_close(self, reply: bytes | None) -> None:
            cycle = getattr(self, "cycle", None)
            if cycle is not None:  # the app, waiting for the rest of the body, hears the client left
                cycle.disconnected = True
                message_event = getattr(cycle, "message_event", None)
                if message_event is not None:
                    message_event.set()
            try:
                if reply is not None:
                    self.transport.write(reply)
            finally:
                self.transport.close()

    Guarded.__name__ = Guarded.__qualname__ = f"Guarded{base.__name__}"
    return Guarded
