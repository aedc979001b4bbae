"""The local upstream's paced streams: chunks really spaced out (first byte early, the last about a second
later), the text intact, and /pace switching the aiohttp one between paced and instant while it runs."""

from __future__ import annotations

import http.client
import json
import time
from urllib.parse import urlparse

import pytest

from metaclaw_plugin.devtools.upstream import PACED_CHUNKS, PACED_DELAY, Upstream

pytestmark = pytest.mark.perf  # pacing is seen only on the clock: every test here times a stream

REPLY = "A short answer of about two hundred characters, streamed the way a model streams its tokens. " * 2


def _stream(url: str) -> tuple[float, float, list[str]]:
    """(time to the first byte, total time, content pieces) of one streamed completion, seconds."""
    u = urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    body = json.dumps({"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]})
    t0 = time.perf_counter()
    conn.request("POST", u.path + "/chat/completions", body, {"Content-Type": "application/json"})
    resp = conn.getresponse()
    first = None
    raw = b""
    while True:
        chunk = resp.read1(65536)
        if not chunk:
            break
        if first is None:
            first = time.perf_counter() - t0
        raw += chunk
    total = time.perf_counter() - t0
    conn.close()
    events = [json.loads(e[6:]) for e in raw.decode().split("\n\n") if e.startswith("data: {")]
    pieces = [e["choices"][0]["delta"]["content"] for e in events if e["choices"][0]["delta"].get("content")]
    assert first is not None
    return first, total, pieces


def _aio():
    pytest.importorskip("aiohttp")
    from metaclaw_plugin.devtools.aioupstream import AioUpstream

    return AioUpstream


@pytest.mark.parametrize("server", ["stdlib", "aiohttp"])
def test_paced_stream_spaces_its_chunks(server: str) -> None:
    cls = Upstream if server == "stdlib" else _aio()
    assert (PACED_CHUNKS, PACED_DELAY) == (50, 0.02)
    with cls(default_reply=REPLY, stream_chunks=PACED_CHUNKS) as up:
        first, total, pieces = _stream(up.url)
    assert len(pieces) == 50 and "".join(pieces) == REPLY
    # 49 gaps of 20 ms: about a second in all, while the first byte comes at once
    assert 0.9 <= total < 5.0
    assert first < 0.25 * total, (first, total)


def test_pace_switches_the_aiohttp_upstream_while_it_runs() -> None:
    import urllib.request

    with _aio()(default_reply=REPLY) as up:
        _, instant, pieces = _stream(up.url)
        assert instant < 0.5 and "".join(pieces) == REPLY and len(pieces) == -(-len(REPLY) // 16)
        base = f"http://{up.host}:{up.port}"

        def pace(body: dict) -> int:
            req = urllib.request.Request(base + "/pace", json.dumps(body).encode(), method="POST")
            try:
                with urllib.request.urlopen(req, timeout=5) as r:
                    return r.status
            except urllib.error.HTTPError as e:
                return e.code

        assert pace({"chunks": 10, "delay_ms": 50}) == 200
        first, total, pieces = _stream(up.url)
        assert len(pieces) == 10 and total >= 0.45 and first < 0.2 * total
        assert pace({"chunks": -1}) == 400 and pace({"chunks": "x"}) == 400
        assert pace({"chunks": 0}) == 200
        assert _stream(up.url)[1] < 0.5


def _whole(url: str) -> float:
    """Seconds for one non-streamed completion."""
    u = urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    t0 = time.perf_counter()
    conn.request("POST", u.path + "/chat/completions", body, {"Content-Type": "application/json"})
    data = json.loads(conn.getresponse().read())
    conn.close()
    assert data["choices"][0]["message"]["content"] == REPLY
    return time.perf_counter() - t0


@pytest.mark.parametrize("server", ["stdlib", "aiohttp"])
def test_a_paced_upstream_takes_as_long_to_answer_without_streaming(server: str) -> None:
    """A model generates for the same time whether it streams or not: a proxy that never streams upstream (the
    reference) must not look faster in the paced mode because its whole answer came at once."""
    cls = Upstream if server == "stdlib" else _aio()
    with cls(default_reply=REPLY, stream_chunks=10, chunk_delay=0.05) as up:
        assert _whole(up.url) >= 0.45
    with cls(default_reply=REPLY) as up:
        assert _whole(up.url) < 0.4
