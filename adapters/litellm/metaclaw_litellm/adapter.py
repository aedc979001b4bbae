"""``MetaClawCallback``: LiteLLM events in, the core's two turn calls out (``prepare_turn``, ``complete_turn``;
plus ``on_session_end``). Nothing else.

Which LiteLLM hook does what (LiteLLM 1.108; see the README for the table):

* Proxy: ``async_pre_call_hook`` injects and starts the turn. The turn is written (journal, durable)
  in ``async_post_call_success_hook`` for JSON, and for SSE when LiteLLM hands over the response it
  assembles anyway for its success logging (see :meth:`MetaClawCallback._arm_stream_capture`): both
  before the client gets the end of the response. No per-chunk hook: a callback that defines
  ``async_post_call_streaming_iterator_hook`` moves every stream of the proxy onto LiteLLM's slow path
  (two more generator layers per chunk, the served chunks kept and re-read at the end).
  ``async_post_call_failure_hook`` records a failed turn before the client gets the error.
  ``async_log_success_event``/``async_log_failure_event`` are the fallback (same call id: no second turn).
* SDK ``acompletion``: ``async_pre_call_deployment_hook`` injects and remembers the injected messages
  (the SDK's success log only sees the messages from before injection);
  ``async_post_call_success_deployment_hook`` records JSON replies before ``acompletion`` returns;
  streams and failures are recorded by the log events.
* SDK sync ``completion``: LiteLLM has no hook that may change its request, so it is capture only.

The same hooks serve Anthropic ``/v1/messages`` (``anthropic_messages``) and OpenAI ``/v1/responses``
(``aresponses``/``responses``), native or bridged to chat completions: :mod:`.routes` reads each format as neutral
messages and puts the block into the route's own system field. Native stream ends differ: a native Responses
stream is recorded by ``async_post_call_success_deployment_hook`` on its ``response.completed`` event; a native
Anthropic stream parks a logging coroutine in the deferred slot, whose arguments hold the stream's SSE bytes.

Every hook fails open: an exception is logged and counted, and the request goes on unchanged.
LiteLLM looks hooks up on the leaf class (``"async_pre_call_hook" in vars(cls)``), so all of them are
defined here, on this class; a subclass that overrides one must call ``super()``.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, Literal

from litellm.integrations.custom_logger import CustomLogger

from metaclaw_plugin.integration import (
    DEFAULT_TENANT,
    RETRY_PLUGIN_AFTER,
    FailOpen,
    InFlight,
    MetaClawPlugin,
    PluginHandle,
    PreparedTurn,
    Settings,
    TurnContext,
    conversation_fingerprint,
    new_id,
    session_id_from,
)

from . import _internals as internals
from . import own_calls
from .routes import BY_CALL_TYPE, CHAT, LEARNS, UNHOOKED, UNHOOKED_FIX, Route, anthropic_stream_reply, any_reply
from .translate import (
    already_injected,
    anthropic_session,
    call_type_name,
    error_text,
    get,
    header,
    key_user,
    request_tools,
    request_user,
    tenant_from_key,
    truthy,
)

log = logging.getLogger("metaclaw_litellm")
_fail = FailOpen(log, "metaclaw_litellm", what="the request")

TenantMode = Literal["key", "team", "none"]
RECORDED_MAX = 50_000  # call ids remembered to keep the log events from recording a turn twice


@dataclass
class _Inflight:
    ctx: TurnContext
    done: bool
    outcome: dict[str, Any] | None
    origin: str  # "proxy" or "sdk"
    t0: float
    turn: PreparedTurn | None = None  # the prepared turn (the block injected, the request as sent)


class MetaClawCallback(CustomLogger):
    """Skill injection and trajectory capture for the LiteLLM proxy and SDK.

    ``MetaClawCallback()`` loads the plugin config (``$METACLAW_CONFIG``, ``$METACLAW_HOME/config.yaml``,
    ``METACLAW_*``) on first use; pass ``plugin=`` to share a running :class:`MetaClawPlugin`, or
    ``settings=``/``config_file=``.

    ``tenant``: the tenant of SDK calls without ``metadata.tenant``. In the proxy the tenant always
    comes from the caller's key (``tenant_from``: ``"key"`` = team, else key; ``"team"``; ``"none"``),
    never from the request body, so one team cannot read another team's learned skills.
    """

    def __init__(
        self,
        plugin: MetaClawPlugin | None = None,
        *,
        settings: Settings | None = None,
        config_file: str | None = None,
        tenant: str = DEFAULT_TENANT,
        tenant_from: TenantMode = "key",
        start: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if tenant_from not in ("key", "team", "none"):
            raise ValueError("tenant_from must be 'key', 'team' or 'none'")
        self.tenant = tenant
        self.tenant_from = tenant_from
        self.errors: Counter[str] = Counter()
        self.unhooked: Counter[str] = Counter()  # calls on routes this adapter does not hook, by route and model
        self._handle = PluginHandle(
            plugin,
            settings=settings,
            config_file=config_file,
            start=True,
            host="LiteLLM",
            logger=log,
            errors=self.errors,
            retry_after=RETRY_PLUGIN_AFTER,
        )
        self._lock = threading.Lock()
        self._inflight: InFlight[str, _Inflight] = InFlight()  # the core's one expiry policy
        self._recorded: OrderedDict[str, None] = OrderedDict()
        if start:
            self.get_plugin()

    # Plugin ------------------------------------------------------------------------------------------
    @property
    def plugin(self) -> MetaClawPlugin | None:
        """The plugin, if it is built (``get_plugin()`` builds and starts it)."""
        return self._handle.plugin

    @property
    def plugin_error(self) -> str | None:
        """Why the plugin could not be built or started (None once it runs)."""
        return self._handle.error

    def get_plugin(self) -> MetaClawPlugin | None:
        """The started plugin, or None while it cannot be built (a bad config, an unusable home);
        then the hooks pass requests through, the error is in ``plugin_error`` and the log, and the build is
        retried every ``RETRY_PLUGIN_AFTER`` seconds. With no ``plugin``/``settings``/``config_file`` it is the
        process-wide default plugin, shared with the other adapters."""
        return self._handle.get()

    # Request context -----------------------------------------------------------------------------------
    def _proxy_context(
        self, data: dict[str, Any], user_api_key_dict: Any, call_id: str, messages: list[Any], route: Route = CHAT
    ) -> _Inflight:
        md = data.get(route.metadata_key)
        md = md if isinstance(md, dict) else {}
        cmd = data.get("metadata")
        client_md: dict[str, Any] = cmd if isinstance(cmd, dict) else {}
        psr = data.get("proxy_server_request")
        headers = get(psr, "headers") or md.get("headers")
        tenant = tenant_from_key(user_api_key_dict, self.tenant_from)
        litellm_sid = None if md.get("litellm_session_id_generated") else data.get("litellm_session_id")
        model = data.get("model")
        who = tenant, key_user(user_api_key_dict, tenant)
        return self._inflight_of(
            headers, data, md, client_md, litellm_sid, messages, who, call_id, "litellm-proxy", model, data, "proxy"
        )

    def _inflight_of(
        self,
        headers: Any,
        body: Any,
        md: dict[str, Any],
        client_md: dict[str, Any],
        litellm_sid: Any,
        messages: Any,
        who: tuple[str, str | None],
        call_id: str,
        host: str,
        model: Any,
        params: Any,
        via: str,
    ) -> _Inflight:
        """The turn's context from what the proxy and the SDK both read: its user, session, kind and end. ``who``:
        the tenant, and the user of a request that names none (a proxy key's, :func:`key_user`)."""
        tenant, owner = who
        # whose memories and session: the user the request names, else its key's
        user = request_user(headers, body, md, client_md, session=litellm_sid) or owner
        sid, source = session_id_from(
            # X-Session-Id, as the user configured it, before LiteLLM's pick (which prefers a client's own header,
            # x-claude-code-session-id, over it); generated ids (the proxy's missing_session_id: generate policy)
            # are not the caller's
            header=(lambda: header(headers, "x-session-id"), litellm_sid),
            metadata=(
                md.get("session_id"),
                client_md.get("session_id"),
                lambda: anthropic_session(client_md.get("user_id")),
            ),
            fingerprint=lambda: conversation_fingerprint(self._handle.plugin, messages, tenant, user),
        )
        if sid is None:
            sid, source = "call-" + call_id, "call"
        side = header(headers, "x-turn-type") or md.get("turn_type") or "main"
        kind = "side" if isinstance(side, str) and side.strip().lower() == "side" else "main"
        done = truthy(header(headers, "x-session-done")) or truthy(md.get("session_done"))
        outcome = md.get("session_outcome") if isinstance(md.get("session_outcome"), dict) else None
        ctx = TurnContext(
            session_id=sid,
            tenant=tenant,
            user=user,
            kind=kind,  # type: ignore[arg-type]
            host=host,
            model=model if isinstance(model, str) else None,
            request_id=call_id,
            metadata={"session_source": source, "max_tokens": _max_tokens(params)},  # the side-call judge reads it
        )
        return _Inflight(ctx, done, outcome, via, time.monotonic())

    def _sdk_context(self, details: dict[str, Any], call_id: str, messages: Any, request: Any = None) -> _Inflight:
        """From LiteLLM's call details (``logging_obj.model_call_details``, or a log event's kwargs); ``request``:
        the call's own kwargs (before the call, the details hold ``user: ""`` and no optional params yet)."""
        lp = details.get("litellm_params")
        lp = lp if isinstance(lp, dict) else {}
        md = _call_metadata(details)
        op = details.get("optional_params")
        client_md = get(op, "metadata")
        client_md = client_md if isinstance(client_md, dict) else {}
        headers = md.get("headers")
        key = _key_of_metadata(md)
        tenant, host = self._tenant_of_metadata(md)
        who = tenant, key_user(key, tenant) if key is not None else None
        litellm_sid = lp.get("litellm_session_id") or details.get("litellm_session_id")
        body = next((b for b in (details, request) if isinstance(b, dict) and _nonblank(b.get("user"))), op)
        return self._inflight_of(
            headers, body, md, client_md, litellm_sid, messages, who, call_id, host, details.get("model"), op, "sdk"
        )

    def _tenant_of_metadata(self, md: dict[str, Any]) -> tuple[str, str]:
        """(tenant, host) of a call from its LiteLLM metadata: a proxy request's key, else an SDK call's
        ``metadata.tenant``, else this callback's ``tenant``."""
        key = _key_of_metadata(md)
        if key is not None:  # a proxy request seen only by the log events: the tenant still comes from the key
            return tenant_from_key(key, self.tenant_from), "litellm-proxy"
        t = md.get("tenant")
        return (t.strip() if isinstance(t, str) and t.strip() else self.tenant), "litellm-sdk"  # whole: see the key's

    def tenant_of(self, call_id: Any, details: dict[str, Any] | None) -> str:
        """The tenant of a call as this callback sees it: the one its pre-call hook derived for ``call_id`` (a
        proxy request's key), else the one it derives from the call's details (``logging_obj.model_call_details``).
        The trainable policy (``metaclaw/<name>``, :mod:`.policy`) answers the call with that tenant's weights."""
        inf = self._inflight.get(call_id) if isinstance(call_id, str) else None
        if inf is not None:
            return inf.ctx.tenant
        return self._tenant_of_metadata(_call_metadata(details or {}))[0]

    def _remember(self, call_id: str, inf: _Inflight) -> None:
        self._inflight.put(call_id, inf)

    def _claim(self, call_id: str) -> tuple[bool, _Inflight | None]:
        """Mark a call as recorded. Returns (first time?, its in-flight state)."""
        with self._lock:
            if call_id in self._recorded:
                return False, None
            self._recorded[call_id] = None
            if len(self._recorded) > RECORDED_MAX:
                self._recorded.popitem(last=False)
            return True, self._inflight.pop(call_id)

    def _finish(
        self,
        call_id: str,
        inf: _Inflight,
        response: dict[str, Any] | None,
        *,
        usage: dict[str, Any] | None = None,
        error: str | None = None,
        messages: Any = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> None:
        plugin = self._handle.get()
        if plugin is None:
            return
        turn = inf.turn
        if turn is None:  # capture only: the request was not seen by a pre-call hook
            turn = plugin.prepare_turn(inf.ctx, messages or [], tools=tools, inject=False, record=False)
        plugin.complete_turn(turn, response, usage=usage, error=error, messages=messages, tools=tools)
        if inf.done:  # the session of this request's user (one without a user ends no one else's)
            plugin.on_session_end(inf.ctx, inf.outcome, reason="host", every_user=False)

    def _record_from_details(self, kwargs: dict[str, Any], response: Any, error: str | None) -> None:
        """Log-event path: record the turn unless a hook before the client already did."""
        call_id = kwargs.get("litellm_call_id")
        if not isinstance(call_id, str) or not call_id:
            return
        route = BY_CALL_TYPE.get(call_type_name(kwargs.get("call_type")))
        if route is None:
            return
        first, inf = self._claim(call_id)
        if not first:
            return
        messages = tools = None
        if inf is None:  # never seen by a pre-call hook (sync completion, another path): capture only
            messages = route.messages(kwargs)  # the request as the core's neutral messages
            inf = self._sdk_context(kwargs, call_id, messages)
            plugin = self._handle.get()
            if plugin is not None and inf.origin != "proxy":
                own_calls.offer_sdk(plugin, kwargs)
            messages = messages or []
            tools = _request_tools(route, kwargs)
        reply = any_reply(response) if response is not None else None
        msg, usage = reply if reply is not None else (None, None)
        self._finish(call_id, inf, msg, usage=usage, error=error, messages=messages, tools=tools)

    # Proxy hooks -----------------------------------------------------------------------------------------
    async def async_pre_call_hook(self, user_api_key_dict: Any, cache: Any, data: dict, call_type: Any) -> Any:
        try:
            ct = call_type_name(call_type)
            route = BY_CALL_TYPE.get(ct)
            if route is None or not isinstance(data, dict):
                if ct in UNHOOKED:
                    self._unhooked_call(ct, data)
                return data
            messages = route.messages(data)
            if messages is None:
                return data  # LiteLLM answers the malformed request itself
            call_id = data.get("litellm_call_id")
            if not isinstance(call_id, str) or not call_id:
                call_id = new_id()
                data["litellm_call_id"] = call_id
            plugin = self._handle.get()
            if plugin is None:
                return data
            own_calls.offer_proxy(plugin, data)
            inf = self._proxy_context(data, user_api_key_dict, call_id, messages, route)
            # a retry that already carries its block is recorded as it is
            inf.turn = plugin.prepare_turn(
                inf.ctx, messages, tools=_request_tools(route, data), inject=not _injected(route, data, messages)
            )
            self._remember(call_id, inf)
            _render(route, data, inf.turn)
            if data.get("stream") is True:
                self._arm_stream_capture(data, call_id)
        except Exception:
            _fail("async_pre_call_hook", self)
        return data

    async def async_post_call_success_hook(self, data: dict, user_api_key_dict: Any, response: Any) -> Any:
        self._record_success(data, response, "async_post_call_success_hook")
        return None

    def _record_success(self, data: Any, response: Any, where: str) -> None:
        """Record a JSON reply before the client gets it (proxy and SDK success hooks); fails open."""
        try:
            call_id = data.get("litellm_call_id") if isinstance(data, dict) else None
            # The proxy runs this hook twice per call (deployment, then proxy): the second finds it done.
            if isinstance(call_id, str) and call_id not in self._recorded:
                self._record_call(call_id, response)
        except Exception:
            _fail(where, self)

    def _unhooked_call(self, call_type: str, data: Any) -> None:
        """A call on a route this adapter does not hook: counted, and said once per route and model."""
        model = get(data, "model")
        key = f"{UNHOOKED[call_type]} [{model if isinstance(model, str) else '?'}]"
        with self._lock:
            self.unhooked[key] += 1
            first = self.unhooked[key] == 1
        if first:
            log.warning(
                "metaclaw: calls to %s for model %r are passed through without skills and are not recorded "
                "(this route is not hooked); to learn from them, %s",
                UNHOOKED[call_type],
                model,
                UNHOOKED_FIX,
            )

    def _record_call(self, call_id: str, response: Any) -> None:
        """Record a known in-flight call with its complete reply, in any route's format (anything else, such as
        a stream wrapper, is left to a later event)."""
        reply = any_reply(response)
        if reply is not None:
            self._record_reply(call_id, reply)

    def _record_reply(self, call_id: str, reply: tuple[dict[str, Any] | None, dict[str, Any] | None]) -> None:
        with self._lock:
            if call_id in self._recorded or call_id not in self._inflight:
                return
        first, inf = self._claim(call_id)
        if first and inf is not None:
            self._finish(call_id, inf, reply[0], usage=reply[1])

    def _arm_stream_capture(self, data: dict[str, Any], call_id: str) -> None:
        """Record a proxy stream from the response LiteLLM assembles at its end, before ``[DONE]``, with no work
        per chunk.

        LiteLLM's stream wrapper builds the whole response when the last chunk is read (for its own success
        logging). When the request's logging object has a deferred stream-completion slot set, it parks that
        response there, and the proxy calls the slot synchronously right after the last chunk, before it sends
        ``[DONE]`` (``ProxyLogging.fire_deferred_stream_logging``, LiteLLM 1.108). The slot here records the turn
        (durable, as for JSON) and hands back the very success dispatch LiteLLM would have scheduled, so its
        logging is unchanged. Where the slot is taken (the proxy's post-call guardrails arm it) or never fires
        (an error, a client gone mid-stream), the log events record the turn instead."""
        lo = data.get("litellm_logging_obj")
        if lo is not None:
            internals.arm_deferred_slot(lo, _StreamEnd(self, call_id, lo))  # taken: the log events are the fallback

    def stream_ended(self, call_id: str, response: Any) -> None:
        """The assembled stream of a proxy call (from :class:`_StreamEnd`); fails open. Public: a meter (the overhead
        benchmark's) wraps it like the hooks."""
        try:
            self._record_call(call_id, response)
        except Exception:
            _fail("stream.record", self)

    def _native_stream_ended(self, call_id: str, logging_coroutine: Any) -> None:
        """A native Anthropic stream's end: its SSE bytes, from the arguments of LiteLLM's pass-through logging
        coroutine (``route_streaming_logging_to_handler(..., endpoint_type, ..., raw_bytes, ...)``, not started
        yet); fails open."""
        try:
            if call_id in self._recorded:
                return
            stream = internals.passthrough_stream(logging_coroutine)
            if stream is None or stream[0] != "anthropic":
                return
            reply = anthropic_stream_reply(stream[1])
            if reply is not None:
                self._record_reply(call_id, reply)
        except Exception:
            _fail("stream.record", self)

    async def async_post_call_failure_hook(
        self,
        request_data: dict,
        original_exception: Exception,
        user_api_key_dict: Any,
        traceback_str: str | None = None,
    ) -> Any:
        try:
            call_id = request_data.get("litellm_call_id") if isinstance(request_data, dict) else None
            if isinstance(call_id, str):
                with self._lock:
                    known = call_id in self._inflight and call_id not in self._recorded
                if known:
                    first, inf = self._claim(call_id)
                    if first and inf is not None:
                        self._finish(call_id, inf, None, error=error_text(original_exception))
        except Exception:
            _fail("async_post_call_failure_hook", self)
        return None

    # SDK hooks (they also run inside the proxy, for each deployment call) ----------------------------------
    async def async_pre_call_deployment_hook(self, kwargs: dict[str, Any], call_type: Any) -> dict[str, Any] | None:
        try:
            route = BY_CALL_TYPE.get(call_type_name(call_type))
            if route is None or not isinstance(kwargs, dict) or own_calls.is_plugin_call(kwargs):
                return None
            messages = route.messages(kwargs)
            if messages is None:
                return None
            lo = kwargs.get("litellm_logging_obj")
            call_id = kwargs.get("litellm_call_id") or getattr(lo, "litellm_call_id", None)
            if not isinstance(call_id, str) or not call_id:
                return None
            inf = self._inflight.get(call_id)  # single reads need no lock
            if call_id in self._recorded or (inf is not None and (inf.origin == "proxy" or inf.turn is not None)):
                # the proxy hook injected already, or this is the chat call inside a bridged /v1/messages or
                # /v1/responses call (same call id) that this hook prepared a moment ago
                return None
            plugin = self._handle.get()
            if plugin is None:
                return None
            if inf is None:
                details = internals.call_details(lo)
                inf = self._sdk_context(details if details is not None else kwargs, call_id, messages, kwargs)
                own_calls.offer_sdk(plugin, kwargs)  # the call's own model, api_base and key (details have them blank)
            if _injected(route, kwargs, messages):
                return None
            inf.turn = plugin.prepare_turn(inf.ctx, messages, tools=_request_tools(route, kwargs))
            self._remember(call_id, inf)
            _render(route, kwargs, inf.turn)
            return kwargs
        except Exception:
            _fail("async_pre_call_deployment_hook", self)
            return None

    async def async_post_call_success_deployment_hook(self, request_data: dict, response: Any, call_type: Any) -> Any:
        self._record_success(request_data, response, "async_post_call_success_deployment_hook")
        return None

    # Log events: the fallback, and the only path for SDK streams and sync calls --------------------------
    async def async_log_success_event(self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any) -> None:
        self.log_success_event(kwargs, response_obj, start_time, end_time)

    async def async_log_failure_event(self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any) -> None:
        self.log_failure_event(kwargs, response_obj, start_time, end_time)

    def log_success_event(self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any) -> None:
        try:
            if not isinstance(kwargs, dict) or own_calls.is_plugin_call(kwargs):
                return
            cid = kwargs.get("litellm_call_id")
            if isinstance(cid, str) and cid in self._recorded:
                return  # recorded before the client had the reply (the usual case in the proxy)
            resp = kwargs.get("async_complete_streaming_response") or kwargs.get("complete_streaming_response")
            if resp is None or any_reply(resp) is None:
                resp = response_obj if any_reply(response_obj) is not None else None
            self._record_from_details(kwargs, resp, None)
        except Exception:
            _fail("log_success_event", self)

    def log_failure_event(self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any) -> None:
        try:
            if not isinstance(kwargs, dict) or own_calls.is_plugin_call(kwargs):
                return
            exc = kwargs.get("exception")
            slo = kwargs.get("standard_logging_object")
            fallback = get(slo, "error_str") if slo is not None else None
            self._record_from_details(kwargs, None, error_text(exc, fallback))
        except Exception:
            _fail("log_failure_event", self)

    # Introspection --------------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        p = self._handle.plugin
        return {
            "plugin": p.status() if p is not None else None,
            "plugin_error": self.plugin_error,
            "inflight": len(self._inflight),
            "errors": dict(self.errors),
            "unhooked": dict(self.unhooked),
            "litellm_internals_missing": list(internals.problems()),
        }


class _StreamEnd:
    """The deferred stream-completion slot of one proxy call: LiteLLM calls it with (assembled response, cache
    hit) and schedules the coroutine it returns. Called synchronously, so the turn is on disk before ``[DONE]``."""

    __slots__ = ("call_id", "callback", "logging_obj")

    def __init__(self, callback: MetaClawCallback, call_id: str, logging_obj: Any) -> None:
        self.callback = callback
        self.call_id = call_id
        self.logging_obj = logging_obj

    def __call__(self, *args: Any) -> Coroutine[Any, Any, Any]:
        if len(args) == 1 and asyncio.iscoroutine(args[0]):
            # A native /v1/messages or /v1/responses stream parks its ready logging coroutine, nothing assembled.
            # Responses streams were recorded by the deployment success hook at their terminal event; a native
            # Anthropic stream's coroutine holds the stream's raw SSE bytes, read here once (else the log events
            # record it).
            self.callback._native_stream_ended(self.call_id, args[0])
            return args[0]
        response, cache_hit = (args + (None, None))[:2]
        self.callback.stream_ended(self.call_id, response)
        return internals.dispatch_success(self.logging_obj, response, cache_hit)


def make_default_callback() -> MetaClawCallback:
    """The module-level instance: configured from the environment and the config file, started now
    so that the first request does not pay for loading the skill library. Says once what learns and what not."""
    log.info(
        "metaclaw: learning from %s; not hooked (passed through, not recorded): %s",
        LEARNS,
        ", ".join(sorted(set(UNHOOKED.values()))),
    )
    return MetaClawCallback(start=True)


def _call_metadata(details: dict[str, Any]) -> dict[str, Any]:
    """A call's LiteLLM metadata from its details (the first non-empty of the places LiteLLM keeps it)."""
    lp = details.get("litellm_params")
    lp = lp if isinstance(lp, dict) else {}
    md = next(
        (
            m
            for m in (lp.get("metadata"), lp.get("litellm_metadata"), details.get("litellm_metadata"))
            if isinstance(m, dict) and m
        ),
        details.get("metadata"),
    )
    return md if isinstance(md, dict) else {}


def _key_of_metadata(md: dict[str, Any]) -> dict[str, Any] | None:
    """The proxy key of a call as LiteLLM's metadata names it (``user_api_key_*``), or None (an SDK call)."""
    if "user_api_key_hash" not in md and "user_api_key_team_id" not in md:
        return None
    return {
        "team_id": md.get("user_api_key_team_id"),
        "key_alias": md.get("user_api_key_alias"),
        "token": md.get("user_api_key_hash"),
        "user_id": md.get("user_api_key_user_id"),
    }


def _nonblank(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _max_tokens(params: Any) -> Any:
    """The request's output limit under any of its names (chat completions, o-series, Responses), or None."""
    if not isinstance(params, dict):
        return None
    for key in ("max_tokens", "max_completion_tokens", "max_output_tokens"):
        if params.get(key) is not None:
            return params[key]
    return None


# Routes: chat completions, Anthropic /v1/messages, OpenAI /v1/responses (see routes.py) --------------------
def _request_tools(route: Route, request: Any) -> list[dict[str, Any]] | None:
    if route.tools is None:
        return request_tools(request)
    return route.tools(request) or route.tools(get(request, "optional_params"))


def _injected(route: Route, request: Any, messages: list[Any]) -> bool:
    """Whether the request already carries a skill block (a retry, or a second hook on one call)."""
    return already_injected(messages) if route.injected is None else route.injected(request)


def _render(route: Route, request: dict[str, Any], turn: PreparedTurn) -> None:
    """Put the prepared turn's block into the request: the chat route sends the prepared messages; the others
    get the block in their own system field (``system``, ``instructions``) and keep their own messages."""
    if route.inject is None:
        request["messages"] = turn.messages
    elif turn.block.text and turn.rendered:
        route.inject(request, turn.block.text)
