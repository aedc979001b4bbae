"""Pure translation helpers: LiteLLM request/response shapes to the core's neutral types.

Nothing here imports LiteLLM, does I/O or keeps state, so it is cheap and unit-testable. LiteLLM hands
hooks either its pydantic objects (``ModelResponse``, ``ModelResponseStream``, ``UserAPIKeyAuth``) or
plain dicts, depending on the path; every accessor below accepts both.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from metaclaw_plugin.integration import DEFAULT_TENANT, has_block

# The session-id helpers live in the core now (one fallback chain for every adapter); re-exported for old imports.
from metaclaw_plugin.integration import clean_session_id as clean_session_id

TRUE_STRINGS = frozenset({"1", "true", "yes", "on", "y", "t"})
CHAT_CALL_TYPES = frozenset({"completion", "acompletion"})
MASTER_KEY_TOKEN = "litellm_proxy_master_key"  # the proxy's stand-in for the master key (api_key, token)
ADMIN_USER = "default_user_id"  # the user_id the proxy gives the master key's calls (LITELLM_PROXY_ADMIN_NAME)
MAX_ERROR_CHARS = 2000


_MISSING = object()


def get(obj: Any, name: str, default: Any = None) -> Any:
    """``obj[name]`` for mappings, ``obj.name`` otherwise (dicts first: this runs on every request)."""
    if obj is None:
        return default
    if isinstance(obj, dict):
        return obj.get(name, default)
    extra: Any = getattr(obj, "__pydantic_extra__", _MISSING)
    if extra is not _MISSING:
        # A pydantic model (LiteLLM's responses and stream chunks): read fields and extras directly.
        # getattr would go through pydantic's __getattr__, which raises for an absent name: ~7 us,
        # and a stream calls this for every chunk.
        fields = obj.__dict__
        if name in fields:
            return fields[name]
        if extra and name in extra:
            return extra[name]
        if not hasattr(type(obj), name):
            return default
    value = getattr(obj, name, _MISSING)
    if value is not _MISSING:
        return value
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return default


def request_tools(request: Any) -> list[dict[str, Any]] | None:
    """The tool definitions of a request (body, call kwargs, or LiteLLM's call details: ``optional_params``)."""
    tools = get(request, "tools")
    if tools is None:
        tools = get(get(request, "optional_params"), "tools")
    return tools if isinstance(tools, list) and tools else None


def truthy(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value != 0
    if isinstance(value, str):
        return value.strip().lower() in TRUE_STRINGS
    return False


def call_type_name(call_type: Any) -> str:
    """``"acompletion"`` for the string, the ``CallTypes`` enum member, or ``None``."""
    if call_type is None:
        return ""
    value = getattr(call_type, "value", call_type)
    return value if isinstance(value, str) else str(value)


def _view(obj: Any, names: tuple[str, ...]) -> dict[str, Any]:
    """``obj``'s values as a dict, to read several of them: a dict as is, a pydantic model's fields and
    extras without copying where it can (a stream reads each chunk this way), else ``names`` via ``get``."""
    if isinstance(obj, dict):
        return obj
    extra: Any = getattr(obj, "__pydantic_extra__", _MISSING)
    if extra is not _MISSING:
        fields = obj.__dict__
        if not extra:
            return fields
        return extra if not fields else {**fields, **extra}
    return {n: get(obj, n) for n in names}


def header(headers: Any, name: str) -> str | None:
    """A request header, case-insensitively (the proxy lower-cases them; raw dicts may not be)."""
    if not headers:
        return None
    try:
        v = headers.get(name)
        if v is None:
            lname = name.lower()
            for k, val in headers.items():
                if isinstance(k, str) and k.lower() == lname:
                    v = val
                    break
    except (AttributeError, TypeError):
        return None
    return v if isinstance(v, str) else None


def already_injected(messages: Any) -> bool:
    """True when a skill block is already in the messages (a retry, or a second hook on one call)."""
    if not isinstance(messages, list) or not messages:
        return False
    first = messages[0]
    if not isinstance(first, dict) or first.get("role") not in ("system", "developer"):
        return False
    return has_block(first.get("content"))


def tenant_from_key(user_api_key_dict: Any, mode: str = "key") -> str:
    """The tenant of a proxy request: its team, else its key (alias, or a hash of the key's hashed
    token; never the raw key). The master key and unauthenticated calls use the default tenant.

    ``mode``: ``"key"`` (team, then key), ``"team"`` (team only) or ``"none"`` (one shared tenant).
    """
    if user_api_key_dict is None or mode == "none":
        return DEFAULT_TENANT
    team = get(user_api_key_dict, "team_id")
    if isinstance(team, str) and team.strip():
        return "team:" + team.strip()  # whole: the core keys a long id by its hash (a cut would merge tenants)
    if mode == "team":
        return DEFAULT_TENANT
    return key_name(user_api_key_dict) or DEFAULT_TENANT


def key_name(user_api_key_dict: Any) -> str | None:
    """A virtual key as the plugin names it: ``key:<alias>``, else ``key:<hash of its hashed token>``; None for the
    master key and unauthenticated calls."""
    alias = get(user_api_key_dict, "key_alias")
    if isinstance(alias, str) and alias.strip():
        return "key:" + alias.strip()
    if get(user_api_key_dict, "api_key") == MASTER_KEY_TOKEN:
        return None
    token = get(user_api_key_dict, "token")
    if isinstance(token, str) and token and token != MASTER_KEY_TOKEN:
        return _key_tenant(token)
    return None


def key_user(user_api_key_dict: Any, tenant: str) -> str | None:
    """The user of a proxy request that names none: the key's owner (LiteLLM's ``user_id`` of the key), else, when
    the tenant is shared by several keys (a team, ``tenant_from: none``), the key itself, so that two people's keys
    in one team never share the memories and sessions of "the user nobody named". None when the key is the tenant
    (its user is the key's holder) and for the master key."""
    if user_api_key_dict is None or MASTER_KEY_TOKEN in (
        get(user_api_key_dict, "api_key"),
        get(user_api_key_dict, "token"),
    ):
        return None
    owner = get(user_api_key_dict, "user_id")
    if isinstance(owner, str) and owner.strip() and owner.strip() != ADMIN_USER:
        return owner.strip()
    name = key_name(user_api_key_dict)
    return name if name is not None and name != tenant else None


@functools.lru_cache(maxsize=4096)
def _key_tenant(token: str) -> str:
    """``token`` is already the proxy's hash of the key; hash again so that no value that the proxy
    itself uses for lookups lands in our store. Cached: the same few keys call again and again."""
    return "key:" + hashlib.sha256(b"metaclaw-tenant\x00" + token.encode()).hexdigest()[:16]


def usage_dict(usage: Any) -> dict[str, Any] | None:
    if usage is None:
        return None
    out = {}
    for k in ("prompt_tokens", "completion_tokens", "total_tokens"):
        v = get(usage, k)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[k] = v
    return out or None


def _tool_call_dict(tc: Any) -> dict[str, Any]:
    fn = get(tc, "function")
    args = get(fn, "arguments")
    return {
        "id": get(tc, "id"),
        "type": get(tc, "type") or "function",
        "function": {
            "name": get(fn, "name"),
            "arguments": args if isinstance(args, str) or args is None else str(args),
        },
    }


def response_message(response: Any) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The assistant message and the usage of a (non-streaming) chat completion response."""
    usage = usage_dict(get(response, "usage"))
    choices = get(response, "choices")
    if not choices:
        return None, usage
    msg = get(choices[0], "message")
    if msg is None:
        return None, usage
    out: dict[str, Any] = {"role": get(msg, "role") or "assistant", "content": get(msg, "content")}
    tool_calls = get(msg, "tool_calls")
    if tool_calls:
        out["tool_calls"] = [_tool_call_dict(tc) for tc in tool_calls]
    return out, usage


def is_chat_response(response: Any) -> bool:
    """A complete (non-streaming) chat completion, as opposed to a stream wrapper or another API's reply."""
    choices = get(response, "choices")
    return bool(choices) and get(choices[0], "message") is not None


def assemble_stream(chunks: list[Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The assistant message (text, tool calls by index) and usage of a streamed reply, from its chunks.

    Called once, at the end of the stream: reading each chunk as it passed cost ~13 us a chunk inside a
    loaded proxy (our code runs cold between LiteLLM's chunks), against ~4 us in one loop at the end.
    Usage comes from a usage chunk, else from LiteLLM's hidden params on the last chunk (where it keeps
    the usage that it strips from the chunks when the client did not ask for ``include_usage``)."""
    plain = _plain_litellm_text(chunks)
    if plain is not None:
        text, usage = plain
        return {"role": "assistant", "content": text}, usage or _hidden_usage(chunks)
    return _assemble_any(chunks)


def _assemble_any(chunks: list[Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """``assemble_stream`` for any chunk shape: dicts, models, tool calls."""
    parts: list[str] = []
    tools: dict[int, dict[str, Any]] = {}
    usage: dict[str, Any] | None = None
    for chunk in chunks:
        c = _view(chunk, ("usage", "choices"))
        u = c.get("usage")
        if u is not None:
            usage = usage_dict(u) or usage
        choices = c.get("choices")
        if not choices:
            continue
        delta = get(choices[0], "delta")
        if delta is None:
            continue
        d = _view(delta, ("content", "tool_calls"))
        piece = d.get("content")
        if isinstance(piece, str) and piece:
            parts.append(piece)
        tcs = d.get("tool_calls")
        if tcs:
            for tc in tcs:
                _add_tool_delta(tools, tc)
    if usage is None:
        usage = _hidden_usage(chunks)
    joined = "".join(parts)
    msg: dict[str, Any] = {"role": "assistant", "content": joined if (joined or not tools) else None}
    if tools:
        msg["tool_calls"] = [tools[i] for i in sorted(tools)]
    return msg, usage


def _plain_litellm_text(chunks: list[Any]) -> tuple[str, dict[str, Any] | None] | None:
    """The text and usage of a stream of LiteLLM's own text chunks (``ModelResponseStream``: the delta
    in the choice's extras, the text in the delta's extras), or None for anything else (dicts, tool
    calls, other shapes: ``_assemble_any`` reads those).

    A chunk's own extras are ignored but for ``usage``: the proxy passes the upstream's top-level keys
    through there (``service_tier``, ``citations``... as None), and the usage chunk keeps its usage there.
    By the end of a stream its chunks are out of the CPU caches and every object read is a cache miss,
    so this reads as few as it can (~4 us a chunk cold, against ~7 for the general reader)."""
    parts = []
    usage = None
    for chunk in chunks:
        extra = getattr(chunk, "__pydantic_extra__", None)
        if extra is None:
            return None
        f = chunk.__dict__
        u = f.get("usage")
        if extra:
            if "choices" in extra:
                return None
            u = u or extra.get("usage")
        if u is not None:
            usage = usage_dict(u) or usage
        choices = f.get("choices")
        if not choices:
            continue
        cx = getattr(choices[0], "__pydantic_extra__", None)
        delta = cx.get("delta") if cx else None
        if delta is None:
            return None
        dx = getattr(delta, "__pydantic_extra__", None)
        if not dx or dx.get("tool_calls"):
            return None
        piece = dx.get("content")
        if piece:
            if not isinstance(piece, str):
                return None
            parts.append(piece)
    return "".join(parts), usage


def _hidden_usage(chunks: list[Any]) -> dict[str, Any] | None:
    """The usage LiteLLM keeps in the last chunk's ``_hidden_params``: a pydantic private attribute, read
    from ``__pydantic_private__`` (``getattr`` goes through pydantic's ``__getattr__``: ~90 us cold)."""
    if not chunks:
        return None
    private = getattr(chunks[-1], "__pydantic_private__", None)
    hidden = private.get("_hidden_params") if isinstance(private, dict) else getattr(chunks[-1], "_hidden_params", None)
    return usage_dict(hidden.get("usage")) if isinstance(hidden, dict) else None


def _add_tool_delta(tools: dict[int, dict[str, Any]], tc: Any) -> None:
    """One streamed tool-call delta into its slot: the id and name once, the arguments appended."""
    idx = get(tc, "index")
    idx = idx if isinstance(idx, int) else len(tools)
    slot = tools.get(idx)
    if slot is None:
        slot = tools[idx] = {"id": None, "type": "function", "function": {"name": None, "arguments": ""}}
    tid = get(tc, "id")
    if tid:
        slot["id"] = tid
    fn = get(tc, "function")
    if fn is not None:
        name = get(fn, "name")
        if name and not slot["function"]["name"]:
            slot["function"]["name"] = name
        args = get(fn, "arguments")
        if isinstance(args, str):
            slot["function"]["arguments"] += args


def error_text(exc: Any, fallback: str | None = None) -> str:
    """One line naming the error: its type, HTTP status where known, and message (bounded)."""
    if exc is None:
        return (fallback or "unknown error")[:MAX_ERROR_CHARS]
    if isinstance(exc, str):
        return exc[:MAX_ERROR_CHARS]
    status = getattr(exc, "status_code", None) or getattr(exc, "code", None)
    msg = getattr(exc, "message", None) or str(exc)
    name = type(exc).__name__
    head = f"{name} {status}: " if isinstance(status, int) else f"{name}: "
    return (head + str(msg))[:MAX_ERROR_CHARS]


# Who a request speaks for, and the session it names ------------------------------------------------------------
USER_HEADERS = ("x-user-id", "x-litellm-end-user-id", "x-litellm-customer-id")
_LEGACY_CLAUDE = re.compile(r"^(?P<user>.+?)_session_[0-9A-Za-z-]{8,}$")


def _claude_fields(value: Any) -> dict[str, Any] | None:
    """Anthropic ``metadata.user_id`` as Claude Code sends it: a JSON object (``{"device_id", "account_uuid",
    "session_id"}``, as a string or a dict), else None."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            d = json.loads(value)
        except ValueError:
            return None
        return d if isinstance(d, dict) else None
    return None


def anthropic_user(value: Any) -> str | None:
    """The user in Anthropic's ``metadata.user_id``: the value as sent, except Claude Code's, which carries its
    session too (a JSON object with ``account_uuid``/``device_id``, or ``user_<hash>_account_<uuid>_session_<uuid>``):
    its account (else its device), so that every session of one person is one user."""
    fields = _claude_fields(value)
    if fields is not None:
        for k in ("account_uuid", "device_id", "user_id"):
            v = fields.get(k)
            if isinstance(v, str) and v.strip():
                return v.strip()
        return None
    if not isinstance(value, str) or not value.strip():
        return None
    v = value.strip()
    m = _LEGACY_CLAUDE.match(v)
    return m.group("user") if m else v


def anthropic_session(value: Any) -> str | None:
    """The session Claude Code puts in ``metadata.user_id`` (its JSON object's ``session_id``, or the legacy
    ``..._session_<uuid>`` tail), or None."""
    fields = _claude_fields(value)
    if fields is not None:
        sid = fields.get("session_id")
        return sid if isinstance(sid, str) and sid.strip() else None
    if isinstance(value, str):
        i = value.rfind("_session_")
        if i > 0 and _LEGACY_CLAUDE.match(value.strip()):
            return value.strip()[i + len("_session_") :] or None
    return None


def request_user(headers: Any, body: Any, *metadata: Any, session: Any = None) -> str | None:
    """The user a request speaks for, first match wins: the ``X-User-Id`` header (LiteLLM's
    ``x-litellm-end-user-id``/``x-litellm-customer-id`` too), the OpenAI ``user`` field, ``metadata.user_id`` of
    each metadata given (Anthropic's, as :func:`anthropic_user` reads it), the Responses ``safety_identifier``.
    ``session``: LiteLLM's session id of the request (it writes that over an Anthropic ``user_id`` object it read
    the session from; that value is not a user)."""
    for name in USER_HEADERS:
        v = header(headers, name)
        if v and v.strip():
            return v.strip()  # whole: the core keys a long id by its hash
    v = get(body, "user")
    if isinstance(v, str) and v.strip():
        return v.strip()
    for md in metadata:
        u = anthropic_user(get(md, "user_id")) if isinstance(md, dict) else None
        if u and u != session:
            return u
    v = get(body, "safety_identifier")
    return v.strip() if isinstance(v, str) and v.strip() else None
