"""The one door through which the plugin itself calls an LLM (the judge, the evolver, memory extraction and skill
review): a configured LiteLLM model, or the host's own model as its adapter offers it (``learning.model: host``).

Every call goes through :class:`LLMClient`, which

* redacts every outbound message (a last line of defence: callers redact too);
* refuses non-local endpoints when ``privacy.local_only`` is on;
* charges a per-day budget (calls and tokens) kept in the database (:mod:`..store.budget`), so it holds
  across restarts and processes sharing a home; a call to the host's model also charges the host's budget
  (``learning.daily_*``);
* applies a timeout, and retries with exponential backoff and jitter (:func:`..store.jobs.backoff`, the job
  queues' formula);
* on the host's model, gives way to the host's own traffic before each call (:mod:`..hosttraffic`): it waits,
  up to a bound, while the host has requests in flight;
* imports ``litellm`` lazily: the request path never imports this module, and a missing extra
  becomes :class:`LLMUnavailable` with an install hint instead of an ImportError in the host.

Any failure is an :class:`LLMError`; callers (background jobs) catch it, keep the work queued and
retry later. Nothing here is ever raised into a host's call.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import os
import re
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from ..hostmodel import HostModels, plugin_call
from ..privacy import Redactor
from ..store import AnyDatabase, Database
from ..store import budget as llm_budget
from ..store.jobs import backoff
from ..text import approx_message_tokens, approx_tokens, content_text

log = logging.getLogger("metaclaw_plugin.llm")

HOST_NOT_KNOWN = "the host's model is not known yet"
HOST = "host"  # the budget of the calls to the host's own model, all roles together
LOCAL_PROVIDERS = ("ollama/", "ollama_chat/", "lm_studio/", "llamafile/")


class LLMError(Exception):
    """A plugin LLM call did not produce an answer (retried later by the caller)."""


class LLMUnavailable(LLMError):
    """No call can be made now: not configured, litellm missing, local_only, or the budget is spent."""


class BudgetExhausted(LLMUnavailable):
    pass


class LLMDown(LLMError):
    """The model's service did not answer (no connection, a timeout, a 5xx or a rate limit): an outage, the same for
    every call until it ends, rather than a fault of this call."""


def utc_day(ts: float | None = None) -> str:
    return datetime.fromtimestamp(time.time() if ts is None else ts, UTC).strftime("%Y-%m-%d")


def day_start(ts: float | None = None) -> float:
    d = datetime.fromtimestamp(time.time() if ts is None else ts, UTC)
    return d.replace(hour=0, minute=0, second=0, microsecond=0).timestamp()


def is_local_endpoint(model: str | None, api_base: str | None) -> bool:
    """True when a call would stay on this machine (loopback address, or a local provider's default)."""
    if api_base:
        host = urlparse(api_base if "://" in api_base else f"http://{api_base}").hostname or ""
        if host in ("localhost", "localhost.localdomain") or host.endswith(".localhost"):
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False
    return bool(model) and model.startswith(LOCAL_PROVIDERS)  # type: ignore[union-attr]


class Budget:
    """Calls and tokens per UTC day and purpose ("judge", "evolver"), in the database."""

    def __init__(self, db: AnyDatabase | Path | str, limits: dict[str, tuple[int, int]] | None = None):
        self.db = Database(db) if isinstance(db, Path | str) else db
        self.limits = dict(limits or {})  # purpose -> (calls, tokens); 0 = unlimited
        self._lock = threading.Lock()
        self._held: Counter[str] = Counter()  # calls of this process in flight, not charged yet

    def close(self) -> None:
        self.db.close()

    def used(self, purpose: str, day: str | None = None) -> tuple[int, int]:
        return llm_budget.spent(self.db.query, day or utc_day()).get(purpose, (0, 0))

    def left(self, purpose: str) -> dict[str, int | None]:
        calls, tokens = self.used(purpose)
        lim_calls, lim_tokens = self.limits.get(purpose, (0, 0))
        return {
            "calls_used": calls,
            "tokens_used": tokens,
            "calls_left": max(0, lim_calls - calls) if lim_calls else None,
            "tokens_left": max(0, lim_tokens - tokens) if lim_tokens else None,
        }

    def hold(self, purposes: Sequence[str]) -> None:
        """Check every purpose's budget, counting this process's calls in flight (parallel judge votes), and hold
        one call of each until :meth:`settle`; BudgetExhausted (nothing held) when one is spent."""
        with self._lock:
            for purpose in purposes:
                self.check(purpose, 1 + self._held[purpose])
            self._held.update(purposes)

    def settle(self, purposes: Sequence[str], tokens: int, failed: bool = False) -> None:
        """Charge one held call to each purpose and release its hold, together: a hold taken in between never
        counts the call twice (once charged, once still held)."""
        with self._lock:
            try:
                for purpose in purposes:
                    self.charge(purpose, 1, tokens, failed=failed)
            finally:
                self._held.subtract(purposes)

    def check(self, purpose: str, calls: int = 1) -> None:
        used_calls, used_tokens = self.used(purpose)
        lim_calls, lim_tokens = self.limits.get(purpose, (0, 0))
        if lim_calls and used_calls + calls > lim_calls:
            raise BudgetExhausted(f"{purpose}: daily call budget spent ({used_calls + calls - 1}/{lim_calls})")
        if lim_tokens and used_tokens >= lim_tokens:
            raise BudgetExhausted(f"{purpose}: daily token budget spent ({used_tokens}/{lim_tokens})")

    def charge(self, purpose: str, calls: int = 1, tokens: int = 0, failed: bool = False) -> None:
        llm_budget.charge(self.db, utc_day(), purpose, calls, tokens, failed)


@dataclass
class LLMResult:
    text: str
    prompt_tokens: int
    completion_tokens: int
    attempts: int

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class LLMClient:
    def __init__(
        self,
        purpose: str,
        *,
        model: str | None,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout: float = 30.0,
        retries: int = 2,
        backoff: float = 1.0,
        budget: Budget | None = None,
        local_only: bool = False,
        redactor: Redactor | None = None,
        sleep: Callable[[float], None] = time.sleep,
        host: HostModels | None = None,
    ):
        self.purpose = purpose
        self._model = model
        self.host = None if model else host  # the host's own model, where this role's is unset
        self.api_base = api_base
        self.api_key = api_key
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.budget = budget
        self.local_only = local_only
        self.redactor = redactor
        self._sleep = sleep
        self.calls = 0
        self.tokens = 0
        self.failures = 0

    @property
    def model(self) -> str | None:
        """The model called: the configured one, else the host's (None until its adapter offers it)."""
        if self._model or self.host is None:
            return self._model
        hm = self.host.get()
        return hm.name if hm is not None else None

    def unavailable_reason(self) -> str | None:
        """Why no call can be made (configuration only; the budget is checked per call)."""
        if self.host is not None:
            hm = self.host.get()
            if hm is None:
                return HOST_NOT_KNOWN + " (its adapter offers it with the first request)"
            if self.local_only and not hm.local:
                return f"privacy.local_only forbids the host's non-local model {hm.describe()}"
            return None
        if not self.model:
            return f"no {self.purpose} model configured"
        if self.local_only and not is_local_endpoint(self.model, self.api_base):
            return f"privacy.local_only forbids the non-local {self.purpose} endpoint {self.api_base or self.model!r}"
        try:
            import importlib.util

            if importlib.util.find_spec("litellm") is None:
                return "litellm is not installed (pip install 'metaclaw-plugin[litellm]')"
        except (ImportError, ValueError):
            return "litellm is not importable"
        return None

    def complete(
        self, messages: Sequence[dict[str, Any]], *, temperature: float = 0.0, max_tokens: int = 512
    ) -> LLMResult:
        reason = self.unavailable_reason()
        if reason:
            raise LLMUnavailable(reason)
        models = self.host
        host = models.get() if models is not None else None
        litellm = _import_litellm() if host is None else None
        msgs = [self.redactor.redact_obj(dict(m)) for m in messages] if self.redactor else [dict(m) for m in messages]
        last: Exception | None = None
        purposes = (self.purpose, HOST) if host is not None else (self.purpose,)
        for attempt in range(self.retries + 1):
            if self.budget is not None:
                self.budget.hold(purposes)  # first: a spent budget does not wait for a quiet host
            try:
                if host is not None and models is not None:
                    models.give_way.wait()  # the budget held meanwhile, so parallel calls cannot overshoot it
                    with plugin_call():
                        reply = host.call(msgs, temperature, max_tokens, self.purpose)
                    pt = reply.prompt_tokens or approx_message_tokens(msgs)
                    ct = reply.completion_tokens or approx_tokens(reply.text)
                    self._charge(True, pt + ct)
                    return LLMResult(reply.text, pt, ct, attempt + 1)
                assert litellm is not None
                resp = litellm.completion(
                    model=self.model,
                    messages=msgs,
                    api_base=self.api_base,
                    api_key=self.api_key,
                    temperature=temperature,
                    max_tokens=max_tokens,
                    timeout=self.timeout,
                    num_retries=0,
                    # Our own calls must not be captured as turns by a MetaClaw callback registered in
                    # the same process (the LiteLLM proxy or SDK adapter): that would judge the judge.
                    metadata={"metaclaw_internal": True, "purpose": self.purpose},
                    **{"no-log": True},
                )
                text = _content(resp)
                usage = getattr(resp, "usage", None)
                pt = int(getattr(usage, "prompt_tokens", 0) or 0) if usage else approx_message_tokens(msgs)
                ct = int(getattr(usage, "completion_tokens", 0) or 0) if usage else approx_tokens(text)
                self._charge(False, pt + ct)
                return LLMResult(text, pt, ct, attempt + 1)
            except Exception as e:
                last = e
                self.failures += 1
                self._charge(host is not None, approx_message_tokens(msgs), failed=True)
                if not _retryable(e) or attempt >= self.retries:
                    break
                delay = backoff(self.backoff, attempt + 1)
                log.info("%s call failed (%s); retry %d in %.1fs", self.purpose, _short(e), attempt + 1, delay)
                self._sleep(delay)
        raise (LLMDown if last is not None and _down(last) else LLMError)(f"{self.purpose} call failed: {_short(last)}")

    def _charge(self, on_host: bool, tokens: int, failed: bool = False) -> None:
        """Count one call, on this role's budget and, on the host's model, on the host's too; release its hold."""
        self.calls += 1
        if not failed:
            self.tokens += tokens
        if self.budget is not None:
            self.budget.settle((self.purpose, HOST) if on_host else (self.purpose,), tokens, failed=failed)


def _import_litellm() -> Any:
    """Import litellm (lazy: heavy, and an optional extra). Where we are the first to import it, its
    model cost map is read from the bundled copy: a background judge must not reach out to the
    internet as a side effect of an import (and that fetch takes seconds when offline)."""
    if "litellm" not in sys.modules:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import litellm
    except Exception as e:
        raise LLMUnavailable(f"litellm cannot be imported: {type(e).__name__}: {e}") from None
    return litellm


def _content(resp: Any) -> str:
    try:
        choice = resp.choices[0]
        msg = choice.message if hasattr(choice, "message") else choice["message"]
        content = msg.content if hasattr(msg, "content") else msg.get("content")
    except (AttributeError, IndexError, KeyError, TypeError):
        raise LLMError("malformed completion (no choices[0].message)") from None
    return content_text(content) if isinstance(content, list) else str(content or "")


def _retryable(e: Exception) -> bool:
    if isinstance(e, LLMUnavailable):
        return False
    status = getattr(e, "status_code", None)
    if isinstance(status, int) and status in (400, 401, 403, 404, 422):
        return False  # our request or our key is wrong: retrying now will not help
    return True


def _down(e: Exception) -> bool:
    """Whether ``e`` says the service is out (rather than that this call was wrong)."""
    status = getattr(e, "status_code", None)
    if isinstance(status, int):
        return status in (408, 429) or status >= 500
    return isinstance(e, ConnectionError | TimeoutError)


def _short(e: BaseException | None) -> str:
    if e is None:
        return "unknown error"
    text = str(e).splitlines()[0] if str(e) else ""
    return f"{type(e).__name__}: {text[:200]}"


def extract_json(text: str) -> Any:
    """The first JSON object or array in an LLM answer (fenced or not, with prose around it)."""
    if not text:
        raise ValueError("empty answer")
    cleaned = text.strip()
    fence = re.search(r"```(?:json)?\s*([\s\S]*?)```", cleaned)
    candidates = [cleaned]
    if fence:
        candidates.insert(0, fence.group(1).strip())
    for cand in candidates:
        try:
            return json.loads(cand)
        except ValueError:
            pass
    decoder = json.JSONDecoder()
    for i, ch in enumerate(cleaned):
        if ch in "{[":
            try:
                obj, _ = decoder.raw_decode(cleaned[i:])
                if isinstance(obj, (dict, list)) and obj:
                    return obj
            except ValueError:
                continue
    raise ValueError("no JSON object or array in the answer")


def model_source(cfg: Any, learning: Any) -> tuple[str, str | None]:
    """Where a role's model comes from: ("own", its model), ("learning", learning.model), ("host", None: the host's
    own model) or ("none", None)."""
    if cfg.model:
        return "own", cfg.model
    choice = getattr(learning, "model", "none") if learning is not None else "none"
    if choice == "host":
        return "host", None
    if choice == "none":
        return "none", None
    return "learning", choice


def client_for(
    purpose: str,
    cfg: Any,
    *,
    budget: Budget | None,
    local_only: bool,
    redactor: Redactor | None,
    learning: Any = None,
    host: HostModels | None = None,
) -> LLMClient:
    """The client of one role (judge, evolver, memory, review) from its settings section: endpoint, key, retries;
    where the section sets no model, ``learning.model`` chooses (the host's own model, another model, or none)."""
    source, model = model_source(cfg, learning)
    own = source == "own"
    return LLMClient(
        purpose,
        model=model,
        api_base=cfg.api_base if own else None,
        api_key=cfg.api_key if own else None,
        timeout=cfg.timeout,
        retries=cfg.retries,
        backoff=cfg.backoff,
        budget=budget,
        local_only=local_only,
        redactor=redactor,
        host=host if source == "host" else None,
    )
