"""What a memory may hold, and where it may go: credentials refused, directives to the agent quarantined, personal
statements kept to their user.

* **Credentials.** A statement that holds a credential is never stored, not even redacted ("my password is
  [REDACTED]" helps no one, and a redactor that misses one spelling would leave it on disk). One definition: what the
  home's redactor finds (:meth:`~metaclaw_plugin.privacy.Redactor.find`: the shapes of keys and tokens, and
  credentials stated in words by class, :mod:`metaclaw_plugin.credentials`), contact details excepted (an e-mail
  address or a phone number is redacted when the home says so, and the statement is kept).
* **Directives.** A memory is data the user stated, injected as a note. One that directs the agent to act (send data
  somewhere, reveal secrets, fetch and run code, approve or skip confirmations, take orders from someone else, change
  its rules) is a standing prompt injection ("memory poisoning"): it is quarantined (kept for a person to see, never
  injected). The intent screens are :mod:`.directives` (by grammar) and :mod:`.standing` (a standing grant by what it touches); the skills' screen (:func:`screening.screen_content`: a
  memory is never written as a SKILL.md, so not its format check) adds its override, role-marker, persona, secrecy
  and conduct classes. Its classes that also fire on plain facts ("we run the
  installer with sudo", "our installer is curl ... | bash") count only in a sentence that is a directive.
* **Sharing.** With ``memory.share: tenant``, a project memory goes to the tenant's shared bucket only when it is about
  the team's work: a first-person statement ("I'm diabetic", "my wife...", "I live in...") or one about someone's
  health, partner, pay or debts, religion or sexuality stays its user's own, whatever kind the extractor gave it.
"""

from __future__ import annotations

import re
from typing import Any

from ...config import PrivacySettings
from ...privacy import Redactor, redactor_for
from ...text import strip_marks
from ...types import Skill
from ..screening import screen_content

F = re.I | re.U

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


# The skills' screen: codes kept as they are, and codes that also fire on statements of fact (kept only when the
# sentence is a directive). Its permission_widening is not taken: it reads "always confirm" (a user asking to be
# asked) as auto-confirmation; :mod:`.directives` has its own, with the command frame and negation.
_SKILL_CODES = frozenset(
    {
        "authority_claim",
        "authority_grant",
        "authority_transfer",
        "credential_exfiltration",
        "deceptive_success",
        "fake_role_marker",
        "instruction_override",
        "limits_removed",
        "manipulation",
        "override_claim",
        "override_verb",
        "override_void",
        "prompt_leak",
        "refusal_removal",
        "role_play",
        "sabotage",
        "secrecy",
    }
)
_SKILL_CODES_IF_DIRECTED = frozenset(
    {
        "supply_chain",
        "data_destruction",
        "safety_setting",
        "exfiltration",
        "secret_leak",
        "credential_access",
        "hidden_text",
        "encoded_text",
    }
)
# "From now on" frames every standing preference a user states ("from now on, answer in Portuguese"); the skills'
# screen reads it as an attempt to reset the agent. What follows it is screened as it is.
_FROM_NOW = re.compile(
    r"\b(?:from now on|going forward|from here on(?: out)?|starting (?:now|today|this week)|henceforth|"
    r"in (?:the )?future|from today)\b|(?:[àa] partir de (?:maintenant|aujourd'hui)|d[ée]sormais|dor[ée]navant|"
    r"[àa] l'avenir)|(?:a partir de (?:ahora|hoy|agora|hoje)|de ahora en adelante|en adelante|de agora em diante|"
    r"daqui (?:em|pra|para) (?:diante|frente)|doravante)|ab (?:jetzt|sofort|heute)|von nun an|k[üu]nftig|"
    r"从现在开始|从今以后|今后|以后",
    F,
)


def screen_memory(text: str, redactor: Redactor | None = None) -> dict[str, Any] | None:
    """None when ``text`` is a plain statement; else the verdict, codes and reasons that quarantine it. Reasons quote
    the words that matched, redacted."""
    codes: list[str] = []
    reasons: list[str] = []
    # imported by the first screen, not with this module: building its patterns (28 languages) takes two seconds,
    # which every CLI command and every host's start paid
    from . import directives, standing

    found = [(f.code, f.evidence) for f in directives.findings(text)]
    found += [(g.code, g.evidence) for g in standing.findings(text)]
    for code, evidence in found:
        if code in codes:
            continue
        codes.append(code)
        quoted = (redactor or _default_redactor()).redact(evidence)
        reasons.append(f'{directives.REASONS.get(code) or standing.REASONS[code]} ("{quoted}")')
    body = " ".join(_FROM_NOW.sub(" ", text).split())
    result = screen_content(  # a memory is never written as a SKILL.md: its format is not screened, nor any field
        Skill(name="", description="", body=body, category=""),  # but its text (a name of ours says nothing)
        source_text=text,
        strict_provenance=False,
    )
    directed: bool | None = None
    for code, reason in zip(result.codes, result.reasons, strict=False):
        if code in _SKILL_CODES_IF_DIRECTED:
            if directed is None:
                directed = directives.is_directive(text)
            if not directed:
                continue
        elif code not in _SKILL_CODES:
            continue
        codes.append(code)
        reasons.append(reason)
    if not codes:
        return None
    return {"verdict": "quarantined", "codes": sorted(set(codes)), "reasons": list(dict.fromkeys(reasons))}


# Sharing -----------------------------------------------------------------------------------------------------
# Not "im" (German "in the"), "eu" (the EU) or "ive": a work statement writes them.
_FIRST_PERSON = re.compile(
    r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|je|j'\w*|moi|mon|ma|mes|yo|mi|mis|conmigo|meu|minha|meus|"
    r"minhas|comigo|ich|mein|meine|meinen|meinem|meiner|meines|mir|mich)\b|我(?!们)",
    F,
)
# Words that make a statement about someone's private life, whoever it is about ("Dana is pregnant"); only words that
# a statement about the work does not use ("son" is Spanish for "are", a tree has children, a bolt has a Mutter).
_PERSONAL = re.compile(
    r"\b(?:diabet\w*|allerg\w*|pregnan\w*|diagnos\w*|medication|therap(?:y|ist)|illness|disease|cancer|depress(?:ed|ion)|"
    r"anxiety|surgery|disab(?:led|ility)|wife|husband|girlfriend|boyfriend|spouse|divorc\w*|salary|paycheck|debt|"
    r"mortgage|home address|pronouns|sexuality|religion|religious|enceinte|grossesse|salaire|divorce|embarazada|"
    r"sueldo|salario|esposa|esposo|marido|gravida|ehefrau|ehemann|schwanger|gehalt|diabetique|diabetico|alergico)\b"
    r"|糖尿病|过敏|怀孕|妻子|老婆|丈夫|老公|工资|住在",
    F,
)


def personal(text: str) -> bool:
    """A statement about the speaker or about someone's private life: never shared with the speaker's colleagues."""
    folded = strip_marks(text.casefold())
    return bool(_FIRST_PERSON.search(folded) or _PERSONAL.search(folded))


def redact(redactor: Redactor | None, text: str) -> str:
    return redactor.redact(text) if redactor is not None else text
