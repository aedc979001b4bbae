"""The plugin's own calls to the host's model give way to the host's traffic (``learning.give_way``).

In-process, as an SDK caller runs it: ``litellm.acompletion`` with the callback, against a local upstream that
holds a host request until the test releases it. The host's model is the one the first SDK call offers; the
plugin's call is the learning client's, as the judge makes it. Ordering comes from events and from the gate's own
counts, never from sleeps: a held request keeps the host busy for as long as the test wants.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm
from litellm_support import only_callback
from waiting import wait_for

from metaclaw_litellm import MetaClawCallback
from metaclaw_plugin import MetaClawPlugin, Settings
from metaclaw_plugin.devtools.upstream import Upstream
from metaclaw_plugin.learning.llm import LLMClient

MODEL = "openai/stub-model"
HOLD = "HOLD-THIS-REQUEST"
OWN = "plugin-own-call"


@dataclass
class Held:
    """The upstream's script: a request carrying HOLD waits for ``release``; the plugin's call notes how many host
    requests the plugin counted in flight when it arrived."""

    plugin: MetaClawPlugin | None = None
    held: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    own_arrivals: list[int] = field(default_factory=list)

    def __call__(self, body: dict[str, Any]) -> str:
        text = json.dumps(body.get("messages", ""))
        if OWN in text:
            assert self.plugin is not None
            self.own_arrivals.append(self.plugin.host_models.give_way.traffic.in_flight())
            return "plugin reply"
        if HOLD in text:
            self.held.set()
            self.release.wait(120)
        return "host reply"


@pytest.fixture
def held() -> Iterator[Held]:
    h = Held()
    yield h
    h.release.set()  # a test that failed midway leaves no request hanging


@pytest.fixture
def upstream(held: Held) -> Iterator[Upstream]:
    up = Upstream(script=held).start()
    yield up
    up.stop()


@contextmanager
def _plugin(home: Path, held: Held, monkeypatch: pytest.MonkeyPatch, **learning: Any) -> Iterator[MetaClawPlugin]:
    """The plugin on the host's model, with nothing of its own calling it (the test's client is the only caller);
    stopped on leaving."""
    monkeypatch.delenv("METACLAW_LEARNING__MODEL", raising=False)
    s = Settings(
        home=home,
        learning={"model": "host", **learning},
        reward={"enabled": False},
        evolution={"enabled": False},
        memory={"enabled": False},
    )
    held.plugin = p = MetaClawPlugin(s).start()
    try:
        yield p
    finally:
        p.stop()


def _ask(upstream: Upstream, text: str) -> str:
    async def go() -> Any:
        return await litellm.acompletion(
            model=MODEL,
            messages=[{"role": "user", "content": text}],
            api_base=upstream.url,
            api_key="not-needed",
            num_retries=0,
        )

    return str(asyncio.run(go()).choices[0].message.content)


class Background:
    """A call on a thread of the test's, its result or error kept."""

    def __init__(self, fn: Any) -> None:
        self.result: Any = None
        self.error: BaseException | None = None

        def run() -> None:
            try:
                self.result = fn()
            except BaseException as e:
                self.error = e

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def join(self) -> Any:
        self.thread.join(60)
        assert not self.thread.is_alive(), "the call did not return"
        if self.error is not None:
            raise self.error
        return self.result


@contextmanager
def _busy_host(p: MetaClawPlugin, upstream: Upstream, held: Held) -> Iterator[Background]:
    """The plugin's callback on, the host's model offered by a first request, and a second request held in flight
    until the test releases it (at the latest on leaving)."""
    with only_callback(MetaClawCallback(p)):
        assert _ask(upstream, "hello") == "host reply"
        assert p.host_models.get() is not None and p.host_models.give_way.traffic.in_flight() == 0
        a = Background(lambda: _ask(upstream, f"{HOLD}: a long answer"))
        assert held.held.wait(60)
        assert p.host_models.give_way.traffic.in_flight() == 1
        yield a
        held.release.set()
        assert a.join() == "host reply"


def _own_call(p: MetaClawPlugin) -> Any:
    client = LLMClient("judge", model=None, host=p.host_models)
    return client.complete([{"role": "system", "content": OWN}, {"role": "user", "content": "score this"}]).text


def test_the_plugins_call_waits_for_the_hosts_request_and_the_host_never_waits(
    home: Path, held: Held, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _plugin(home, held, monkeypatch, give_way_quiet_s=0.05, give_way_max_wait_s=600) as p:
        gw = p.host_models.give_way
        with _busy_host(p, upstream, held) as a:
            own = Background(lambda: _own_call(p))
            wait_for(lambda: gw.counts.waiting == 1, what="the plugin's call waiting")
            # a host request arriving now is not held up by the waiting call: it is answered, and the call waits on
            assert _ask(upstream, "a second user's question") == "host reply"
            assert gw.counts.waiting == 1 and held.own_arrivals == []
            assert gw.traffic.in_flight() == 1
            held.release.set()
            assert a.join() == "host reply"
            assert own.join() == "plugin reply"
        assert held.own_arrivals == [0]  # it reached the upstream once the host had nothing in flight
        st = p.status()["host_model"]["give_way"]
        assert (st["calls"], st["waited"], st["went_at_bound"], st["waiting"]) == (1, 1, 0, 0)
        assert st["waited_s"] > 0 and st["host_in_flight"] == 0
        p.flush()
        assert len(p.store.list_sessions(limit=50)) == 3  # the host's three requests; the plugin's call is none


def test_on_a_host_that_never_goes_quiet_the_call_goes_after_the_bound(
    home: Path, held: Held, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _plugin(home, held, monkeypatch, give_way_max_wait_s=0.3) as p, _busy_host(p, upstream, held) as a:
        assert _own_call(p) == "plugin reply"  # the host is still busy: the bound let it go
        assert held.own_arrivals == [1] and a.thread.is_alive()
        st = p.host_models.give_way.status()
        assert (st["calls"], st["waited"], st["went_at_bound"]) == (1, 1, 1)
        assert st["waited_s"] >= 0.3  # the bound was kept


def test_a_waiting_call_goes_when_the_plugin_stops_and_off_means_at_once(
    home: Path, held: Held, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    # (leaving, the held request's late answer restarts the stopped plugin to record its turn, as a host's does)
    with _plugin(home, held, monkeypatch, give_way_max_wait_s=600) as p, _busy_host(p, upstream, held):
        gw = p.host_models.give_way
        own = Background(lambda: _own_call(p))
        wait_for(lambda: gw.counts.waiting == 1, what="the plugin's call waiting")
        p.stop()  # no stop waits for the host: the call goes, as it would have without the gate
        assert own.join() == "plugin reply"
        assert held.own_arrivals == [1] and (gw.counts.calls, gw.counts.went_at_bound) == (1, 0)
    held.release.clear()
    held.held.clear()
    held.own_arrivals.clear()
    with _plugin(home, held, monkeypatch, give_way=False) as off, _busy_host(off, upstream, held):
        assert _own_call(off) == "plugin reply"
        assert held.own_arrivals == [1]  # at once, beside the host's request
        assert off.host_models.give_way.status()["waited"] == 0
