"""The plugin's boundary with its host: what the host passes is coerced to the bounds of :mod:`.bounds` or refused,
and counted (``problems``: status's ``input_problems``); what breaks in the plugin is logged and counted
(``errors``), never raised into the host. Both the turn path and the plugin's lifecycle report here.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..config import Settings
from ..memory.model import RESERVED_USERS
from ..privacy import Redactor
from ..types import DEFAULT_TENANT, Message, TurnContext, new_id
from .bounds import (
    DEPTH_MAX,
    GENERATION_MAX,
    LABEL_MAX,
    LATENCY_MAX_MS,
    TEXT_MAX,
    Refused,
    bounded_float,
    bounded_int,
    clean_text,
    home_identifiers,
    json_value,
    within_depth,
)
from .sessions import stored_session
from .turns import FailOpen

log = logging.getLogger("metaclaw_plugin")
_fail = FailOpen(log, "metaclaw", what="the host call")


class Boundary:
    def __init__(self, settings: Settings, redactor: Redactor | None):
        self.problems: Counter[str] = Counter()  # "field: problem" -> inputs coerced or refused
        self.errors: Counter[str] = Counter()  # where -> failures logged and swallowed
        # Ids and labels as stored: bounded, and a keyed hash for one that holds a secret (see bounds.Identifiers).
        self.ids = home_identifiers(settings, redactor, self.note)

    def fail(self, where: str, e: BaseException | None = None) -> None:
        """Inside ``except``: log and count the failure at ``where`` (a refused input counts as an input problem)."""
        if isinstance(e, Refused):
            self.note(e.field, f"{e.problem}; {where} refused")
            return
        _fail(where, self)

    def note(self, field: str, problem: str) -> None:
        key = f"{field}: {problem}"
        self.problems[key] += 1
        n = self.problems[key]
        if n == 1 or n % 1000 == 0:
            log.warning("metaclaw input %s (%d so far); the host call continues unchanged", key, n)

    def context(self, ctx: TurnContext, *, session: bool = True) -> TurnContext:
        """A copy of ``ctx`` with every field within bounds and every id as stored (a secret-bearing one hashed).
        A missing request id is set on ``ctx`` too, so its response still finds its request; a missing session id
        becomes the request's own (``session=False``: refused, for ends and feedback that name no session)."""
        if not isinstance(ctx, TurnContext):
            raise Refused("ctx", f"must be a TurnContext, got {type(ctx).__name__}")
        ids = self.ids
        rid = ids.session(ctx.request_id, "request_id")
        if rid is None:
            self.note("request_id", "missing or not text; a new one was made")
            rid = ctx.request_id = new_id()
        raw_tenant: Any = ctx.tenant
        blank = raw_tenant is None or (isinstance(raw_tenant, str) and not raw_tenant.strip())
        tenant = DEFAULT_TENANT if blank else ids.joinable(raw_tenant, "tenant")
        if tenant is None:
            raise Refused("tenant", f"must be text, got {type(raw_tenant).__name__}")
        sid = ids.session(ctx.session_id, "session_id")
        if sid is None:
            if not session:
                raise Refused("session_id", "missing or not text")
            self.note("session_id", "missing or not text; the turn is a session of its own")
            sid = ids.session("request-" + rid) or rid
        user = ids.joinable(ctx.user, "user")
        if user in RESERVED_USERS:  # a host's user named like a bucket the plugin keeps is a user, not the bucket
            user = ids.hashed(user)
        if user is None and ctx.user is not None:
            self.note("user", f"not text ({type(ctx.user).__name__}); dropped")
        made = isinstance(ctx.metadata, dict) and ctx.metadata.get("session_source") == "fingerprint"
        sid = stored_session(ids, sid, user, turn=session, fingerprint=made)  # a session belongs to one (tenant, user)
        model = ids.label(ctx.model, field="model")
        if model is None and ctx.model is not None:
            self.note("model", f"not text ({type(ctx.model).__name__}); dropped")
        kind = ctx.kind
        if kind not in ("main", "side"):
            self.note("kind", "not main or side; taken as main")
            kind = "main"
        gen = ctx.skill_generation
        if gen is not None:
            gen = bounded_int(gen, 0, GENERATION_MAX)
            if gen is None:
                self.note("skill_generation", f"not an integer in [0, {GENERATION_MAX}]; the current one is used")
        host = ids.label(ctx.host, field="host") or "unknown"
        if (
            sid == ctx.session_id
            and rid == ctx.request_id
            and tenant == ctx.tenant
            and user == ctx.user
            and model == ctx.model
            and host == ctx.host
            and kind == ctx.kind
            and type(gen) is type(ctx.skill_generation)
            and gen == ctx.skill_generation
        ):
            return ctx  # all within bounds already (nearly every turn): no copy
        return dataclasses.replace(
            ctx,
            request_id=rid,
            session_id=sid,
            tenant=tenant,
            user=user,
            model=model,
            kind=kind,
            host=host,
            skill_generation=gen,
        )

    def messages(self, messages: Any) -> list[Message]:
        if messages is None:
            return []
        if not isinstance(messages, (list, tuple)):
            self.note("messages", f"not a list ({type(messages).__name__}); recorded as none")
            return []
        return list(messages)

    def depth_bounded(self, messages: list[Message], field: str) -> list[Message]:
        """The messages with structure past ``DEPTH_MAX`` levels flattened to its text (bounds.within_depth), so the
        recorder's walks are bounded and the turn is recorded whatever its shape; counted as an input problem."""
        out = messages
        for i, m in enumerate(messages):
            if type(m) is dict and all(type(v) is str for v in m.values()):
                continue  # nearly every message: role and text
            kept, cut = within_depth(m)
            if cut:
                if out is messages:
                    out = list(messages)
                out[i] = kept
                self.note(field, f"nested deeper than {DEPTH_MAX} levels; flattened to its text")
        return out

    def names(self, names: Any) -> list[str]:
        """Skill names a host says it injected: text, bounded, at most 1000."""
        if not isinstance(names, (list, tuple)):
            return []
        out = [self.ids.label(n, LABEL_MAX, "injected_skills") for n in names[:1000] if isinstance(n, str)]
        return [n for n in out if n]

    def tool_calls(self, response: Message | None) -> list[dict[str, Any]]:
        calls = response.get("tool_calls") if response else None
        if not calls:
            return []
        kept = [c for c in calls if isinstance(c, dict)] if isinstance(calls, (list, tuple)) else []
        if len(kept) != (len(calls) if isinstance(calls, (list, tuple)) else -1):
            self.note("tool_calls", "not a list of dicts; what is not a dict was dropped")
        return kept

    def turn_time(self, value: Any) -> float:
        """A turn's time (``TurnContext.started_at``): a finite time no later than a day from now, else now."""
        now = time.time()
        at = bounded_float(value, 0.0, now + 86_400.0)
        if at is None or at != value or at <= 0.0:
            self.note("started_at", "not a time up to a day from now; now is used")
            return now
        return at

    def latency(self, value: Any) -> float | None:
        ms = bounded_float(value, 0.0, LATENCY_MAX_MS)
        if ms is None:
            self.note("latency_ms", "not a finite number; measured instead")
        elif ms != value:
            self.note("latency_ms", f"outside [0, {LATENCY_MAX_MS:.0f}]; clamped")
        return ms

    def usage(self, usage: Any) -> dict[str, Any] | None:
        if usage is None:
            return None
        if not isinstance(usage, dict):
            self.note("usage", f"not a dict ({type(usage).__name__}); dropped")
            return None
        clean = json_value(usage, self.ids.text)
        if clean != usage:
            self.note("usage", "values out of bounds or holding a secret; coerced")
        return clean or None


def tool_list(tools: Sequence[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """The tool definitions to keep: a list of dicts, or None (none, or not a list)."""
    if not isinstance(tools, (list, tuple)) or not tools:
        return None
    return [t for t in tools if isinstance(t, dict)] or None


def error_text(error: Any) -> str | None:
    """A failed call's error as recorded: text, cleaned and bounded."""
    if error is None or isinstance(error, str):
        return clean_text(error[:TEXT_MAX]) if error else None
    try:
        text = f"{type(error).__name__}: {error}" if isinstance(error, BaseException) else str(error)
    except Exception:
        text = type(error).__name__
    return clean_text(text[:TEXT_MAX])
