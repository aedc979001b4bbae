"""Explicit feedback and corrections, read on the host's side.

Light on purpose (regular expressions only, no LLM, no I/O): ``MetaClawPlugin.on_feedback`` maps a
host's thumbs or rating here, and the learning side uses the same correction detector on the next
user message.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

# ---------------------------------------------------------------------------------------------
# Corrections: the next user message says the previous answer was wrong

_NEG_START = re.compile(
    r"^(?:no\b(?![-\s]*(?:problem|worries|thanks|need|rush|pressure|prob)\b)|nope\b|nah\b|wrong\b|incorrect\b|"
    r"not (?:quite|really|right|correct|what)\b|that(?:'s| is|s) (?:not|wrong|incorrect)\b|this (?:is not|isn't|is wrong)\b|"
    r"that isn't\b|(?:you're|you are|ur) wrong\b|try again\b|still (?:wrong|broken|failing|not|doesn't|does not|the same)\b|"
    r"(?:it|that|this) (?:still )?(?:doesn't|does not|didn't|did not|won't|will not) (?:work|run|compile|build|pass)\b|"
    r"(?:i|we) (?:said|asked|meant|told you|wanted)\b|you (?:forgot|missed|ignored|skipped|broke|misunderstood|misread|didn't|did not)\b|"
    r"(?:please )?(?:fix|redo|undo|revert) (?:it|this|that)\b|ugh\b|wtf\b|that broke\b)"
)
_NEG_ANY = re.compile(
    r"\b(?:not what i (?:asked|wanted|meant|said)|that(?:'s| is) (?:wrong|incorrect|not (?:right|correct|it))|"
    r"you (?:misunderstood|misread|got it wrong|broke)|(?:doesn't|does not|didn't|did not) work|"
    r"(?:same|another|new) error|still (?:fails|failing|broken|errors|crashes|wrong)|wrong (?:answer|file|output|result|again)|"
    r"i (?:already )?(?:said|told you|asked (?:you|for))\b(?!.*\b(?:thanks|thank you)\b))"
)
_POSITIVE = re.compile(r"\b(?:thanks|thank you|perfect|great|works now|that works|looks good|lgtm|awesome|exactly)\b")


def detect_correction(text: str | None) -> str | None:
    """The phrase that makes ``text`` a correction of the previous answer, or None."""
    if not text:
        return None
    t = unicodedata.normalize("NFKC", text).lower().replace("\u2019", "'")
    t = " ".join(t.split())[:600]
    head = t[:200]
    m = _NEG_START.match(head.lstrip("\"'*_ >-"))
    if m and not _POSITIVE.search(head[:60]):
        return m.group(0)
    m = _NEG_ANY.search(head)
    if m and not _POSITIVE.search(head):
        return m.group(0)
    return None


# ---------------------------------------------------------------------------------------------
# Explicit feedback

_THUMBS = {
    "up": 1.0,
    "down": -1.0,
    "+1": 1.0,
    "-1": -1.0,
    "👍": 1.0,
    "👎": -1.0,
    "good": 1.0,
    "bad": -1.0,
    "positive": 1.0,
    "negative": -1.0,
    "yes": 1.0,
    "no": -1.0,
    "pass": 1.0,
    "fail": -1.0,
}


def normalise_feedback(score: Any, text: str | None = None) -> float | None:
    """Map a host's feedback to [-1, 1]: bool, a number (clamped), "up"/"down"/emoji; a bare text that
    corrects the answer is -1."""
    if isinstance(score, bool):
        return 1.0 if score else -1.0
    if isinstance(score, int):
        return float(max(-1, min(1, score)))  # compared as integers: a huge one does not overflow
    if isinstance(score, float):
        return None if score != score else max(-1.0, min(1.0, score))  # NaN: no score
    if isinstance(score, str):
        s = score.strip().lower()
        if s in _THUMBS:
            return _THUMBS[s]
        try:
            f = float(s[:64])
        except ValueError:
            pass
        else:
            return None if f != f else max(-1.0, min(1.0, f))
    if text and detect_correction(text):
        return -1.0
    return None
