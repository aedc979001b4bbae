"""Text as the screen reads it: Unicode NFKC, invisible and bidi characters removed, homoglyphs (Cyrillic and Greek
look-alikes; where the text is mostly Cyrillic or Greek, only in the words that mix in Latin letters) and, on
request, leetspeak mapped to letters, letter-separator chains ("i.g.n.o.r.e", "i g n o r e")
joined, case folded, whitespace collapsed; :func:`squash` keeps the letters only. The memory screen
(``memory.directives``) reads text through it too."""

from __future__ import annotations

import html
import re
import unicodedata
from functools import lru_cache

from ...lookalikes import INVISIBLE, fold_homoglyphs
from ...text import strip_marks

_LEET = str.maketrans(
    {
        "0": "o",
        "1": "i",
        "3": "e",
        "4": "a",
        "5": "s",
        "7": "t",
        "@": "a",
        "$": "s",
        "!": "i",
        "|": "l",
        "+": "t",
        "€": "e",
    }
)
# A word with a letter and a character _LEET maps (only those change: a lookahead skips the others, most of a text).
_LEET_WORD = re.compile(r"(?<![\w@$!|+€])(?=[\w@$!|+€]*[013457@$!|+€])[\w@$!|+€]*[a-z][\w@$!|+€]*(?![\w@$!|+€])")
_PERCENT = re.compile(r"%([2-7][0-9a-f])")
_WORD_SEP = re.compile(r"(?<=\b\w)[.\-_*~](?=\w\b)")  # i.g.n.o.r.e -> ignore


# One screen reads the same text through this up to nine times (the memory screen's intent scan, the skills' scan of
# the same body and of its rot13, their squashed forms, the credential scan): each text is normalised once. Only
# texts up to CACHED_CHARS are kept (a turn can be megabytes, and 64 of them would stay in memory).
CACHED_CHARS = 16_384


def normalise(text: str, leet: bool = False) -> str:
    return _cached(text, leet) if len(text) <= CACHED_CHARS else _normalise(text, leet)


def _normalise(text: str, leet: bool) -> str:
    t = unicodedata.normalize("NFKC", text)
    t = INVISIBLE.sub("", t)
    t = fold_homoglyphs(strip_marks(t).casefold())
    t = t.replace("\u2019", "'").replace("`", "")
    if "%" in t:  # percent-encoded text ("ignore%20all%20previous"): printable ASCII only
        t = _PERCENT.sub(lambda m: chr(int(m.group(1), 16)), t)
    if "&" in t:  # HTML character references ("inst&#114;uctions", "&lt;system&gt;")
        t = html.unescape(t)
    for _ in range(3):  # letter-separator chains: i.g.n.o.r.e, i-g-n-o-r-e
        new = _WORD_SEP.sub("", t)
        if new == t:
            break
        t = new
    t = re.sub(r"\b(?:\w ){3,}\w\b", lambda m: m.group(0).replace(" ", ""), t)  # i g n o r e
    if leet:
        # Digits and symbols inside words only ("1gn0re"), so version numbers stay numbers.
        t = _LEET_WORD.sub(lambda m: m.group(0).translate(_LEET), t)
    return " ".join(t.split())


_cached = lru_cache(maxsize=64)(_normalise)


def squash(text: str) -> str:
    return re.sub(r"[^a-z]", "", normalise(text, leet=True))
