"""Drivers for the adapter conformance suite (tests/e2e/test_conformance.py): one per host surface.

A driver plays the host around its adapter: it sends a user's task the way that host sends it, with a scripted
model that answers ``reply <tag>`` (the tag the driver appended to the task, so every exchange is found again),
and it reads what the plugin recorded. Every driver runs its adapter for real: a ``litellm`` proxy process, the
LiteLLM SDK in-process, LangChain's ``create_agent``/LCEL/callbacks, the sidecar's HTTP app (the OpenClaw
plugin's surface), the MCP server through an in-process MCP client.

What a driver offers (:class:`Driver`):

* ``send(text, session_id=, user=, stream=, side=)`` -> :class:`Exchange`: the reply the caller got, what the
  model saw (its messages as JSON; for MCP the tool result, which is what the client's model reads) and the
  reply the caller should have got;
* ``session(session_id, user, turns=)``: the session the plugin stored (polled: some hosts record after the
  response);
* ``broken()``: a context in which the plugin's ``prepare_turn``/``complete_turn`` raise (fail-open);
* ``unplugged()``: a context in which the adapter's :class:`PluginHandle` has no plugin (a plugin whose build
  failed and waits for its retry): requests pass through;
* ``supports``: the behaviours the host has (:data:`BEHAVIOURS`); the suite drops the cases of the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before anything imports litellm

import httpx
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import Field
from waiting import wait_for

from metaclaw_plugin import MetaClawPlugin
from metaclaw_plugin.integration import PluginHandle
from metaclaw_plugin.requestpath.sessions import user_suffix
from metaclaw_plugin.types import Session

# The behaviours of the suite. A host that lacks one says so in ``supports``; the suite then leaves that case out
# of the host's class (never a skip), or, for "inject", asserts the host's documented alternative (nothing added).
BEHAVIOURS = frozenset({"inject", "stream", "fail_open", "pass_through", "side_turns", "session_user", "capture"})

# Keyword retrieval picks the builtin skill `backup-before-modify` for this task (langchain_support.SKILL_SUBSET).
MATCHING = "Edit the existing settings.ini config file and overwrite the port setting with 8080."
MATCHING_SKILL = "backup-before-modify"
UNRELATED = "Who painted the ceiling of the Sistine Chapel?"
BLOCK_OPEN = "<metaclaw-skills>"
# A side call's shape (a chat client's title request): judged a side turn by the core
# (metaclaw_plugin.requestpath.sideturns).
TITLE_SYSTEM = "Generate a concise title for this conversation. Reply with one line only, at most six words."
HOST_SYSTEM = "You are a careful operations assistant."
_TAG = re.compile(r"\[(c[0-9a-f]{10})\]")


def new_tag() -> str:
    return "c" + uuid.uuid4().hex[:10]


def reply_to(tag: str) -> str:
    return f"reply {tag}"


def tag_of(text: str) -> str:
    found = _TAG.findall(text)
    return found[-1] if found else "none"


def scripted_reply(body: dict[str, Any]) -> str:
    """The scripted upstream's answer to an OpenAI chat request: ``reply <tag>`` for its last user message."""
    users = [m for m in body.get("messages", []) if isinstance(m, dict) and m.get("role") == "user"]
    last = users[-1].get("content") if users else ""
    return reply_to(tag_of(last if isinstance(last, str) else json.dumps(last)))


class Exchange:
    """One request through a host: what the caller got, what it should have got, what the model saw."""

    def __init__(self, reply: str, expected: str, model_saw: str, tag: str) -> None:
        self.reply = reply
        self.expected = expected
        self.model_saw = model_saw
        self.tag = tag

    def __repr__(self) -> str:
        return f"Exchange(reply={self.reply!r}, expected={self.expected!r}, model_saw={self.model_saw[:400]!r})"


def stored_id(session_id: str, user: str | None) -> str:
    """The id the plugin files a session under: the host's id, namespaced by the turn's user (docs/hosts.md)."""
    return session_id + user_suffix(user) if user else session_id


class Driver:
    """The base of every driver: reading sessions from a plugin in this process."""

    name: ClassVar[str] = "?"
    host: ClassVar[str] = "?"  # TurnContext.host of the turns it records
    supports: ClassVar[frozenset[str]] = BEHAVIOURS

    plugin: MetaClawPlugin

    def send(
        self,
        text: str,
        *,
        session_id: str,
        user: str | None = None,
        stream: bool = False,
        side: bool = False,
    ) -> Exchange:
        raise NotImplementedError

    def get_session(self, session_id: str, user: str | None = None) -> Session | None:
        self.plugin.flush()
        return self.plugin.store.get_session(stored_id(session_id, user))

    def session(self, session_id: str, user: str | None = None, *, turns: int = 1, timeout: float = 20.0) -> Session:
        """The stored session once it has ``turns`` turns (polled: some hosts record after the reply)."""

        def got() -> Session | None:
            s = self.get_session(session_id, user)
            return s if s is not None and len(s.turns) >= turns else None

        def say() -> str:
            recent = (
                [(s["session_id"], s.get("user")) for s in self.plugin.store.list_sessions(8)]
                if hasattr(self, "plugin")
                else []
            )
            return f"{self.name}: session {session_id!r} with {turns} turns (recent: {recent})"

        return wait_for(got, timeout, say)

    def recorded_reply(self, turn: Any) -> str:
        """The reply as the plugin recorded it."""
        content = (turn.response or {}).get("content")
        return content if isinstance(content, str) else json.dumps(content)

    @contextlib.contextmanager
    def broken(self) -> Iterator[None]:
        """The plugin's two turn calls raise, as a bug in the core would."""

        def boom(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("conformance: the plugin broke")

        saved = self.plugin.__dict__.copy()
        self.plugin.prepare_turn = boom  # type: ignore[method-assign]
        self.plugin.complete_turn = boom  # type: ignore[method-assign]
        try:
            yield
        finally:
            for name in ("prepare_turn", "complete_turn"):
                if name in saved:
                    setattr(self.plugin, name, saved[name])
                else:
                    delattr(self.plugin, name)

    @contextlib.contextmanager
    def unplugged(self) -> Iterator[None]:
        """Every adapter's PluginHandle answers None: the state of a plugin whose build failed (until its retry)."""
        original = PluginHandle.get
        PluginHandle.get = lambda self: None  # type: ignore[method-assign,assignment]
        try:
            yield
        finally:
            PluginHandle.get = original  # type: ignore[method-assign]


def _messages_json(messages: list[Any]) -> str:
    out = []
    for m in messages:
        if isinstance(m, BaseMessage):
            out.append({"role": m.type, "content": m.content})
        else:
            out.append(m)
    return json.dumps(out, ensure_ascii=False)


# ------------------------------------------------------------------------------------------------
# LiteLLM: the proxy (a real process) and the SDK (in-process)
# ------------------------------------------------------------------------------------------------
FAULTS_MODULE = '''\
"""Test-only: switches the proxy's plugin into a failure mode named in the file $MC_CONFORMANCE_SWITCH.

"broken": MetaClawPlugin.prepare_turn/complete_turn raise; "unplugged": every PluginHandle answers None.
Loaded by the proxy as a (no-op) callback, so it patches the proxy's own process.
"""
import os
from pathlib import Path

from litellm.integrations.custom_logger import CustomLogger

from metaclaw_plugin.integration import MetaClawPlugin, PluginHandle

SWITCH = Path(os.environ["MC_CONFORMANCE_SWITCH"])


def mode():
    try:
        return SWITCH.read_text().strip()
    except OSError:
        return ""


def _breakable(fn):
    def call(self, *args, **kwargs):
        if mode() == "broken":
            raise RuntimeError("conformance: the plugin broke")
        return fn(self, *args, **kwargs)

    return call


MetaClawPlugin.prepare_turn = _breakable(MetaClawPlugin.prepare_turn)
MetaClawPlugin.complete_turn = _breakable(MetaClawPlugin.complete_turn)
_get = PluginHandle.get
PluginHandle.get = lambda self: None if mode() == "unplugged" else _get(self)
handler = CustomLogger()
'''


class LiteLLMProxyDriver(Driver):
    """``litellm --config`` with ``callbacks: ["metaclaw_litellm.callback"]``; the caller is an OpenAI client."""

    name = "litellm-proxy"
    host = "litellm-proxy"

    def __init__(self, proxy: Any, upstream: Any, home: Path, switch: Path) -> None:
        self.proxy = proxy
        self.upstream = upstream
        self.home = home
        self.switch = switch

    def send(self, text, *, session_id, user=None, stream=False, side=False):
        tag = new_tag()
        system = TITLE_SYSTEM if side else HOST_SYSTEM
        msgs = [{"role": "system", "content": system}, {"role": "user", "content": f"{text} [{tag}]"}]
        headers = {"Authorization": f"Bearer {self.proxy.master_key}", "X-Session-Id": session_id}
        if user:
            headers["X-User-Id"] = user
        body: dict[str, Any] = {"model": "stub-model", "messages": msgs}
        if stream:
            body["stream"] = True
        r = httpx.post(f"{self.proxy.base_url}/v1/chat/completions", json=body, headers=headers, timeout=60)
        assert r.status_code == 200, r.text
        if stream:
            parts = []
            for line in r.text.splitlines():
                if line.startswith("data: ") and line.strip() != "data: [DONE]":
                    for ch in json.loads(line[6:]).get("choices") or []:
                        parts.append((ch.get("delta") or {}).get("content") or "")
            reply = "".join(parts)
        else:
            reply = r.json()["choices"][0]["message"]["content"]
        with self.upstream._lock:
            seen = [b for b in self.upstream.requests if tag in json.dumps(b.get("messages", ""))]
        assert len(seen) == 1, f"the upstream got {len(seen)} requests for {tag}"
        return Exchange(reply, reply_to(tag), json.dumps(seen[0]["messages"], ensure_ascii=False), tag)

    def get_session(self, session_id, user=None):
        from litellm_support import reader

        return reader(self.home).get_session(stored_id(session_id, user))

    @contextlib.contextmanager
    def _mode(self, mode: str) -> Iterator[None]:
        self.switch.write_text(mode)
        try:
            yield
        finally:
            self.switch.write_text("")

    def broken(self):
        return self._mode("broken")

    def unplugged(self):
        return self._mode("unplugged")


class LiteLLMSDKDriver(Driver):
    """``litellm.callbacks = [MetaClawCallback(plugin)]``, then ``await litellm.acompletion(...)``."""

    name = "litellm-sdk"
    host = "litellm-sdk"

    def __init__(self, plugin: MetaClawPlugin, upstream: Any, loop: asyncio.AbstractEventLoop) -> None:
        self.plugin = plugin
        self.upstream = upstream
        self.loop = loop

    def send(self, text, *, session_id, user=None, stream=False, side=False):
        import litellm

        tag = new_tag()
        system = TITLE_SYSTEM if side else HOST_SYSTEM
        msgs = [{"role": "system", "content": system}, {"role": "user", "content": f"{text} [{tag}]"}]
        kw: dict[str, Any] = {
            "model": "openai/stub-model",
            "api_base": self.upstream.url,
            "api_key": "not-needed",
            "num_retries": 0,
            "metadata": {"session_id": session_id},
        }
        if user:
            kw["user"] = user

        async def go() -> str:
            if not stream:
                resp = await litellm.acompletion(messages=msgs, **kw)
                return resp.choices[0].message.content
            parts = []
            async for chunk in await litellm.acompletion(messages=msgs, stream=True, **kw):
                parts.append(chunk.choices[0].delta.content or "")
            return "".join(parts)

        reply = self.loop.run_until_complete(go())
        with self.upstream._lock:
            seen = [b for b in self.upstream.requests if tag in json.dumps(b.get("messages", ""))]
        assert len(seen) == 1, f"the upstream got {len(seen)} requests for {tag}"
        return Exchange(reply, reply_to(tag), json.dumps(seen[0]["messages"], ensure_ascii=False), tag)


# ------------------------------------------------------------------------------------------------
# LangChain: the agent middleware, the LCEL wrapper, the callback handler
# ------------------------------------------------------------------------------------------------
class EchoChatModel(BaseChatModel):
    """A chat model that answers ``reply <tag>`` for the tag in its last human message, and records what it got.
    It streams in two chunks (so a stream is really assembled)."""

    received: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "conformance-echo"

    def bind_tools(self, tools: Any, **kwargs: Any) -> EchoChatModel:
        return self

    def _reply(self, messages: list[BaseMessage]) -> str:
        self.received.append(list(messages))
        humans = [m for m in messages if isinstance(m, HumanMessage)]
        return reply_to(tag_of(str(humans[-1].content) if humans else ""))

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any):
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=self._reply(messages)))])

    def _stream(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any):
        text = self._reply(messages)
        for piece in (text[:6], text[6:]):
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
            if run_manager is not None:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk

    def saw(self, tag: str) -> str:
        calls = [m for m in self.received if tag in _messages_json(m)]
        assert len(calls) == 1, f"the model got {len(calls)} calls for {tag}"
        return _messages_json(calls[0])


def _lc_config(session_id: str, user: str | None, **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"session_id": session_id}
    if user:
        meta["user_id"] = user
    return {"metadata": meta, **extra}


class LangChainMiddlewareDriver(Driver):
    """``create_agent(model, tools, middleware=[MetaClawMiddleware(plugin)])``."""

    name = "langchain-middleware"
    host = "langchain"

    def __init__(self, plugin: MetaClawPlugin) -> None:
        from langchain.agents import create_agent

        from metaclaw_langchain import MetaClawMiddleware

        self.plugin = plugin
        self.model = EchoChatModel()
        self.agents = {
            side: create_agent(
                self.model,
                [],
                middleware=[MetaClawMiddleware(plugin)],
                system_prompt=TITLE_SYSTEM if side else HOST_SYSTEM,
            )
            for side in (False, True)
        }

    def send(self, text, *, session_id, user=None, stream=False, side=False):
        tag = new_tag()
        agent = self.agents[side]
        inputs = {"messages": [{"role": "user", "content": f"{text} [{tag}]"}]}
        config = _lc_config(session_id, user)
        if stream:
            parts = [
                str(chunk.content)
                for chunk, _meta in agent.stream(inputs, config=config, stream_mode="messages")
                if isinstance(chunk, AIMessageChunk)
            ]
            reply = "".join(parts)
        else:
            reply = str(agent.invoke(inputs, config=config)["messages"][-1].content)
        return Exchange(reply, reply_to(tag), self.model.saw(tag), tag)


class LangChainRunnableDriver(Driver):
    """``with_skills(chat_model, plugin)`` in an LCEL chain (a list of messages in, a message out)."""

    name = "langchain-runnable"
    host = "langchain"

    def __init__(self, plugin: MetaClawPlugin) -> None:
        from metaclaw_langchain import with_skills

        self.plugin = plugin
        self.model = EchoChatModel()
        self.chain = with_skills(self.model, plugin)

    def send(self, text, *, session_id, user=None, stream=False, side=False):
        tag = new_tag()
        msgs = [SystemMessage(TITLE_SYSTEM if side else HOST_SYSTEM), HumanMessage(f"{text} [{tag}]")]
        config = _lc_config(session_id, user)
        if stream:
            reply = "".join(str(c.content) for c in self.chain.stream(msgs, config=config))
        else:
            reply = str(self.chain.invoke(msgs, config=config).content)
        return Exchange(reply, reply_to(tag), self.model.saw(tag), tag)


class LangChainHandlerDriver(Driver):
    """``model.invoke(messages, config={"callbacks": [MetaClawCallbackHandler(plugin)]})``: capture only."""

    name = "langchain-handler"
    host = "langchain"
    supports = BEHAVIOURS - {"inject"}  # a callback cannot change a request: capture only (docs/hosts.md)

    def __init__(self, plugin: MetaClawPlugin) -> None:
        from metaclaw_langchain import MetaClawCallbackHandler

        self.plugin = plugin
        self.model = EchoChatModel()
        self.handler = MetaClawCallbackHandler(plugin)

    def send(self, text, *, session_id, user=None, stream=False, side=False):
        tag = new_tag()
        msgs = [SystemMessage(TITLE_SYSTEM if side else HOST_SYSTEM), HumanMessage(f"{text} [{tag}]")]
        config = _lc_config(session_id, user, callbacks=[self.handler])
        if stream:
            reply = "".join(str(c.content) for c in self.model.stream(msgs, config=config))
        else:
            reply = str(self.model.invoke(msgs, config=config).content)
        return Exchange(reply, reply_to(tag), self.model.saw(tag), tag)


# ------------------------------------------------------------------------------------------------
# OpenClaw: the sidecar's HTTP API, called the way the OpenClaw plugin (adapters/openclaw/index.js) calls it
# ------------------------------------------------------------------------------------------------
class OpenClawSidecarDriver(Driver):
    """The sidecar app (``metaclaw_plugin.sidecar.create_app``) driven as the OpenClaw plugin drives it:
    ``before_prompt_build`` asks ``POST /v1/skills`` for the block and prepends it to the system prompt (a
    non-200 answer or none: nothing prepended, the plugin's own fail-open); ``llm_input`` posts
    ``/v1/turns/input``; ``llm_output`` posts ``/v1/turns/output``. A side run (OpenClaw's heartbeat, cron,
    memory triggers) is ``kind: side`` and asks for no skills. The model is played by the driver."""

    name = "openclaw-sidecar"
    host = "openclaw"
    # OpenClaw hands the plugin the finished reply (llm_output): the sidecar's API has no stream. The sidecar is the
    # plugin's process: with no plugin there is no sidecar, and the OpenClaw plugin passes through on its own
    # (tests/host_openclaw/test_openclaw_gateway.py::test_js_fails_open_and_logs_once,
    # test_sidecar_down_does_not_break_the_reply).
    supports = BEHAVIOURS - {"stream", "pass_through"}

    def __init__(self, plugin: MetaClawPlugin, client: Any, token: str) -> None:
        self.plugin = plugin
        self.client = client
        self.auth = {"Authorization": f"Bearer {token}"}

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        return self.client.post(path, json=body, headers=self.auth)

    def send(self, text, *, session_id, user=None, stream=False, side=False):
        assert not stream, "the sidecar has no streaming"
        tag, run_id = new_tag(), f"run-{uuid.uuid4().hex[:12]}"
        prompt = f"{text} [{tag}]"
        kind = "side" if side else "main"
        who = {"session_id": session_id, "kind": kind, **({"user": user} if user else {})}
        block, names, generation = "", [], None
        if not side:
            r = self._post("/v1/skills", {**who, "prompt": prompt, "messages": []})
            if r.status_code == 200:
                got = r.json()
                block, names, generation = got["block"], got["skills"], got["generation"]
        system = f"{block}\n\n{HOST_SYSTEM}" if block else HOST_SYSTEM  # prependSystemContext
        msgs = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
        reply = reply_to(tag)  # the model's answer
        inp = {**who, "run_id": run_id, "messages": msgs, "model": "stub/stub-model", "injected_skills": names}
        if generation is not None:
            inp["skill_generation"] = generation
        r = self._post("/v1/turns/input", inp)
        assert r.status_code == 200, r.text  # the sidecar answers even when the plugin fails (ok: false)
        out = {**who, "run_id": run_id, "model": "stub/stub-model", "response": {"role": "assistant", "content": reply}}
        r = self._post("/v1/turns/output", out)
        assert r.status_code == 200, r.text
        return Exchange(reply, reply_to(tag), json.dumps(msgs, ensure_ascii=False), tag)


# ------------------------------------------------------------------------------------------------
# MCP: the server's tools through an MCP client
# ------------------------------------------------------------------------------------------------
class McpDriver(Driver):
    """``metaclaw-plugin mcp --user U --session S``, in-process: an MCP client calls the server's tools. The
    client's model reads the tool result (``skills_search``'s ``block``): that is MCP's injection. A side turn is
    a bookkeeping tool (``skill_get``). The reply is the skills the tool listed (recorded as the turn's response)."""

    name = "mcp"
    host = "mcp"
    # MCP makes no model call of its own: nothing streams, and there is no request to pass through (the server is
    # the plugin).
    supports = BEHAVIOURS - {"stream", "pass_through"}

    def __init__(self, plugin: MetaClawPlugin) -> None:
        self.plugin = plugin

    def send(self, text, *, session_id, user=None, stream=False, side=False):
        import anyio
        from mcp import Client

        from metaclaw_plugin.mcp_server import McpTools, Scope
        from metaclaw_plugin.mcp_server.app import build_server

        assert not stream, "MCP has no streaming"
        tag = new_tag()
        server = build_server(McpTools(self.plugin, Scope(user=user, session=session_id)))
        tool, args = ("skill_get", {"name": MATCHING_SKILL}) if side else ("skills_search", {"task": f"{text} [{tag}]"})

        async def go() -> Any:
            async with Client(server) as client:
                return await client.call_tool(tool, args)

        result = anyio.run(go)
        assert not result.is_error, result.content
        raw = result.content[0].text
        data = json.loads(raw)
        if side:
            return Exchange(data["name"], MATCHING_SKILL, raw, tag)
        listed = ",".join(s["name"] for s in data["skills"])
        assert data["session_id"] == stored_id(session_id, None) or data["session_id"] == session_id
        return Exchange(listed, listed, raw, tag)

    def recorded_reply(self, turn: Any) -> str:
        content = json.loads(turn.response["content"])
        return ",".join(content.get("skills", []))
