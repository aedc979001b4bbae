"""What a memory may hold: redaction of secrets, and screening of memories that instruct the agent.

A memory is data the user stated, injected as a note. One that tells the agent to override its rules, send data
somewhere, widen its permissions or skip confirmations is a standing prompt injection ("memory poisoning"): it is
quarantined (kept for a person to see, never injected). The screen is the skills' (:func:`screening.screen`, the
same intent classes in several languages), plus the forms such an instruction takes in a user's statement
(the skills' screen reads a skill's body, where "never ask before rm -rf" would be unusual; in a memory it is the
attack).

Credentials are never stored at all, not even redacted: a memory of "my password is [REDACTED]" helps no one, and a
spelling the redactor missed would stay on disk. One definition decides what is a credential: the home's redactor
(:meth:`~metaclaw_plugin.privacy.Redactor.find`: the shapes of keys and tokens, and credentials stated in words by
class, :mod:`metaclaw_plugin.credentials`), contact details excepted (an e-mail address or a phone number is redacted
when the home says so, and the statement is kept).
"""

from __future__ import annotations

import re
from typing import Any

from ..config import PrivacySettings
from ..learning.screening import screen
from ..privacy import Redactor, redactor_for
from ..types import Skill
from .rules import FROM_NOW
from .text import fold

F = re.I | re.U
# Instructions to the agent in a user's statement (read on the folded text).
_AGENT_RULES = [
    (
        "skip_confirmation",
        r"\b(?:without (?:asking|confirm\w*|checking|approval|permission|review\w*)|(?:don'?t|do not|never|no need to|stop) "
        r"(?:ask\w*|confirm\w*|check\w* with me|wait\w* for (?:me|approval|confirmation))(?: me)?(?: for (?:confirmation|"
        r"permission|approval))?(?: (?:before|first|when))?|skip (?:the )?(?:confirm\w*|approval|review|safety|checks?)|"
        r"auto-?approve|sans (?:demander|confirm\w*|validation)|ne (?:me )?demande (?:plus|jamais|pas)|sin (?:preguntar|"
        r"confirm\w*)|no (?:me )?(?:preguntes|pidas confirmacion)|sem (?:perguntar|confirm\w*)|nao (?:me )?pergunte)\b"
        r"|不用(?:问|确认)|无需确认|不要(?:问我|确认)|直接执行",
    ),
    (
        "exfiltration",
        r"\b(?:send|forward|copy|upload|post|email|e-mail|leak|share|sync|mirror|cc|bcc|transmit|report)\b[^.]{0,80}"
        r"(?:\b[\w.+-]+@[\w-]+\.[\w.]+|https?://|\bto (?:this|that|my|an?|the) (?:server|endpoint|webhook|url|address))"
        r"|\b(?:envo\w+|transf[eé]r\w+|partag\w+|reenv\w+|compart\w+|encaminh\w+)\b[^.]{0,80}(?:@|https?://)"
        r"|(?:发送|转发|上传)[^。]{0,40}(?:@|https?://)",
    ),
    (
        "permission_widening",
        r"\b(?:you (?:have|now have|are allowed|may|can) (?:full |root |admin\w* )?(?:access|permission|rights|"
        r"privileges)|(?:grant|give) (?:yourself|you) |run (?:everything |all commands )?(?:as root|with sudo)|"
        r"disable (?:the )?(?:sandbox|safety|guardrails|filters?|security)|turn off (?:the )?(?:sandbox|safety|guardrails)|"
        r"(?:--force|force push|push --force|rm -rf)\b[^.]{0,40}\b(?:always|automatically|without))",
    ),
    (
        "instruction_override",
        r"\b(?:ignore|disregard|override|bypass|forget) (?:all |any |your |the |previous |prior |earlier )+"
        r"(?:instructions|rules|guidelines|system prompt|policies|restrictions)|(?:you are|act as|pretend to be) "
        r"(?:now )?(?:an? )?(?:unrestricted|jailbroken|dan|developer mode)|(?:these|my) notes (?:override|take "
        r"precedence over|replace) (?:your|the|all)|(?:treat|consider) (?:this|these|my notes?) as (?:a )?system|"
        r"(?:new|updated|real|actual) (?:system )?(?:prompt|instructions|rules)(?: is| are|:)|"
        r"(?:treat|consider|trust|obey|follow) (?:any |all |every )?(?:messages?|e-?mails?|instructions?|requests?|"
        r"orders?) (?:from|sent by|coming from) \S+",
    ),
    (
        "permission_widening",
        r"\b(?:(?:ignore|disregard|bypass|skip|turn off|switch off|disable|deactivate) (?:any |all |the |your |its )*"
        r"(?:safety|security|content|policy|policies|guard\w*|filter\w*|restriction\w*|moderation|warnings?|limits?)|"
        r"(?:grant|approve|allow|accept|execute|run) (?:every|all|any) (?:requests?|commands?|actions?|access|tools?)"
        r"(?: (?:without|automatically|blindly))?|you(?:'re| are) (?:allowed|authori[sz]ed|permitted) to (?:do|run|"
        r"execute|access|delete|send) (?:anything|everything|any)|(?:you are|you're|act as) (?:the |an? )?"
        r"(?:admin\w*|root|superuser|owner))",
    ),
    (
        "exfiltration",
        r"\b(?:reveal|print|leak|dump|output|include|paste|attach|upload|send|share|post)\b[^.]{0,60}"
        r"(?:system prompt|hidden instructions|\.ssh|id_rsa|id_ed25519|\.env\b|/etc/passwd|/etc/shadow|\.aws/|"
        r"credentials file|environment variables|env vars|private keys?|api keys?|passwords?|cookies|session tokens?)",
    ),
]
AGENT_RULES = [(code, re.compile(p, F)) for code, p in _AGENT_RULES]


# What the redactor finds that is a contact detail, not a credential: redacted when the home says so, then kept.
CONTACT_LABELS = frozenset({"email", "phone", "custom"})
_PLACEHOLDER = re.compile(r"\[REDACTED:([a-z0-9_]+)\]")


def _default_redactor() -> Redactor:
    return redactor_for(PrivacySettings())


def credential_kinds(text: str, redactor: Redactor | None = None) -> list[str]:
    """The kinds of credential ``text`` holds ("password", "national_id", "github_token"...), by the redactor's
    detection; a placeholder left by an earlier redaction ("[REDACTED:password]") counts as the kind it names."""
    if not text:
        return []
    found = set((redactor or _default_redactor()).find(text))
    found |= set(_PLACEHOLDER.findall(text))
    return sorted(found - CONTACT_LABELS)


def is_credential(text: str, redactor: Redactor | None = None) -> bool:
    """The statement holds a credential (never kept, not even redacted)."""
    return bool(credential_kinds(text, redactor))


def credential_refusal(text: str, redactor: Redactor | None = None) -> str | None:
    """Why ``text`` cannot be a memory, naming the kind of credential and never its value; None when it holds none."""
    kinds = credential_kinds(text, redactor)
    if not kinds:
        return None
    named = ", ".join(k.replace("_", " ") for k in kinds)
    return (
        f"it holds a credential ({named}); a memory never keeps one, not even redacted "
        "(keep it in a password manager or the host's secret store)"
    )


def screen_memory(text: str) -> dict[str, Any] | None:
    """None when ``text`` is a plain statement; else the verdict and reasons that quarantine it."""
    codes = [code for code, rx in AGENT_RULES if rx.search(fold(text))]
    # "From now on" frames every standing preference a user states ("from now on, answer in Portuguese"); the
    # skills' screen reads it as an attempt to reset the agent. What follows it is screened as it is.
    body = " ".join(FROM_NOW.sub(" ", text).split())
    result = screen(
        Skill(name="user-memory", description="A note of what the user said in an earlier session.", body=body),
        source_text=text,
        strict_provenance=False,
    )
    if result.verdict == "clean" and not codes:
        return None
    return {
        "verdict": "quarantined",
        "codes": sorted(set(codes) | set(result.codes)),
        "reasons": [*(f"instructs the agent: {c.replace('_', ' ')}" for c in codes), *result.reasons],
    }


def redact(redactor: Redactor | None, text: str) -> str:
    return redactor.redact(text) if redactor is not None else text
