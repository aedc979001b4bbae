"""Secret redaction, applied before anything reaches disk or leaves the process.

Placeholders keep the text readable for the evolver and the judge: ``[REDACTED:github_token]``
says what was there without saying what it was. Three layers:

1. Our own patterns for the formats that matter most to agent traffic (LLM provider keys, cloud and
   forge tokens, JWTs, bearer/basic auth, passwords in URLs and in assignments, private key blocks).
2. The regex detectors of Yelp's ``detect-secrets`` (a maintained library; optional: when it is not
   installed, layers 1 and 3 still run), so formats we never listed are covered as the library grows.
3. Shape and entropy: long, mixed-class, high-entropy runs, which is what generalises to providers
   nobody listed.
4. Composition: a keyword rule whose "value" is the key of a further assignment (``token:
   SMTP_PASS='...'``, ``secret: auth_key: ...``) redacts the value after that key; and, last, any long
   random-looking run (hex, base64/base64url, UUID, high entropy; 20+ characters) next to a secret word
   goes, whatever rule did or did not take it. Far from a secret word, or labelled ("commit <sha>",
   "sha256:<hex>"), a hash or a UUID is an identifier and stays.

Speed: each rule carries the literal text it needs (``sk-``, ``ghp_``, ``password``...); a rule
whose literal is absent is skipped with a substring test, so typical text costs a few regex passes.
Callers redact each distinct message once (the trajectory store caches by content hash).
"""

from __future__ import annotations

import logging
import math
import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from . import credentials
from .lookalikes import INVISIBLE, fold_mixed
from .regexlits import literal_scanner, required_literals

log = logging.getLogger("metaclaw_plugin.privacy")

PLACEHOLDER = "[REDACTED:{}]"

# Key names that say the value is a secret (lower case: the keyword rules run on the ASCII-lowered text).
# A superset of detect-secrets' KeywordDetector list (tests/core/test_privacy.py checks every entry of it).
_KEYWORD = (
    r"(?i)(?:(?<!by|om)pass(?:wd|word|wort|phrase)?|pwd|secret|token|credentials?|"
    r"contrase(?:ñ|n)a|kennwort|(?<![a-z0-9])auth(?![a-z])|(?<![a-z0-9])sig(?:nature)?(?![a-z])|"
    r"session[_\-]?(?:id|key|token|secret)|"
    r"(?:(?<![a-z0-9])|(?<=api|ess|ret|ate|ion|ign|unt|ter|ent|uth|ing|riv|ice|ase)|(?<=db))"
    r"key(?!error|board|word|stroke|note|frame|chain|pad|ring|space|code|press))"
)
_KEYWORD_LITERALS = (
    "pass",
    "pwd",
    "secret",
    "token",
    "credential",
    "contrase",
    "kennwort",
    "auth",
    "sig",
    "key",
    "session",
)
# Which label an assignment gets, from the keyword that named it (``DB_PASSWORD=[REDACTED:password]``).
_KEY_LABELS = (
    (("pass", "pwd", "contrase", "kennwort"), "password"),
    (("secret",), "secret"),
    (("token", "session"), "token"),
    (("credential",), "credential"),
    (("sig",), "signature"),
    (("auth",), "auth"),
    (("key",), "key"),
)

# (label, pattern, group to replace or 0 for the whole match, literals one of which must be present
# (lower case when the pattern is case-insensitive), or None to always run). Specific first.
_PATTERNS: list[tuple[str, str, int, tuple[str, ...] | None]] = [
    (
        "private_key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        0,
        ("PRIVATE KEY",),
    ),
    (
        "putty_private_key",
        r"PuTTY-User-Key-File-\d:[^\n]*(?:\n[^\n]*){0,40}?\nPrivate-MAC:[^\n]*",
        0,
        ("PuTTY-User-Key",),
    ),
    ("anthropic_key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}", 0, ("sk-ant-",)),
    ("openrouter_key", r"\bsk-or-v1-[A-Za-z0-9]{20,}", 0, ("sk-or-",)),
    ("openai_key", r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}", 0, ("sk-",)),
    (
        "stripe_key",
        r"\b(?:sk|rk|pk|whsec)_(?:live|test)_[A-Za-z0-9]{16,}|\bwhsec_[A-Za-z0-9]{24,}",
        0,
        ("_live_", "_test_", "whsec_"),
    ),
    ("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})", 0, ("gh", "github_pat_")),
    ("gitlab_token", r"\bgl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-[A-Za-z0-9_\-]{20,}", 0, ("gl",)),
    (
        "slack_token",
        r"\bxox[abposre]-[A-Za-z0-9\-]{10,}|https://hooks\.slack\.com/services/[A-Za-z0-9_/]{20,}",
        0,
        ("xox", "hooks.slack"),
    ),
    ("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}", 0, ("AIza",)),
    (
        "google_oauth",
        r"\bya29\.[0-9A-Za-z_\-]{20,}|\bGOCSPX-[0-9A-Za-z_\-]{20,}|\b1//0[0-9A-Za-z_\-]{30,}",
        0,
        ("ya29.", "GOCSPX-", "1//0"),
    ),
    ("huggingface_token", r"\bhf_[A-Za-z0-9]{30,}", 0, ("hf_",)),
    ("xai_key", r"\bxai-[A-Za-z0-9]{40,}", 0, ("xai-",)),
    ("groq_key", r"\bgsk_[A-Za-z0-9]{40,}", 0, ("gsk_",)),
    ("replicate_token", r"\br8_[A-Za-z0-9]{30,}", 0, ("r8_",)),
    ("perplexity_key", r"\bpplx-[A-Za-z0-9]{40,}", 0, ("pplx-",)),
    ("fireworks_key", r"\bfw_[A-Za-z0-9]{20,}", 0, ("fw_",)),
    ("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b", 0, ("npm_",)),
    ("pypi_token", r"\bpypi-AgE[A-Za-z0-9_\-]{50,}", 0, ("pypi-",)),
    ("databricks_token", r"\bdapi[0-9a-f]{32}(?:-\d)?\b", 0, ("dapi",)),
    ("digitalocean_token", r"\bdo[por]_v1_[a-f0-9]{64}\b", 0, ("_v1_",)),
    ("shopify_token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", 0, ("shp",)),
    ("sendgrid_key", r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{30,}", 0, ("SG.",)),
    ("mailgun_key", r"\bkey-[0-9a-f]{32}\b", 0, ("key-",)),
    ("vault_token", r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}", 0, ("hvs.", "hvb.", "hvr.")),
    ("doppler_token", r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}", 0, ("dp.",)),
    ("linear_key", r"\blin_api_[A-Za-z0-9]{40}\b", 0, ("lin_api_",)),
    ("notion_token", r"\b(?:ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43})\b", 0, ("ntn_", "secret_")),
    ("atlassian_token", r"\bATATT3[A-Za-z0-9_\-=]{100,}", 0, ("ATATT3",)),
    ("azure_storage_key", r"AccountKey=[A-Za-z0-9+/=]{80,}", 0, ("AccountKey=",)),
    ("aws_access_key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ABIA|ACCA|A3T[A-Z0-9])[0-9A-Z]{16}\b", 0, ("A",)),
    (
        "aws_secret_key",
        r"(?i)aws.{0,20}?(?:secret|key|token).{0,20}?[\s'\":=]([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
        1,
        ("aws",),
    ),
    ("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", 0, ("eyJ",)),
    ("bearer_token", r"(?i)\b(?:bearer|token)\s+([A-Za-z0-9._~+/\-]{16,}=*)", 1, ("bearer", "token")),
    ("basic_auth", r"(?i)\bbasic\s+([A-Za-z0-9+/]{12,}={0,2})(?![A-Za-z0-9+/=])", 1, ("basic",)),
    ("url_password", r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@]*:([^\s@/]{1,256})@", 1, ("://",)),
    (
        "assigned_secret",
        # A value assigned to a key that names a secret, in any notation: ``DB_PASSWORD=...``,
        # ``"apiKey": "..."``, ``api-key: ...``, ``password = '...'``, ``Password=...;`` in a connection
        # string, ``?access_token=...&``, ``sig=...``, ``<property name="...password" value="..."/>``,
        # ``<clientSecret>...</clientSecret>``, ``password is ...``. Starts with the keyword itself
        # (api_KEY, access_TOKEN, client_SECRET: the prefix does not matter, only the value after it), so
        # it is only tried where a keyword occurs (see _anchored). The value is a quoted string (spaces
        # allowed) or a run up to a delimiter; the group that matched is the value (group -2).
        _KEYWORD + r"""[\w.\-]*[\\"'\]]{0,3}"""
        r"""(?:\s*(?::=|=>|[:=：])|\s+(?:is|was)\b|["']?\s+value\s*=|>)\s*(?:(?:bearer|basic|token)\s+)?"""
        # a further key the value is assigned to ("token: FOO = ..."), only when the value alone does not match
        r"""(?:(?:export\s+|set\s+|[{\[]\s*["']?|["'])?[a-z_$][\w.\-]*["'\]]{0,2}\s*(?::=|=>|=|:(?!//))\s*)??"""
        r"""(?:\\?"([^"\\\n]{1,200})\\?"|'([^'\n]{1,200})'|([^\s"'`,;&}{)<>]{4,}))""",
        -2,
        _KEYWORD_LITERALS,
    ),
    (
        "password",
        # A secret or token named in prose ("the API secret for staging: ...", "el token es ..."): a few words may sit
        # between the noun and the verb, and the value must look like one (see _prose_ok). Passwords, passphrases,
        # codes and ids stated in words are credentials.py's.
        r"(?i)(?:secret|token)[^\n.;:=!?\[\]]{0,40}?(?:\s(?:is|was|es|ist|lautet|est|era|war)(?:\s*[:：])?|\s?[:：])\s*"
        r"([^\s\"'`,;<>()\[\]]{6,})",
        1,
        ("secret", "token"),
    ),
    (
        "password",
        # Command-line flags with the value after a space: ``--password s3cr3t``, ``--token abc...``
        # (``--password=...`` is an assignment above; ``--password-stdin`` takes no value).
        r"(?i)--(?:password|passwd|pass|token|secret|api-?key|access-token|auth-token|client-secret)\s+"
        r"""["']?([^\s\-"'][^\s"']{3,})""",
        1,
        ("--",),
    ),
    (
        "pin",
        # A card's security code (three or four digits: the only rule whose value may be that short, see _sub_spans)
        r"(?i)c(?<![\w]c)(?:vv2?|vc2?|sc|id|vn)(?![a-z])\s*(?:(?:is|was|code|number|no\.?|#)\s*)?[:=]?\s*"
        r"([0-9]{3,4})(?![0-9])",
        1,
        ("cvv", "cvc", "csc", "cid", "cvn"),
    ),
    ("password", r"\bmysql(?:dump|admin|import|sh|check)?\b[^\n|;&]*?\s-p([^\s\-][^\s]{3,})", 1, ("mysql",)),
    (
        "password",
        # ``sshpass -p X``, ``docker login -u ci -p X``, ``mongosh -p X``, ``redis-cli -a X``: the commands whose -p
        # (-a) takes a password after a space
        r"(?i)\b(?:(?:sshpass|mongo(?:sh|dump|restore|import|export)?|(?:docker|podman|nerdctl|buildah|skopeo|oras|"
        r"helm[ \t]+registry)[ \t]+login)\b[^\n|;&]*?\s-p|redis-cli\b[^\n|;&]*?\s-a)"
        r"""[ \t]*["']?([^\s\-"'][^\s"']{3,})""",
        1,
        ("sshpass", "mongo", "docker", "podman", "nerdctl", "buildah", "skopeo", "oras", "helm", "redis-cli"),
    ),
    ("password", r"""(?i)\bcurl\b[^\n]{0,500}?\s(?:-u|--user)\s*["']?[^\s:"']+:([^\s"'@]{4,})""", 1, ("curl",)),
    ("password", r"(?i)\blogin\s+\S+\s+password\s+(\S{4,})", 1, ("login",)),
]
# Payment card numbers (Luhn-checked, _luhn_ok): 4 groups of 4 (or 4-6-5 for Amex) or one run of 13-19 digits,
# starting with 2-6 (the card networks' ranges).
_CARD = (
    "card_number",
    r"[2-6](?<![0-9\-][2-6])[0-9]{3}(?:[ \-]?[0-9]{4}){3}(?:[0-9]{1,3})?(?![0-9\-])"
    r"|3(?<![0-9\-]3)[47][0-9]{2}[ \-]?[0-9]{6}[ \-]?[0-9]{5}(?![0-9\-])",
    0,
    ("2", "3", "4", "5", "6"),  # re scans a pattern that starts with a class slowly (~12 us/KB): not without one
)
_EMAIL = ("email", r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}\b", 0, ("@",))
_PHONE = ("phone", r"(?<![\w+])\+?\d[\d \-().]{8,}\d\b", 0, None)
_CANDIDATE = re.compile(r"[A-Za-z0-9+/_\-=.]{24,}")
# A rule with no literal but a long run of token characters (a bot token's 35 characters) is woken by
# this stand-in literal: present when the text has _RUN_MIN or more non-space characters in a row (a
# superset of any run of _RUN_ASCII or \w, so prose without one also skips the entropy pass).
_RUN = "\0run"
_RUN_MIN = 20
_RUN_ASCII = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+/=.-")
_HEX_OR_UUID = re.compile(r"^[0-9a-fA-F\-]+$")
# Session ids that agent clients and this plugin make: a short word, a separator, then a UUID, hex, a ULID or
# opencode's time-ordered id (12 hex digits of time, 14 random characters): ``mcp-<hex>``, ``ses_01JH...``. Named as a
# session id (``"session_id": "mcp-..."``) such a value is an identifier, not a credential; a browser's session
# cookie has no such prefix and stays redacted. An MCP session id (``Mcp-Session-Id``) is an identifier in any of
# these forms, bare too (the protocol routes by it and never authenticates with it). A prefixed ULID or opencode id
# is an identifier wherever it stands: it starts with a timestamp.
_TIMED_ID = r"[0-7][0-9A-HJKMNP-TV-Z]{25}|[0-9a-f]{12}[0-9A-Za-z]{14}"
_ID_BODY = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[0-9a-f]{16,64}|" + _TIMED_ID
_AGENT_SESSION_ID = re.compile(r"[\"']?[A-Za-z]{2,16}[-_](?:" + _ID_BODY + r")[\"']?")
_MCP_SESSION_ID = re.compile(r"[\"']?(?:[A-Za-z]{2,16}[-_])?(?:" + _ID_BODY + r")[\"']?")
_TIMED_PREFIXED = re.compile(r"^[a-z]{2,16}_(?:" + _TIMED_ID + r")$")
_SESSION_ID_KEY = ("session_id", "session-id", "sessionid")
_ALREADY = re.compile(r"\[REDACTED:[a-z0-9_]+\]")
# detect-secrets detectors we skip: a public IP address is not a credential, and the keyword-assignment
# detectors (``cloudant_password = ...``) are covered by our ``assigned_secret`` rule at a tenth of the cost.
# Detectors whose formats our own patterns already cover are skipped too (each extra pass costs
# throughput); any detector a newer detect-secrets adds is used automatically.
_SKIP_DS = {
    "IPPublicDetector",
    "CloudantDetector",
    "IbmCloudIamDetector",
    "IbmCosHmacDetector",
    "SoftlayerDetector",
    "AWSKeyDetector",
    "AzureStorageKeyDetector",
    "BasicAuthDetector",
    "GitHubTokenDetector",
    "GitLabTokenDetector",
    "JwtTokenDetector",
    "NpmDetector",
    "OpenAIDetector",
    "PrivateKeyDetector",
    "PypiTokenDetector",
    "SendGridDetector",
    "SlackDetector",
    "StripeDetector",
}
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
# Values after "password is" that are words, not passwords (the words' own list, :mod:`.credentials`, and the
# passive: "is used", "was stolen"), and what only an assignment's value is: a scheme, a state, a reference.
_NOT_A_VALUE = (
    credentials.NOT_A_VALUE
    | credentials.PASSIVE
    | frozenset(
        [
            "available",
            "committed",
            "configured",
            "logged",
            "oauth2",
            "often",
            "printed",
            "probably",
            "provided",
            "undefined",
            "used",
            "usually",
        ]
    )
)
_REFERENCE = re.compile(
    # ``$VAR``, ``${VAR}``, ``%VAR%``, ``{{ var }}``, ``<your-password>``, ``os.environ[...]``...: a reference to
    # a secret, not the secret (``%bSH~q`` or ``$3cr3t!`` are values: a reference is a whole name).
    r"^(?:\$\{[^}]*\}?|\$\(|\$[A-Za-z_][A-Za-z0-9_]*$|%[A-Za-z_][A-Za-z0-9_]*%|\{\{|<|\[|\*{3}|x{3,}$|os\.|"
    r"process\.env|env\b|getenv|config\.|settings\.|self\.|\.\.\.)",
    re.I,
)
# Placeholders people write where the value goes: YOUR_KEY_HERE, your-api-token, changeme, <...>.
_PLACEHOLDER_VALUE = re.compile(
    r"(?i)^(?:(?:your|insert|enter|replace)[_\-\s.]|(?:change[_\-]?me|example|placeholder|dummy|redacted|todo|tbd|"
    r"none|null|nil|undefined|secret|password|pass|token|x+)$)|[_\-](?:here|goes[_\-]here)$"
)
_STOPWORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "to",
        "your",
        "you",
        "is",
        "of",
        "for",
        "and",
        "or",
        "enter",
        "use",
        "type",
        "with",
        "in",
        "on",
        "this",
        "that",
        "my",
        "not",
    ]
)


def shannon_entropy(s: str) -> float:
    counts = Counter(s)
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _looks_random(tok: str) -> bool:
    tok = tok.strip("=.")
    if len(tok) < 24 or _HEX_OR_UUID.match(tok) or _TIMED_PREFIXED.match(tok.rsplit("=", 1)[-1]):
        # commit hashes, UUIDs and prefixed time-ordered ids (``session_id=ses_01JH...`` reads as one run) are
        # identifiers, not credentials; a keyword's value was judged by the keyword rules before this pass
        return False
    if tok.count(".") >= 2 or tok.startswith(("http", "/", "./")):
        return False  # dotted names, paths
    classes = sum(bool(re.search(p, tok)) for p in ("[a-z]", "[A-Z]", "[0-9]"))
    if classes < 3:
        return False
    return shannon_entropy(tok) >= 4.0


@dataclass(frozen=True)
class Finding:
    label: str
    start: int
    end: int


@dataclass
class _Rule:
    label: str
    rx: re.Pattern[str]
    group: int  # 0: whole match; n: that group; -1: detect-secrets heuristics; -2: the last group that matched
    literals: tuple[str, ...] | None
    lower: bool
    check: Callable[[str], bool] | None = None
    on_lower: bool = False  # run a case-sensitive pattern over the ASCII-lowered text (much faster than (?i))


def ascii_lower(text: str) -> str:
    """Lower case that keeps every index (str.lower may change the length of non-ASCII text)."""
    return text.lower() if text.isascii() else text.translate(_ASCII_LOWER)


def _assigned_ok(value: str) -> bool:
    v = value.strip("\"'`")
    w = v.rstrip(".!?:")  # the sentence's end is not the value's: "my password is correct.", "if token is None:"
    if w.lower() in _NOT_A_VALUE or _REFERENCE.match(v) or _ALREADY.fullmatch(v) or _PLACEHOLDER_VALUE.search(v):
        return False
    if credentials.code_name(v):
        return False  # "getpass.getpass(", "config[", "str", "/home/user": code's name for a value, not one
    if w.isdigit() and len(w) < 8:
        return False  # "tokens: 4096", "max_tokens=512", "tokens: 4096."
    if w.isalpha() and w.islower() and (len(w) < 6 or w.endswith(("ed", "ly", "ing", "ion", "able", "ible"))):
        return False  # "is done", "was committed", "is configurable": words, not passwords
    if " " in v:
        # A quoted value with spaces: a passphrase ("correct horse battery") or a sentence ("Enter your
        # password"). A sentence has a stopword and no digit.
        words = v.lower().split()
        if any(w in _STOPWORDS for w in words) and not any(c.isdigit() for c in v):
            return False
    return True


def _prose_ok(value: str) -> bool:
    """A value named in prose ("the password is ..."): must look like a password, not like a word."""
    v = value.rstrip(".!?")
    if v.startswith("//") or _SCHEME.match(v):
        return False  # "... token ... https://host/path": the colon was a URL's (url_password takes its userinfo)
    if len(v) < 6 or not _assigned_ok(v):
        return False
    kinds = (any(c.islower() for c in v), any(c.isupper() for c in v), any(c.isdigit() for c in v))
    return sum(kinds) + (not v.isalnum()) >= 2


def _luhn_ok(value: str) -> bool:
    """A payment card number: 13 to 19 digits (spaces or dashes between groups) that pass the Luhn check, so an
    order number or a timestamp is not taken for one (a random 16-digit number passes one time in ten)."""
    digits = [int(c) for c in value if c.isdigit()]
    if not 13 <= len(digits) <= 19 or len(set(digits)) == 1:
        return False
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _check_for(label: str, pattern: str) -> Callable[[str], bool] | None:
    if label == "assigned_secret":
        return _assigned_ok
    if label == "card_number":
        return _luhn_ok
    if label == "password":
        return _prose_ok if "lautet" in pattern else _assigned_ok
    return None


def _key_label(m: re.Match[str]) -> str:
    """The label of an assignment, from the keyword that starts the match."""
    head = m.string[m.start() : m.start() + 12]
    for words, label in _KEY_LABELS:
        if any(head.startswith(w) for w in words):
            return label
    return "secret"


def _required_literals(pattern: re.Pattern[str]) -> tuple[str, ...] | None:
    """Literals one of which any match must contain (:func:`~metaclaw_plugin.regexlits.required_literals`), or the
    stand-in for a long run of token characters, or None."""
    lits = required_literals(pattern)
    if lits is not None:
        return lits
    try:
        from re import _parser as sre_parse  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover - Python < 3.11
        import sre_parse
    try:
        items = list(sre_parse.parse(pattern.pattern, pattern.flags))
    except Exception:
        return None
    return (_RUN,) if _needs_run(items, sre_parse) else None


def _needs_run(items: list[Any], sre_parse: Any) -> bool:
    """Whether a match must hold ``_RUN_MIN`` or more token characters in a row (``_RUN_ASCII``, ``\\w``):
    a top-level repeat of such characters with at least that many (``[a-zA-Z\\d_-]{23,25}``)."""
    repeats = {sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT, getattr(sre_parse, "POSSESSIVE_REPEAT", None)}
    for op, av in items:
        if op in repeats and av[0] >= _RUN_MIN:
            sub = list(av[2])
            if len(sub) == 1 and _run_chars(sub[0], sre_parse):
                return True
    return False


def _run_chars(item: tuple[Any, Any], sre_parse: Any) -> bool:
    """Whether every character that ``item`` (a literal or a class) matches is one the gate covers."""
    op, av = item
    if op is sre_parse.LITERAL:
        return chr(av) in _RUN_ASCII
    if op is not sre_parse.IN:
        return False
    for eop, eav in av:
        if eop is sre_parse.LITERAL:
            ok = chr(eav) in _RUN_ASCII
        elif eop is sre_parse.RANGE:
            ok = eav[1] < 128 and all(chr(c) in _RUN_ASCII for c in range(eav[0], eav[1] + 1))
        elif eop is sre_parse.CATEGORY:
            ok = eav in (sre_parse.CATEGORY_DIGIT, sre_parse.CATEGORY_WORD)  # \d and \w are inside \w
        else:
            ok = False  # a negated class, or anything else
        if not ok:
            return False
    return True


_DS_CACHE: list[_Rule] | None = None


def detect_secrets_rules() -> list[_Rule]:
    """The regex detectors of detect-secrets, as rules (empty when the library is absent)."""
    global _DS_CACHE
    if _DS_CACHE is not None:
        return _DS_CACHE
    rules: list[_Rule] = []
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.plugins.base import RegexBasedDetector

        cls: Any
        for cls in get_mapping_from_secret_type_to_class().values():
            if not issubclass(cls, RegexBasedDetector) or cls.__name__ in _SKIP_DS:
                continue
            label = re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__.removesuffix("Detector")).lower()
            label = re.sub(r"[^a-z0-9_]", "", label)
            for rx in getattr(cls, "denylist", ()):
                lits = _required_literals(rx)
                rules.append(_Rule(label, rx, -1, lits, bool(rx.flags & re.IGNORECASE)))
    except Exception as e:  # not installed, or its internals moved: our own patterns still run
        log.info("detect-secrets detectors unavailable (%s); using built-in patterns only", type(e).__name__)
    _DS_CACHE = rules
    return rules


class Redactor:
    def __init__(
        self,
        *,
        emails: bool = False,
        phones: bool = False,
        extra_patterns: Iterable[str] = (),
        entropy: bool = True,
        detect_secrets: bool = True,
        prose: bool = True,
    ):
        specs = [*_PATTERNS, _CARD]
        if emails:
            specs.append(_EMAIL)
        if phones:
            specs.append(_PHONE)
        rules: list[_Rule] = []
        for label, p, group, lits in specs:
            on_lower = p.startswith("(?i)")
            rx = re.compile(p[4:] if on_lower else p)
            check = _check_for(label, p)
            rules.append(_Rule(label, rx, group, lits, on_lower, check, on_lower))
        if detect_secrets:
            rules += detect_secrets_rules()
        for p in extra_patterns:
            rx = re.compile(p)
            rules.append(_Rule("custom", rx, 0, None, False))
        self._rules = rules
        self._entropy = entropy
        # Every literal once, so a message is scanned once per literal rather than once per rule.
        self._lits_case = tuple(
            sorted({lit for r in rules if r.literals and not r.lower for lit in r.literals} - {_RUN})
        )
        self._lits_low = tuple(sorted({lit for r in rules if r.literals and r.lower for lit in r.literals} - {_RUN}))
        # Credentials stated in words (credentials.py): woken by their own nouns, after the shape rules.
        self._prose = prose
        self._prose_lits = frozenset(credentials.LITERALS) if prose else frozenset()
        apart = credentials.SCRIPT_LITERALS + credentials.KEY_LITERALS
        self._lits_low = tuple(sorted(set(self._lits_low) | (self._prose_lits - set(apart))))
        self._scan_case, self._scan_low = literal_scanner(self._lits_case), literal_scanner(self._lits_low)
        # The nouns of scripts no other literal starts in: one regex pass over a text that is not ASCII (in the
        # automaton, each letter a literal starts with costs every text's scan)
        self._scan_script = re.compile("|".join(map(re.escape, apart)) if prose else "(?!)").findall
        # An ASCII text holds no literal that is not: its scan walks the smaller automaton (each literal costs a little)
        self._scan_ascii = literal_scanner(lit for lit in self._lits_low if lit.isascii())
        # Which rules each literal wakes, so a text only walks the rules that can match in it.
        self._always = tuple(i for i, r in enumerate(rules) if not r.literals)
        self._by_literal: dict[str, tuple[int, ...]] = {}
        for i, r in enumerate(rules):
            for lit in r.literals or ():
                self._by_literal[lit] = (*self._by_literal.get(lit, ()), i)

    @classmethod
    def from_settings(cls, privacy: Any) -> Redactor:
        return cls(
            emails=privacy.redact_emails,
            phones=privacy.redact_phones,
            extra_patterns=privacy.extra_patterns,
            detect_secrets=getattr(privacy, "detect_secrets", True),
        )

    @property
    def rule_count(self) -> int:
        return len(self._rules)

    def redact(self, text: str) -> str:
        if not text or len(text) < 4:
            return text
        if self._prose:
            plain = unveiled(text, self._prose_lits)
            if plain is not text:  # disguised: what the plain text holds is redacted, the text as it is otherwise
                red = self._redact(plain)
                if red != plain:
                    return red
        return self._redact(text)

    def _redact(self, text: str) -> str:
        low = ascii_lower(text)
        present = self._present(text, low)
        todo = self._candidates(present, -1)
        while todo:
            i = todo.pop(0)
            rule = self._rules[i]
            if rule.on_lower:
                new = _sub_spans(rule, text, _anchored(rule, low))
            else:
                new = rule.rx.sub(_replacer(rule), text)
            if new is not text and new != text:
                text = new
                low = ascii_lower(text)
                present = self._present(text, low)
                todo = self._candidates(present, i)  # the text changed: the later rules it now wakes
        if self._prose and not self._prose_lits.isdisjoint(present):
            text = _prose_sub(text, credentials.lower(text), present & self._prose_lits)
        if _RUN in present:
            if any(lit in present for lit in _KEYWORD_LITERALS):
                text = _near_keyword_sub(text, ascii_lower(text))
            if self._entropy:
                text = _CANDIDATE.sub(_entropy_sub, text)
        return text

    def _candidates(self, present: set[str], after: int) -> list[int]:
        """Indices (> ``after``) of the rules whose literal is present, in rule order (specific first)."""
        idx = set(self._always)
        for lit in present:
            idx.update(self._by_literal.get(lit, ()))
        return sorted(i for i in idx if i > after)

    def _present(self, text: str, low: str) -> set[str]:
        if self._prose and not text.isascii():
            # "ПИН", "Пароль": the prose nouns in any case; one scan, of a fold that finds all the ASCII fold does
            low = credentials.lower(text)
        if text.isascii():
            found = self._scan_case(text) | self._scan_ascii(low)
        else:
            found = self._scan_case(text) | self._scan_low(low) | set(self._scan_script(low))
        if len(text) >= _RUN_MIN and max(map(len, text.split()), default=0) >= _RUN_MIN:
            found.add(_RUN)
        return found

    def find(self, text: str) -> list[str]:
        """Labels of the secrets in ``text`` (for screening): empty when redaction changes nothing."""
        if not text:
            return []
        found: list[str] = []
        red = self.redact(text)
        if red != text:
            found = sorted(
                set(m.group(0)[10:-1] for m in _ALREADY.finditer(red))
                - set(m.group(0)[10:-1] for m in _ALREADY.finditer(text))
            )
        return found

    def redact_obj(self, obj: Any) -> Any:
        """Redact every string inside a JSON-like value, dict keys included: a host may key anything by a secret
        (a token as a metadata key, a tool parameter named after a credential). Keys shorter than
        ``_KEY_MIN`` hold no secret and are kept as they are (the common case: role, content, name)."""
        if isinstance(obj, str):
            return self.redact(obj)
        if isinstance(obj, dict):
            return {
                (self.redact(k) if isinstance(k, str) and len(k) >= _KEY_MIN else k): self.redact_obj(v)
                for k, v in obj.items()
            }
        if isinstance(obj, (list, tuple)):
            return [self.redact_obj(v) for v in obj]
        return obj

    def redact_messages(self, messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        return [self.redact_obj(m) for m in messages]


_BUILT: dict[tuple[Any, ...], Redactor] = {}
_BUILT_LOCK = threading.Lock()


def disk_redactor(privacy: Any) -> Redactor | None:
    """What the hooks store turns with (the trajectory store, the journal, ids, the log file): None when
    ``privacy.redact`` is off."""
    return redactor_for(privacy) if privacy.redact else None


def redactor_for(privacy: Any) -> Redactor:
    """The redactor of a home's ``privacy`` settings: built here, once per distinct settings, and passed down to every
    part (the store, the journal's dead-letter file, the log file, LLM payloads, memory, screening), so they all
    redact alike. What leaves the process (a judge's or an evolver's payload) and what a memory or a skill holds is
    redacted whatever ``privacy.redact`` says about disk (see :func:`disk_redactor`)."""
    key = (
        bool(privacy.redact_emails),
        bool(privacy.redact_phones),
        tuple(privacy.extra_patterns),
        bool(getattr(privacy, "detect_secrets", True)),
    )
    with _BUILT_LOCK:
        r = _BUILT.get(key)
        if r is None:
            r = _BUILT[key] = Redactor.from_settings(privacy)
        return r


_KEY_MIN = 12  # the shortest dict key that redact_obj reads for secrets (no key shorter holds a credential)


def _span(rule: _Rule, m: re.Match[str]) -> tuple[int, int]:
    if rule.group > 0:
        return m.span(rule.group)
    if rule.group == -2:  # the value alternative that matched
        return m.span(m.lastindex or 0)
    if rule.group == 0:
        return m.span()
    # detect-secrets patterns: group 1 when it is the secret (long, not the prefix), else the match
    # without the delimiters some patterns include.
    if m.re.groups and m.group(1) and len(m.group(1)) >= 12 and m.start(1) > m.start():
        return m.span(1)
    s, e = m.span()
    whole = m.group(0)
    lead = len(whole) - len(whole.lstrip(" \t\r\n=:\"'"))
    trail = len(whole) - len(whole.rstrip(" \t\r\n\"'"))
    return s + lead, e - trail


def _replacer(rule: _Rule) -> Callable[[re.Match[str]], str]:
    placeholder = PLACEHOLDER.format(rule.label)

    def sub(m: re.Match[str]) -> str:
        whole = m.group(0)
        start, end = _span(rule, m)
        if start < 0 or end - start < (4 if rule.group >= 0 else 8):
            return whole
        value = m.string[start:end]
        if _ALREADY.fullmatch(value) or "[REDACTED:" in value:
            return whole
        if rule.check is not None and not rule.check(value):
            return whole
        base = m.start()
        return whole[: start - base] + placeholder + whole[end - base :]

    return sub


def _anchored(rule: _Rule, low: str) -> list[re.Match[str]]:
    """Matches of a keyword-first rule, tried only where one of its keywords occurs: a substring
    search per keyword is an order of magnitude faster than letting the regex scan every position."""
    if not rule.literals:
        return list(rule.rx.finditer(low))
    found: dict[int, re.Match[str]] = {}
    for lit in rule.literals:
        i = low.find(lit)
        while i >= 0:
            if i not in found:
                m = rule.rx.match(low, i)
                if m:
                    found[i] = m
            i = low.find(lit, i + 1)
    out: list[re.Match[str]] = []
    end = -1
    for start in sorted(found):
        if start >= end:
            out.append(found[start])
            end = found[start].end()
    return out


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://")
# What a keyword rule took for the value may be the key of an assignment that follows it ("token:
# SMTP_PASS='...'", "secret: auth_key: ...", "password = API_KEY=\"...\"", "token: --api-key ..."): then the
# value is the one after that key, whatever the key is called.
_INNER_KEY = re.compile(
    r"""(?:(?:export|set|setx|let|const|var|declare)\s+|[{\[]\s*["']?|["'])?(?:--[A-Za-z][\w\-]*(?:\s*=\s*|\s+)"""
    r"""|[A-Za-z_$][\w.\-]*["'\]]{0,2}\s*(?::=|=>|=|:(?!//))[ \t]*)"""
)
_INNER_VALUE = re.compile(
    r"""\\?"([^"\\\n]{1,200})\\?"|'([^'\n]{1,200})'|`([^`\n]{1,200})`|([^\s"'`,;&}{)<>]{1,200})"""
)


_DECL = frozenset(["export", "set", "setx", "let", "const", "var", "declare", "EXPORT", "SET"])


def _chained_value(text: str, start: int, end: int) -> tuple[int, int, bool]:
    """The span of the real value when the captured one is only the key of a further assignment (up to
    two deep); ``(start, end, False)`` when it is not."""
    chained = False
    for _ in range(2):
        nxt = text[end : end + 4].lstrip(" \t")[:1]
        if not (text[end - 1] in "=:" or nxt in ("=", ":") or text[start] in "-{[\"'" or text[start:end] in _DECL):
            break  # cheap test first: no operator at the end of the value or right after it
        key = _INNER_KEY.match(text, start)
        if key is None or key.end() < end or key.end() == start:
            break
        head = text[start:end]
        if head.endswith("=") and (end >= len(text) or text[end].isspace()):
            # base64 padding ("...Bw0= and") or an assignment ("API_KEY= ..."): take both, leak neither
            val = _INNER_VALUE.match(text, key.end())
            return (start, val.end(), True) if val is not None else (start, end, chained)
        val = _INNER_VALUE.match(text, key.end())
        if val is None:
            break
        start, end = val.span(val.lastindex or 0)
        chained = True
    return start, end, chained


def _sub_spans(rule: _Rule, text: str, matches: Iterable[re.Match[str]]) -> str:
    """Replace the secret part of matches found in the lowered copy, in the original text."""
    out: list[str] = []
    pos = 0
    for m in matches:
        start, end = _span(rule, m)
        check = rule.check
        if check is not None and start >= 0:
            start, end, chained = _chained_value(text, start, end)
            check = _assigned_ok if chained else check
        if start < pos or end - start < (3 if rule.label == "pin" else 4):
            continue
        value = text[start:end]
        if "[REDACTED:" in value or (check is not None and not check(value)):
            continue
        if rule.group == -2 and (
            _agent_session_id(m, value) or (_key_label(m) == "key" and credentials.column_name(value))
        ):
            continue  # a session id named as one; "the primary key is order_id": a column
        out.append(text[pos:start])
        out.append(PLACEHOLDER.format(_key_label(m) if rule.group == -2 else rule.label))
        pos = end
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


# Letters spelled out one by one ("p a s s w o r d"): looked for only where a cheap scan finds three in a row.
_SPACED_GATE = re.compile(r" [a-zA-Z] [a-zA-Z] ")
_SPACED = re.compile(r"(?<![\w])(?:[^\W\d_] ){3,}[^\W\d_](?![\w])")


def unveiled(text: str, literals: Iterable[str]) -> str:
    """``text`` without the disguises that hide a credential's noun from the scan: fullwidth and other compatibility
    forms (NFKC), invisible characters, look-alike letters inside a Latin word ("pаsswоrd"), and a noun spelled out
    letter by letter (a word folded or joined only when the word it makes holds one of ``literals``). The same object when there is
    none."""
    plain = text

    def noun(word: str) -> bool:
        low = word.lower()
        return any(lit in low for lit in literals)

    if not text.isascii():
        plain = INVISIBLE.sub("", unicodedata.normalize("NFKC", text))
        # a word is folded when that makes it a noun: "nieprawidłowe" keeps its ł (it holds "nie" either way)
        plain = fold_mixed(plain, lambda word, folded: noun(folded) and not noun(word))
    if _SPACED_GATE.search(" " + plain) is not None:

        def join(m: re.Match[str]) -> str:
            word = m.group(0).replace(" ", "")
            return word if noun(word) else m.group(0)

        plain = _SPACED.sub(join, plain)
    return text if plain == text else plain


def _prose_sub(text: str, low: str, anchors: set[str]) -> str:
    """Replace the values of credentials stated in words (:mod:`.credentials`), leaving placeholders alone."""
    out: list[str] = []
    pos = 0
    placed = [m.span() for m in _ALREADY.finditer(text)] if "[REDACTED:" in text else []
    for start, end, label in credentials.spans(text, low, anchors):
        inside = [(s, e) for s, e in placed if s < end and start < e]
        # A phrase whose first word a shape rule took ("passphrase is [REDACTED:password] horse battery"): the rest
        # goes with it. Any other span that meets a placeholder was the shape rules' to take.
        if start < pos or (inside and not (len(inside) == 1 and inside[0][0] == start and end > inside[0][1])):
            continue
        out += [text[pos:start], PLACEHOLDER.format(label)]
        pos = end
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def _agent_session_id(m: re.Match[str] | None, value: str, before: str = "") -> bool:
    """Whether ``value`` is an agent's session id named as a session id (the keyword that starts ``m``, or the last
    one in ``before``, both in the lowered text)."""
    if m is not None:
        at, low = m.start(), m.string
    else:
        at, low = before.rfind("session"), before
    if at < 0 or not low.startswith(_SESSION_ID_KEY, at):
        return False
    shape = _MCP_SESSION_ID if low[max(0, at - 4) : at] in ("mcp-", "mcp_") else _AGENT_SESSION_ID
    return shape.fullmatch(value.strip()) is not None


def _entropy_sub(m: re.Match[str]) -> str:
    tok = m.group(0)
    return "[REDACTED:high_entropy]" if _looks_random(tok) else tok


# The last word: a long random-looking run next to a secret word is the secret, whatever rule did or did not
# take it. Runs of 20+ token characters within a line, after a keyword (80 characters) or just before one
# (16, same clause: "<value> is my token"): hex (digits and letters, UUIDs included), base64/base64url or any high-entropy mixed-class string.
# Identifiers stay: a run that contains the keyword itself (``getAccessTokenFromEnv``), a name made of
# whole-word parts (``test_user_2024_01_15``), a path or URL, and a hash labelled as one ("commit <sha>",
# "sha256:<hex>"). Far from a secret word, a git SHA or a UUID is an identifier and is kept.
_KEYWORD_RX = re.compile(_KEYWORD[4:])
_NEAR_RUN = re.compile(r"[A-Za-z0-9+/_\-=]{20,}")
_AFTER, _BEFORE = 80, 16
_CLAUSE_PUNCT = re.compile(r"[.;!?,]")
_LITERAL_RX = re.compile("|".join(map(re.escape, _KEYWORD_LITERALS)))
_ID_LABEL = re.compile(
    r"(?:commit|sha|sha1|sha256|sha512|md5|revision|rev|hash|digest|checksum|merge|tree|blob|build|image|trace|span|"
    r"request|correlation|uuid|guid|etag|version)(?:[ _-]?id)?\W{0,3}$"
)


def _near_keyword_sub(text: str, low: str) -> str:
    """Replace the secret-shaped runs that sit next to a secret word (runs are rarer than keywords, so the
    text is walked by run and each run looks for a keyword in its own small window)."""
    out: list[str] = []
    pos = 0
    for m in _NEAR_RUN.finditer(text):
        s, e = m.span()
        nl = text.rfind("\n", max(0, s - _AFTER), s)
        lo = nl + 1 if nl >= 0 else max(0, s - _AFTER)
        nl = text.find("\n", e, e + _BEFORE)
        hi = nl if nl >= 0 else min(len(text), e + _BEFORE)
        window, after = low[lo:s], low[e:hi]
        stop = _CLAUSE_PUNCT.search(after)
        if stop:
            after = after[: stop.start()]  # "<sha>; the token refresh": the word belongs to the next clause
        near_before = _LITERAL_RX.search(window) is not None
        if not near_before and _LITERAL_RX.search(after) is None:
            continue  # cheapest test first: most runs have no secret word near them
        if _ID_LABEL.search(low[max(lo, s - 12) : s]) or "[REDACTED:" in text[max(0, s - 10) : s]:
            continue  # "commit <sha>", "sha256:<hex>": an identifier, labelled as one
        if not _secret_shaped(m.group(0)):
            continue
        if _SESSION_ID_KEY[0][:7] in window and _agent_session_id(None, m.group(0), window):
            continue  # "session_id": "mcp-..." kept by the assignment rule: not a token for being near the word
        kw = None
        if near_before:
            before = [k for k in _KEYWORD_RX.finditer(low, lo, s) if k.end() <= s]
            kw = before[-1] if before else None
        if kw is None and _LITERAL_RX.search(after) is not None:
            kw = _KEYWORD_RX.search(low, e, e + len(after))
        if kw is None:
            continue
        out += [text[pos:s], PLACEHOLDER.format(_key_label(kw))]
        pos = e
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


_WORDISH = re.compile(r"[a-z]+\d{0,4}|[A-Z][a-z]+\d{0,4}|[A-Z]{1,8}\d{0,4}|\d+")


def _identifier(tok: str) -> bool:
    """A name made of words and numbers (``SMTP_PASS``, ``test_user_2024_01_15``, ``/usr/lib/python3``)."""
    parts = [p for p in re.split(r"[_\-./]", tok) if p]
    return len(parts) > 1 and all(_WORDISH.fullmatch(p) for p in parts)


def _secret_shaped(tok: str) -> bool:
    core = tok.strip("=")
    if len(core) < 20 or core.isdigit():
        return False
    bare = core.replace("-", "")
    if re.fullmatch(r"[0-9a-f]{20,}|[0-9A-F]{20,}", bare):
        return any(c.isdigit() for c in bare) and any(c.isalpha() for c in bare)
    if _identifier(core):
        return False  # test_user_2024_01_15, my-config-file-name, /usr/lib/python3: words and numbers
    lower, upper, digit = (
        any(c.islower() for c in core),
        any(c.isupper() for c in core),
        any(c.isdigit() for c in core),
    )
    classes = lower + upper + digit
    special = any(c in "+/" for c in core)
    if classes == 3:
        return shannon_entropy(core) >= 3.0
    if classes == 2 and (digit or special):
        return shannon_entropy(core) >= 3.5
    return False
