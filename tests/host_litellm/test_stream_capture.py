"""Proxy streams are captured without a per-chunk hook (issue 28), with real LiteLLM parts.

A callback class that defines ``async_post_call_streaming_iterator_hook`` moves every stream of the proxy onto
LiteLLM's slow path (more generator layers per chunk, the served chunks kept and re-read at the end). The adapter
instead takes the response LiteLLM's stream wrapper assembles at the end of the stream, through the deferred
stream-completion slot the proxy fires before ``[DONE]``; tests/host_litellm/test_litellm_proxy.py checks the same
end to end (the turn is on disk when the client has the reply).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

pytest.importorskip("litellm.proxy.utils", reason="needs LiteLLM's proxy extra")

import litellm
import litellm.proxy.utils as proxy_utils
from litellm_support import durable_turn, wait_session

from metaclaw_litellm import MetaClawCallback
from metaclaw_litellm.adapter import _Inflight
from metaclaw_plugin import MetaClawPlugin, Settings, TurnContext


def test_the_callback_leaves_streams_on_the_proxys_fast_path(monkeypatch: pytest.MonkeyPatch):
    cb = MetaClawCallback(plugin=None, start=False)
    monkeypatch.setattr(litellm, "callbacks", [cb])
    caps = proxy_utils.ProxyLogging.callback_capabilities()
    assert not caps.has_iterator_override and not caps.has_streaming_chunk_override and not caps.iterator_overrides
    assert caps.has_pre_call_override  # the request hook is still seen


def test_an_assembled_stream_is_on_disk_when_litellm_hands_it_over(home: Path):
    plugin = MetaClawPlugin(Settings(home=home)).start()
    cb = MetaClawCallback(plugin=plugin)

    async def run() -> tuple[str, str, bool]:
        resp = await litellm.acompletion(
            model="openai/x", messages=[{"role": "user", "content": "hi"}], stream=True, mock_response="hello there"
        )
        lo = resp.logging_obj
        call_id = lo.litellm_call_id
        data = {"litellm_logging_obj": lo}
        ctx = TurnContext(session_id="stream-1", request_id=call_id)
        cb._remember(call_id, _Inflight(ctx, False, None, "proxy", time.monotonic()))
        cb._arm_stream_capture(data, call_id)
        text = "".join([c.choices[0].delta.content or "" async for c in resp])
        assert durable_turn(home, call_id) is None  # nothing per chunk: the stream is not recorded yet
        # What the proxy does after the last chunk and before it sends [DONE] (no await in between):
        proxy_utils.ProxyLogging.fire_deferred_stream_logging(data)
        on_disk = durable_turn(home, call_id) is not None
        await asyncio.sleep(0.05)  # LiteLLM's own success logging, handed back to it, runs now
        return text, call_id, on_disk

    try:
        text, call_id, on_disk = asyncio.run(run())
        assert text == "hello there" and on_disk
        rec = durable_turn(home, call_id)
        assert rec is not None and rec["session_id"] == "stream-1" and rec["error"] is None
        turn = wait_session(home, "stream-1", turns=1).turns[0]
        assert turn.response == {"role": "assistant", "content": "hello there"} and turn.usage
    finally:
        plugin.stop()


def test_a_slot_already_taken_is_left_alone(home: Path):
    """The proxy arms the slot itself when post-call guardrails run on streams: then the log events capture."""

    class Lo:
        def dispatch_success_handlers(self, *a, **k):  # pragma: no cover - never called here
            raise AssertionError

    lo = Lo()
    theirs = object()
    lo._on_deferred_stream_complete = theirs  # type: ignore[attr-defined]
    MetaClawCallback(plugin=None, start=False)._arm_stream_capture({"litellm_logging_obj": lo}, "c1")
    assert lo._on_deferred_stream_complete is theirs  # type: ignore[attr-defined]
