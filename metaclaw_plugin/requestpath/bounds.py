"""What may cross a boundary (the plugin's hooks, the sidecar's bodies) and how it looks once inside.

One module for both sides, so they agree: the sidecar refuses what breaks these bounds with a 400/422, the hooks
coerce it (or refuse the turn) and count it, failing open. Inside, ids are non-empty bounded text with no control
character, NUL or lone surrogate; numbers are finite and bounded; JSON values have a bounded depth; and an id that
holds a secret is replaced by a stable keyed hash (:class:`Identifiers`), so it never reaches disk or a screen while
the turns of its session still join.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import re
import secrets
import threading
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from uuid import UUID

from ..infra.keyfile import load_or_create_secret
from ..infra.memo import Memo

if TYPE_CHECKING:
    from ..privacy import Redactor

ID_MAX = 256  # session, tenant, user, request/run ids
# An id as a host may send one (a sidecar body or path): one longer than ID_MAX is stored as its keyed hash, never
# cut, since a cut would make two users (or tenants, or sessions) that share a prefix one.
ID_SENT_MAX = 16 * ID_MAX
LABEL_MAX = 256  # model, host
REASON_MAX = 200  # a session end's reason
TEXT_MAX = 100_000  # an error, a feedback text, a string inside usage or an outcome
GENERATION_MAX = 2**53 - 1  # a skill generation (exact in JSON doubles, so in JavaScript too)
LATENCY_MAX_MS = 30 * 86_400_000.0  # a month: longer latencies are clamped
INT_MAX = 2**63 - 1  # SQLite's INTEGER; larger integers in usage/outcome values are clamped
DEPTH_MAX = 64  # nesting of a JSON body or value
ITEMS_MAX = 1000  # keys or items kept per object/array of usage and outcome values
KEY_FILE = "ids.key"  # the home's key for hashing ids that hold a secret
HASHED_PREFIX = "redacted-"  # a secret-bearing id, as stored: HASHED_PREFIX + 24 hex digits

_BAD = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff]")  # control characters (NUL among them) and lone surrogates
_OURS = re.compile(r"^(?:redacted|h)-[0-9a-f]{24}$")  # ids this module made: kept as they are
# Hex, UUIDs and numbers, with a short word before them (``req-1f3a...``, ``run_42``): what generated ids look like,
# and what the redactor calls identifiers, not secrets (commit hashes, UUIDs); kept without running it.
_PLAIN = re.compile(r"^(?:[A-Za-z]{1,16}[-_:.])?[0-9a-fA-F-]{1,64}$")
# What the redactor calls a secret only because it looks random: a session or request id is random by design (an
# opencode ``ses_01JH...``, an MCP session id), so these labels alone never make one a secret.
RANDOM_ONLY = frozenset({"high_entropy"})


class Refused(ValueError):
    """Input that cannot be coerced into bounds (no session to end, a tenant that is not text). The hooks count and
    log it and the host call goes on unchanged; the sidecar answers 400."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


def text_problem(s: str) -> str | None:
    """Why ``s`` cannot be an id or label (control characters, NUL, lone surrogates), or None."""
    m = _BAD.search(s)
    if m is None:
        return None
    c = m.group(0)
    if c == "\0":
        return "must not contain NUL"
    if "\ud800" <= c <= "\udfff":
        return "must be valid Unicode text (it holds a lone surrogate)"
    return "must not contain control characters"


def clean_text(s: str) -> str:
    """``s`` with control characters, NUL and lone surrogates replaced by U+FFFD."""
    return _BAD.sub("\ufffd", s) if _BAD.search(s) else s


def coerce_id(value: Any) -> str | None:
    """An id from a host value, unbounded in length: text stripped (bad characters replaced) and in Unicode NFC (one
    name typed on two systems is one id), integers and UUIDs as text; None for nothing usable (None, empty, booleans,
    floats, other types)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        value = str(value) if -INT_MAX <= value <= INT_MAX else None
    elif isinstance(value, UUID):
        value = str(value)
    if not isinstance(value, str):
        return None
    value = clean_text(value).strip()
    if not value.isascii():
        value = unicodedata.normalize("NFC", value)
    return value or None


def bounded_int(value: Any, lo: int, hi: int) -> int | None:
    """An integer in [lo, hi] (an integral finite float counts), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and lo <= value <= hi:
        return value
    return None


def bounded_float(value: Any, lo: float, hi: float) -> float | None:
    """A finite number clamped into [lo, hi], else None (NaN, infinities, booleans, other types)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, int):
        return float(min(max(value, lo), hi))  # compared as integers: no overflow on huge ones
    if not math.isfinite(value):
        return None
    return min(max(value, lo), hi)


def json_value(value: Any, text: Callable[[str], str] | None = None, depth: int = DEPTH_MAX) -> Any:
    """A JSON-safe copy of a host value (usage, an outcome): strings (keys too) bounded and cleaned
    (:func:`clean_text`, or ``text``, which also redacts), integers clamped to SQLite's range, non-finite floats as
    None, at most ``ITEMS_MAX`` items per level and ``depth`` levels; anything else (objects, bytes, what lies
    deeper) becomes None."""
    t = type(value)
    if t is int:
        return value if -INT_MAX <= value <= INT_MAX else (INT_MAX if value > 0 else -INT_MAX)
    if t is str:
        return text(value) if text is not None else clean_text(value[:TEXT_MAX])
    if value is None or t is bool:
        return value
    if t is float:
        return value if math.isfinite(value) else None
    if isinstance(value, (bool, int, float, str)):  # subclasses (IntEnum, numpy scalars...): as their base type
        base = (
            bool
            if isinstance(value, bool)
            else int
            if isinstance(value, int)
            else float
            if isinstance(value, float)
            else str
        )
        return json_value(base(value), text, depth)
    if depth <= 0:
        return None
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if len(out) >= ITEMS_MAX:
                break
            key = k if type(k) is str else coerce_id(k)
            if key is not None:
                key = key[:LABEL_MAX]
                out[text(key) if text is not None else clean_text(key)] = json_value(v, text, depth - 1)
        return out
    if isinstance(value, (list, tuple)):
        return [json_value(v, text, depth - 1) for v in value[:ITEMS_MAX]]
    return None


def finite_json(value: Any) -> Any:
    """``value`` with non-finite floats as None, for output (a JSON response, ``--json``): what an older version
    stored (``latency_ms: inf``) must not make a read fail."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_json(v) for v in value]
    return value


def json_depth_exceeds(value: Any, limit: int = DEPTH_MAX) -> bool:
    """Whether a parsed JSON value nests deeper than ``limit`` (walked without recursion)."""
    stack = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            v = list(v.values())
        elif not isinstance(v, list):
            continue
        if d > limit:
            return True
        stack.extend((x, d + 1) for x in v if isinstance(x, (dict, list)))
    return False


FLATTENED = "[metaclaw: nested deeper than {} levels; flattened to its text] "


def within_depth(value: Any, limit: int = DEPTH_MAX) -> tuple[Any, bool]:
    """``value`` (a message, a response) with whatever lies deeper than ``limit`` levels replaced by the text it holds,
    after a note (:data:`FLATTENED`), and whether anything was. A recorder that walks a value recursively (redaction,
    hashing, snapshots) meets only bounded depth, so no input shape can make a turn go unrecorded; the text inside the
    deep part is kept (and redacted like any other text), only its structure is not."""
    if not json_depth_exceeds(value, limit):
        return value, False
    return _cut_deep(value, limit), True


def _cut_deep(v: Any, depth: int) -> Any:
    if not isinstance(v, (dict, list, tuple)):
        return v
    if depth <= 1:
        return FLATTENED.format(DEPTH_MAX) + " ".join(_texts(v))[:TEXT_MAX]
    if isinstance(v, dict):
        return {k: _cut_deep(x, depth - 1) for k, x in v.items()}
    return [_cut_deep(x, depth - 1) for x in v]


def _texts(value: Any) -> list[str]:
    """The strings inside ``value``, keys included, in order (walked without recursion), up to ``TEXT_MAX`` characters."""
    out: list[str] = []
    size = 0
    stack = [value]
    budget = 100_000  # nodes walked at most (a cycle, or a wide tree of empty lists, ends here)
    while stack and size < TEXT_MAX and budget > 0:
        budget -= 1
        v = stack.pop()
        if isinstance(v, str):
            out.append(v)
            size += len(v) + 1
        elif isinstance(v, dict):
            for k, x in reversed(list(v.items())):
                stack.append(x)
                if isinstance(k, str) and k not in ("type", "text", "content", "role"):
                    stack.append(k)
        elif isinstance(v, (list, tuple)):
            stack.extend(reversed(v))
    return out


class Identifiers:
    """Ids and labels as stored and shown.

    A joinable id (session, tenant, user, request) that holds a secret (as the store's :class:`Redactor` sees it)
    or is longer than ``ID_MAX`` becomes ``redacted-<24 hex>``: HMAC-SHA256 with this home's key (``ids.key``, mode
    0600, made on first need), so the same id maps to the same value in every turn and every process of the home,
    and nobody without the key can test a guess against it. A label (model, host, reason) is redacted in place and
    cut to its bound. With no redactor (``privacy.redact: false`` or ``store_raw``), ids are only bounded."""

    CACHE = 4096  # distinct raw ids remembered (a session's id repeats on every turn)

    def __init__(
        self,
        redactor: Redactor | None,
        key_path: Path,
        note: Callable[[str, str], None] | None = None,
        *,
        plain_ids: bool = True,
    ) -> None:
        """``note(field, problem)`` hears of each id whose text had to be cleaned (NUL, control characters, lone
        surrogates replaced by U+FFFD). ``plain_ids``: take hex/UUID/number ids as they are, without the redactor
        (off when extra patterns might match them)."""
        self.redactor = redactor
        self.plain_ids = plain_ids
        self.key_path = Path(key_path)
        self.note = note
        self._key: bytes | None = None
        self._lock = threading.Lock()
        self._cache: Memo[str, tuple[str, bool]] = Memo(self.CACHE)  # raw id -> (stored id, whether it was cleaned)
        self._session_cache: Memo[str, tuple[str, bool]] = Memo(self.CACHE)  # the same, for session and request ids
        self._labels: Memo[tuple[str, int], tuple[str, bool]] = Memo(self.CACHE)
        self._texts: Memo[str, str] = Memo(self.CACHE)

    def hashed(self, s: str) -> str:
        """``s`` as its keyed hash, whatever it holds: for a name that must not be taken as it is (a reserved one)."""
        return self._hash(s)

    def _hash(self, s: str) -> str:
        if self._key is None:
            with self._lock:
                if self._key is None:
                    self.key_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                    self._key = load_or_create_secret(self.key_path, lambda: secrets.token_hex(32)).encode()
        digest = hmac.new(self._key, s.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()
        return HASHED_PREFIX + digest[:24]

    def joinable(self, value: Any, field: str = "id") -> str | None:
        """The stored form of a tenant or user id (and of any id a caller names without saying which kind it is);
        None when ``value`` holds none."""
        return self._stored(value, field, self._cache, False)

    def session(self, value: Any, field: str = "session_id") -> str | None:
        """The stored form of a session or request id: like :meth:`joinable`, but an id is hashed only when it holds
        a secret of a known kind (a provider key, a token with its prefix, a password assignment), never because it
        merely looks random: session and request ids are random by design (opencode's ``ses_01JH...``, an MCP
        session id), and hashing them would hide what the host knows them by."""
        return self._stored(value, field, self._session_cache, True)

    def _stored(self, value: Any, field: str, cache: Memo[str, tuple[str, bool]], random_ok: bool) -> str | None:
        cacheable = type(value) is str and len(value) <= 4 * ID_MAX
        hit = cache.get(value) if cacheable else None
        if hit is None:
            s = coerce_id(value)
            if s is None:
                return None
            hit = self._joinable(s, random_ok), isinstance(value, str) and _BAD.search(value) is not None
            if cacheable:
                cache.put(value, hit)
        if hit[1] and self.note is not None:
            self.note(field, "held NUL, control characters or lone surrogates; replaced")
        return hit[0]

    def _joinable(self, s: str, random_ok: bool = False) -> str:
        if _OURS.match(s) or (self.plain_ids and _PLAIN.match(s)):
            return s
        if self.redactor is None:
            return s if len(s) <= ID_MAX else "h-" + hashlib.blake2b(s.encode(), digest_size=12).hexdigest()
        if len(s) > ID_MAX:
            return self._hash(s)
        if random_ok:
            return self._hash(s) if set(self.redactor.find(s)) - RANDOM_ONLY else s
        return self._hash(s) if self.redactor.redact(s) != s else s

    def text(self, s: str) -> str:
        """``s`` cut to ``TEXT_MAX``, cleaned (:func:`clean_text`) and redacted; short texts (the keys and values of
        usage, which repeat on every turn) from a cache."""
        if len(s) > LABEL_MAX:
            s = clean_text(s[:TEXT_MAX])
            return self.redactor.redact(s) if self.redactor is not None else s
        out = self._texts.get(s)
        if out is None:
            out = clean_text(s)
            out = self.redactor.redact(out) if self.redactor is not None else out
            self._texts.put(s, out)
        return out

    def label(self, value: Any, limit: int = LABEL_MAX, field: str = "label") -> str | None:
        """A model name, host or reason as stored: text cut to ``limit``, a secret in it replaced by its placeholder
        (redacted before the cut, so a secret across the cut is still found)."""
        cacheable = type(value) is str and len(value) <= 4 * limit
        hit = self._labels.get((value, limit)) if cacheable else None
        if hit is None:
            s = coerce_id(value)
            if s is None:
                return None
            s = s[: 4 * limit]
            hit = (
                (self.redactor.redact(s) if self.redactor is not None else s)[:limit],
                (isinstance(value, str) and _BAD.search(value) is not None),
            )
            if cacheable:
                self._labels.put((value, limit), hit)
        if hit[1] and self.note is not None:
            self.note(field, "held NUL, control characters or lone surrogates; replaced")
        return hit[0]


def home_identifiers(
    settings: Any, redactor: Redactor | None = None, note: Callable[[str, str], None] | None = None
) -> Identifiers:
    """The ids of ``settings``' home as the hooks store them, for every other surface that takes a tenant, user or
    session id (memory tools and API, CLI, MCP): a name given there must key the same rows as on the request path.
    ``redactor``: one already built from ``settings.privacy`` (else one is built when redaction is on)."""
    p = settings.privacy
    if not p.redact or p.store_raw:
        redactor = None
    elif redactor is None:
        from ..privacy import redactor_for

        redactor = redactor_for(p)
    return Identifiers(redactor, Path(settings.home_dir) / KEY_FILE, note, plain_ids=not p.extra_patterns)
