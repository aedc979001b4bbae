"""The verdict: :func:`screen` runs every scan over a skill's fields (and over what is hidden or encoded in them)
and combines the findings: ``rejected`` if any finding rejects, ``suspicious`` if any other is found, else
``clean``."""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ...config import PrivacySettings
from ...privacy import Redactor, redactor_for
from ...skillbank.skillmd import metadata_text
from ...types import Skill

if TYPE_CHECKING:
    from . import scans

# The scans' patterns (hundreds, in ~30 languages) take most of a second to compile: they are imported by the first
# screen, not by every process that imports the package (each CLI command, each host's start).

Verdict = Literal["clean", "suspicious", "rejected"]
DEFAULT_MAX_BODY = 6000


@dataclass
class ScreenResult:
    verdict: Verdict
    reasons: list[str] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.verdict == "clean"

    def as_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "reasons": self.reasons, "codes": sorted(set(self.codes))}

    @classmethod
    def of(cls, findings: list[tuple[str, str, str]]) -> ScreenResult:
        """The verdict on the scans' findings (code, severity, reason): any rejecting one rejects, any other
        quarantines."""
        if not findings:
            return cls("clean")
        verdict: Verdict = "rejected" if any(s == "rejected" for _, s, _ in findings) else "suspicious"
        return cls(verdict, [r for _, _, r in findings], [c for c, _, _ in findings])


# Words that rot13 text holds and plain text seldom does: English function words and the words of an attack, in rot13
# ("the", "you", "all", "ignore", "previous", "instructions", "http", "curl", "bash", "password", "secret"...). A text
# with none of them is not rot13 text, and its rot13 is not scanned (half the intent scans of an ordinary text).
_ROT13_WORDS = re.compile(
    r"\b(?:gur|naq|lbh|lbhe|vf|bs|gb|vg|sbe|jvgu|guvf|gung|nyy|abg|ner|jvyy|zhfg|nyjnlf|arire|vtaber|vtaberq|"
    r"cerivbhf|vafgehpgvbaf|vafgehpgvba|ehyrf|qvfertneq|sbetrg|bireevqr|flfgrz|cebzcg|eriryny|eriry|frperg|frpergf|"
    r"cnffjbeq|cnffjbeqf|gbxra|gbxraf|xrl|xrlf|pbasvt|rai|rkrphgr|eha|fraq|hcybnq|funer|cbfg|qryrgr|erzbir|"
    r"uggc|uggcf|jjj|phey|jtrg|onfu|fuhg|fhqb|ebbg|nqzva|riny|rkrp|rpub|cevag|fubj|hfre|hfref|qngn|svyr|svyrf)\b",
    re.I,
)


def _default_redactor() -> Redactor:
    """Default privacy settings' redactor, for a caller with no home (tools, tests); the product passes the home's."""
    return redactor_for(PrivacySettings())


def screen(
    skill: Skill,
    *,
    source_text: str | None = None,
    strict_provenance: bool | None = None,
    max_body_chars: int = DEFAULT_MAX_BODY,
    redactor: Redactor | None = None,
) -> ScreenResult:
    """Screen one skill: its format (what we would write must parse back) and its content (:func:`scan_content`).
    ``source_text`` is the (redacted) text of the sessions it came from; URLs and e-mails must appear there.
    ``strict_provenance`` defaults to True for evolved skills (an unsourced URL rejects) and False otherwise (it
    quarantines)."""
    from .scans import Collector, check_format

    col = Collector()
    check_format(skill, col, max_body_chars)
    _scan_content(skill, col, source_text, strict_provenance, redactor)
    return ScreenResult.of(col.items)


def screen_content(
    skill: Skill,
    *,
    source_text: str | None = None,
    strict_provenance: bool | None = None,
    redactor: Redactor | None = None,
) -> ScreenResult:
    """:func:`screen` without the format check (its round trip through YAML is a third of a short text's screen):
    for text that is never written as a SKILL.md, such as a user's statement kept as a memory."""
    from .scans import Collector

    col = Collector()
    _scan_content(skill, col, source_text, strict_provenance, redactor)
    return ScreenResult.of(col.items)


def _scan_content(
    skill: Skill,
    col: scans.Collector,
    source_text: str | None,
    strict_provenance: bool | None,
    redactor: Redactor | None,
) -> None:
    """What a skill's text says: intent, hidden and encoded text, credentials, provenance, secrets."""
    from .patterns import LIMITABLE
    from .scans import (
        Collector,
        decode_payloads,
        limit_stated,
        scan_credentials,
        scan_hidden,
        scan_intent,
        scan_provenance,
    )

    strict = skill.origin == "evolved" if strict_provenance is None else strict_provenance
    parts = [
        ("name", skill.name.replace("-", " ") if isinstance(skill.name, str) else ""),
        ("description", skill.description or ""),
        ("body", skill.body or ""),
        ("category", skill.category or ""),
    ]
    full = "\n".join(p for _, p in parts)
    decoded = scan_hidden(full, col)
    other = decode_payloads(full, col)
    for label, text in parts:
        if text and label == "name":
            # a name is a few words: the limits it carries are stated in the description and the body
            named = Collector()
            scan_intent(text, named, " in the name")
            limited = limit_stated(f"{skill.description or ''}\n{skill.body or ''}")
            for code, sev, reason in named.items:
                if not (limited and code in LIMITABLE):
                    col.add(code, sev, reason)
        elif text:
            scan_intent(text, col, f" in the {label}")
    # A phrase split across the description and the body still reads as one instruction.
    if skill.description and skill.body:
        scan_intent(f"{skill.description} {skill.body}", col, "")
    scan_credentials(full, col)
    for payload in decoded + other:
        scan_intent(payload, col, " in hidden or encoded text")
        scan_credentials(payload, col, " in hidden or encoded text")
    for payload in decoded + other:
        for _ in range(2):  # nested encodings: decode what was decoded
            inner = scan_hidden(payload, Collector()) + decode_payloads(payload, Collector())
            for p in inner:
                scan_intent(p, col, " in nested encoded text")
            payload = " ".join(inner)
            if not payload:
                break
    if _ROT13_WORDS.search(full):  # text written in rot13 holds its common words ("gur", "lbh", "vtaber")
        rot = codecs.decode(full, "rot_13")
        before = {c for c, _, _ in col.items}
        rot_col = Collector()
        scan_intent(rot, rot_col, " in rot13 text")
        for c, sev, r in rot_col.items:  # rot13 of plain text is gibberish; a real match there is an encoding
            if c not in before and c not in ("fake_role_marker",):
                col.add(c, sev, r)
    scan_provenance(full, source_text, col, strict)
    # the front matter's metadata (nested values included) is in the file too: the same secret check
    secrets = (redactor or _default_redactor()).find(f"{full}\n{metadata_text(skill)}")
    if secrets:
        col.add("secret", "rejected", f"contains what looks like a secret ({', '.join(secrets)})")
