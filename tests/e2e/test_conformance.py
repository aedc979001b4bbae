"""The adapter conformance suite: one set of behaviours, asserted the same way against every host.

In the manner of OpenTelemetry's shared test cases: :class:`Conformance` holds the cases; each host's class
(``Test<Host>Conformance``) gives it a driver (tests/support/conformance_drivers.py) through the ``driver`` fixture. The
behaviours: injection of a relevant skill (and of nothing for an unrelated task), capture of the turn, streaming,
fail-open (the plugin raising costs the request nothing), pass-through (no plugin: the request goes out
unchanged), session and user ids (a session belongs to one user), side turns (no skills, recorded as side).

A host that lacks a behaviour declares it (``Driver.supports``); :meth:`Conformance.__init_subclass__` then drops
that case from the host's class, so nothing is skipped. A capture-only host (LangChain's callback handler) has the
injection cases too, with the alternative it documents: the model sees the request unchanged.

docs/adding-a-host.md walks a new adapter through this suite. Every host's backend starts once per module.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from conformance_drivers import (
    BEHAVIOURS,
    BLOCK_OPEN,
    FAULTS_MODULE,
    MATCHING,
    MATCHING_SKILL,
    UNRELATED,
    Driver,
    LangChainHandlerDriver,
    LangChainMiddlewareDriver,
    LangChainRunnableDriver,
    LiteLLMProxyDriver,
    LiteLLMSDKDriver,
    McpDriver,
    OpenClawSidecarDriver,
    scripted_reply,
)
from langchain_support import seed_skills

from metaclaw_plugin import MetaClawPlugin, Settings

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]  # slow: starts a LiteLLM proxy


def _sid(label: str) -> str:
    return f"conf-{label}-{uuid.uuid4().hex[:8]}"


def _user(label: str) -> str:
    return f"{label}-{uuid.uuid4().hex[:6]}"


def needs(behaviour: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Marks a case as one that only hosts with ``behaviour`` run."""
    assert behaviour in BEHAVIOURS, behaviour

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.needs = behaviour  # type: ignore[attr-defined]
        return fn

    return mark


class Conformance:
    """The shared cases. A subclass sets ``driver_class`` and provides a ``driver`` fixture."""

    driver_class: type[Driver] = Driver

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in dir(Conformance):
            case = getattr(Conformance, name)
            behaviour = getattr(case, "needs", None)
            if behaviour is not None and behaviour not in cls.driver_class.supports:
                setattr(cls, name, None)  # not collected: this host has no such behaviour

    # Injection ------------------------------------------------------------------------------------------------
    def test_conformance_injects_a_relevant_skill(self, driver: Driver) -> None:
        ex = driver.send(MATCHING, session_id=_sid("inject"))
        assert ex.reply == ex.expected, ex
        if "inject" in driver.supports:
            assert ex.model_saw.count(BLOCK_OPEN) == 1, ex
            assert MATCHING_SKILL in ex.model_saw, ex
        else:  # capture only: the request reaches the model as the caller sent it
            assert BLOCK_OPEN not in ex.model_saw, ex

    def test_conformance_injects_nothing_for_an_unrelated_task(self, driver: Driver) -> None:
        ex = driver.send(UNRELATED, session_id=_sid("unrelated"))
        assert ex.reply == ex.expected, ex
        assert BLOCK_OPEN not in ex.model_saw, ex

    # Capture --------------------------------------------------------------------------------------------------
    @needs("capture")
    def test_conformance_captures_the_turn(self, driver: Driver) -> None:
        sid = _sid("capture")
        ex = driver.send(MATCHING, session_id=sid)
        (turn,) = driver.session(sid).turns
        assert turn.host == driver.host
        assert turn.kind == "main"
        assert any(ex.tag in json.dumps(m.get("content"), ensure_ascii=False) for m in turn.messages), turn.messages
        assert driver.recorded_reply(turn) == ex.reply
        if "inject" in driver.supports:
            assert MATCHING_SKILL in turn.injected_skills
        else:
            assert turn.injected_skills == []

    @needs("capture")
    def test_conformance_captures_the_turns_of_a_session_in_order(self, driver: Driver) -> None:
        sid = _sid("order")
        tags = [driver.send(text, session_id=sid).tag for text in (UNRELATED, MATCHING, UNRELATED)]
        turns = driver.session(sid, turns=3).turns
        assert len(turns) == 3
        for turn, tag in zip(turns, tags, strict=True):
            assert tag in json.dumps(turn.messages, ensure_ascii=False)

    # Streaming ------------------------------------------------------------------------------------------------
    @needs("stream")
    def test_conformance_streams_the_reply_and_captures_it_whole(self, driver: Driver) -> None:
        sid = _sid("stream")
        ex = driver.send(MATCHING, session_id=sid, stream=True)
        assert ex.reply == ex.expected, ex
        if "inject" in driver.supports:
            assert MATCHING_SKILL in ex.model_saw, ex
        (turn,) = driver.session(sid).turns
        assert driver.recorded_reply(turn) == ex.reply  # the chunks, assembled

    # Fail-open and pass-through -------------------------------------------------------------------------------
    @needs("fail_open")
    def test_conformance_fails_open_when_the_plugin_raises(self, driver: Driver) -> None:
        sid = _sid("broken")
        with driver.broken():
            ex = driver.send(MATCHING, session_id=sid)
        assert ex.reply == ex.expected, ex  # the caller got its answer
        # and the host goes on: the next turn of the session is served, injected and recorded. (Whether the broken
        # turn left a record is not asserted: a host that records after the reply may do so once the fault is over.)
        after = driver.send(MATCHING, session_id=sid)
        assert after.reply == after.expected, after
        if "inject" in driver.supports:
            assert MATCHING_SKILL in after.model_saw, after
        turns = driver.session(sid).turns
        assert any(after.tag in json.dumps(t.messages, ensure_ascii=False) for t in turns), turns

    @needs("pass_through")
    def test_conformance_passes_requests_through_without_a_plugin(self, driver: Driver) -> None:
        sid = _sid("unplugged")
        with driver.unplugged():
            ex = driver.send(MATCHING, session_id=sid)
            stream = driver.send(MATCHING, session_id=sid, stream=True) if "stream" in driver.supports else ex
        for got in (ex, stream):
            assert got.reply == got.expected, got
            assert BLOCK_OPEN not in got.model_saw, got  # the request went out as the caller sent it
        after = driver.send(UNRELATED, session_id=sid)
        turns = driver.session(sid).turns
        assert any(after.tag in json.dumps(t.messages, ensure_ascii=False) for t in turns), turns
        assert all(t.injected_skills == [] for t in turns), turns  # nothing was injected while there was no plugin

    # Sessions and users ---------------------------------------------------------------------------------------
    @needs("session_user")
    def test_conformance_files_turns_under_the_session_and_user_given(self, driver: Driver) -> None:
        sid, ada, bob = _sid("users"), _user("ada"), _user("bob")
        a = driver.send(UNRELATED, session_id=sid, user=ada)
        b = driver.send(UNRELATED, session_id=sid, user=bob)
        (ta,) = driver.session(sid, ada).turns
        (tb,) = driver.session(sid, bob).turns  # one id named by two users: two sessions
        assert ta.user == ada and tb.user == bob
        assert a.tag in json.dumps(ta.messages) and b.tag in json.dumps(tb.messages)
        assert ta.session_id != tb.session_id

    # Side turns -----------------------------------------------------------------------------------------------
    @needs("side_turns")
    def test_conformance_side_turns_get_no_skills_and_are_recorded_as_side(self, driver: Driver) -> None:
        sid = _sid("side")
        ex = driver.send(MATCHING, session_id=sid, side=True)
        assert ex.reply == ex.expected, ex
        assert BLOCK_OPEN not in ex.model_saw, ex
        (turn,) = driver.session(sid).turns
        assert turn.kind == "side"
        assert turn.injected_skills == []


# ------------------------------------------------------------------------------------------------
# Backends, each started once for the module
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MetaClawPlugin]:
    """One plugin for the in-process hosts (each case names its own sessions), on keyword retrieval."""
    home = seed_skills(tmp_path_factory.mktemp("conformance-home"))
    p = MetaClawPlugin(Settings(home=home, retrieval={"mode": "keyword"})).start()
    yield p
    p.stop()


@pytest.fixture(scope="module")
def upstream() -> Iterator[Any]:
    from metaclaw_plugin.devtools.upstream import Upstream

    up = Upstream(script=scripted_reply).start()
    yield up
    up.stop()


@pytest.fixture(scope="module")
def litellm_proxy(tmp_path_factory: pytest.TempPathFactory, upstream: Any) -> Iterator[LiteLLMProxyDriver]:
    from litellm_support import MODEL, close_readers

    from metaclaw_plugin.devtools.proxyrun import ModelSpec, launch_proxy, proxy_config, write_config

    root = tmp_path_factory.mktemp("conformance-proxy")
    home = seed_skills(root / "home")
    folder = root / "proxy"
    folder.mkdir()
    (folder / "conformance_faults.py").write_text(FAULTS_MODULE)
    switch = root / "switch"
    switch.write_text("")
    cfg = proxy_config(
        [ModelSpec(f"openai/{MODEL}", name=MODEL, api_base=upstream.url, api_key="not-needed")],
        callbacks=("metaclaw_litellm.callback", "conformance_faults.handler"),
        litellm_settings={"num_retries": 0, "request_timeout": 30},
    )
    write_config(folder / "config.yaml", cfg)
    env = {k: v for k, v in os.environ.items() if k != "METACLAW_CONFIG"}
    env.update(METACLAW_HOME=str(home), METACLAW_RETRIEVAL__MODE="keyword", MC_CONFORMANCE_SWITCH=str(switch))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(folder), env.get("PYTHONPATH", "")) if p)
    proxy = launch_proxy(folder / "config.yaml", env=env, log_path=root / "proxy.log", cwd=folder)
    try:
        proxy.wait_ready(240.0)
        yield LiteLLMProxyDriver(proxy, upstream, home, switch)
    finally:
        proxy.stop()
        close_readers()


@pytest.fixture(scope="module")
def litellm_sdk(plugin: MetaClawPlugin, upstream: Any) -> Iterator[LiteLLMSDKDriver]:
    from litellm_support import only_callback

    from metaclaw_litellm import MetaClawCallback

    loop = asyncio.new_event_loop()  # one loop: LiteLLM's logging worker binds to the first loop it sees
    try:
        with only_callback(MetaClawCallback(plugin)):
            yield LiteLLMSDKDriver(plugin, upstream, loop)
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


@pytest.fixture(scope="module")
def openclaw_sidecar(plugin: MetaClawPlugin) -> Iterator[OpenClawSidecarDriver]:
    from starlette.testclient import TestClient

    from metaclaw_plugin.sidecar import create_app, load_or_create_token

    token = load_or_create_token(plugin.settings.home)
    with TestClient(create_app(plugin, token), base_url="http://127.0.0.1") as client:
        yield OpenClawSidecarDriver(plugin, client, token)


# ------------------------------------------------------------------------------------------------
# One class per host
# ------------------------------------------------------------------------------------------------
class TestLiteLLMProxyConformance(Conformance):
    driver_class = LiteLLMProxyDriver

    @pytest.fixture
    def driver(self, litellm_proxy: LiteLLMProxyDriver) -> LiteLLMProxyDriver:
        return litellm_proxy


class TestLiteLLMSDKConformance(Conformance):
    driver_class = LiteLLMSDKDriver

    @pytest.fixture
    def driver(self, litellm_sdk: LiteLLMSDKDriver) -> LiteLLMSDKDriver:
        return litellm_sdk


class TestLangChainMiddlewareConformance(Conformance):
    driver_class = LangChainMiddlewareDriver

    @pytest.fixture
    def driver(self, plugin: MetaClawPlugin) -> LangChainMiddlewareDriver:
        return LangChainMiddlewareDriver(plugin)


class TestLangChainRunnableConformance(Conformance):
    driver_class = LangChainRunnableDriver

    @pytest.fixture
    def driver(self, plugin: MetaClawPlugin) -> LangChainRunnableDriver:
        return LangChainRunnableDriver(plugin)


class TestLangChainHandlerConformance(Conformance):
    driver_class = LangChainHandlerDriver

    @pytest.fixture
    def driver(self, plugin: MetaClawPlugin) -> LangChainHandlerDriver:
        return LangChainHandlerDriver(plugin)


class TestOpenClawSidecarConformance(Conformance):
    driver_class = OpenClawSidecarDriver

    @pytest.fixture
    def driver(self, openclaw_sidecar: OpenClawSidecarDriver) -> OpenClawSidecarDriver:
        return openclaw_sidecar


class TestMcpConformance(Conformance):
    driver_class = McpDriver

    @pytest.fixture
    def driver(self, plugin: MetaClawPlugin) -> McpDriver:
        return McpDriver(plugin)


def test_conformance_every_host_has_a_class_and_declares_only_known_behaviours() -> None:
    classes = [
        c for c in globals().values() if isinstance(c, type) and issubclass(c, Conformance) and c is not Conformance
    ]
    drivers = {c.driver_class for c in classes}
    assert len(drivers) == len(classes) == 7
    for d in drivers:
        assert d.supports <= BEHAVIOURS, d
        assert {"capture", "fail_open", "session_user"} <= d.supports, d  # what every host must do
