"""Secret redaction, applied before anything reaches disk or leaves the process.

Placeholders keep the text readable for the evolver and the judge: ``[REDACTED:github_token]``
says what was there without saying what it was. Known formats are matched by pattern; unknown
ones by shape and entropy (long, mixed-class, high-entropy runs), which is what generalises to
providers nobody listed.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any, Callable, Iterable

# (label, pattern, group to replace or 0 for the whole match). Order matters: specific first.
_PATTERNS: list[tuple[str, str, int]] = [
    ("private_key", r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)", 0),
    ("anthropic_key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}", 0),
    ("openai_key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}", 0),
    ("stripe_key", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}", 0),
    ("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})", 0),
    ("gitlab_token", r"\bglpat-[A-Za-z0-9_\-]{20,}", 0),
    ("slack_token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}", 0),
    ("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}", 0),
    ("huggingface_token", r"\bhf_[A-Za-z0-9]{30,}", 0),
    ("aws_access_key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b", 0),
    ("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", 0),
    ("bearer_token", r"(?i)\b(?:bearer|token)\s+([A-Za-z0-9._~+/\-]{16,}=*)", 1),
    ("url_password", r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@]+:([^\s@/]{1,256})@", 1),
    (
        "assigned_secret",
        r"(?i)\b[\w.\-]*(?:password|passwd|passphrase|pwd|secret|api[_\-]?key|apikey|access[_\-]?key|auth[_\-]?token|"
        r"access[_\-]?token|refresh[_\-]?token|client[_\-]?secret|private[_\-]?key|token)[\w.\-]*"
        r"""["']?\s*(?:[:=]|=>|\bis\b)\s*["']?([^\s"',;}{)]{4,})""",
        1,
    ),
]
_EMAIL = ("email", r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}\b", 0)
_PHONE = ("phone", r"(?<![\w+])\+?\d[\d \-().]{8,}\d\b", 0)
_CANDIDATE = re.compile(r"[A-Za-z0-9+/_\-=.]{24,}")
_HEX_OR_UUID = re.compile(r"^[0-9a-fA-F\-]+$")
_ALREADY = re.compile(r"\[REDACTED:[a-z_]+\]")


def shannon_entropy(s: str) -> float:
    counts = Counter(s)
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _looks_random(tok: str) -> bool:
    tok = tok.strip("=.")
    if len(tok) < 24 or _HEX_OR_UUID.match(tok):
        return False  # commit hashes and UUIDs are identifiers, not credentials
    if tok.count(".") >= 2 or tok.startswith(("http", "/", "./")):
        return False  # dotted names, paths
    classes = sum(bool(re.search(p, tok)) for p in ("[a-z]", "[A-Z]", "[0-9]"))
    if classes < 3:
        return False
    return shannon_entropy(tok) >= 4.0


class Redactor:
    def __init__(
        self,
        *,
        emails: bool = False,
        phones: bool = False,
        extra_patterns: Iterable[str] = (),
        entropy: bool = True,
    ):
        specs = list(_PATTERNS)
        if emails:
            specs.append(_EMAIL)
        if phones:
            specs.append(_PHONE)
        specs += [("custom", p, 0) for p in extra_patterns]
        self._rules = [(label, re.compile(p), group) for label, p, group in specs]
        self._entropy = entropy

    @classmethod
    def from_settings(cls, privacy: Any) -> "Redactor":
        return cls(emails=privacy.redact_emails, phones=privacy.redact_phones, extra_patterns=privacy.extra_patterns)

    def redact(self, text: str) -> str:
        if not text:
            return text
        for label, rx, group in self._rules:
            text = rx.sub(_replacer(label, group), text)
        if self._entropy and len(text) >= 24:
            text = _CANDIDATE.sub(_entropy_sub, text)
        return text

    def redact_obj(self, obj: Any) -> Any:
        """Redact every string inside a JSON-like value (dict keys are kept)."""
        if isinstance(obj, str):
            return self.redact(obj)
        if isinstance(obj, dict):
            return {k: self.redact_obj(v) for k, v in obj.items()}
        if isinstance(obj, (list, tuple)):
            return [self.redact_obj(v) for v in obj]
        return obj


def _replacer(label: str, group: int) -> Callable[[re.Match[str]], str]:
    placeholder = f"[REDACTED:{label}]"

    def sub(m: re.Match[str]) -> str:
        if group == 0:
            return placeholder
        if _ALREADY.fullmatch(m.group(group)):
            return m.group(0)
        start, end = m.span(group)
        base = m.start()
        whole = m.group(0)
        return whole[: start - base] + placeholder + whole[end - base :]

    return sub


def _entropy_sub(m: re.Match[str]) -> str:
    tok = m.group(0)
    return "[REDACTED:high_entropy]" if _looks_random(tok) else tok
