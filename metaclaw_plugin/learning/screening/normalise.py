"""Text as the screen reads it: Unicode NFKC, invisible and bidi characters removed, homoglyphs (Cyrillic and Greek
look-alikes; where the text is mostly Cyrillic or Greek, only in the words that mix in Latin letters) and, on
request, leetspeak mapped to letters, letter-separator chains ("i.g.n.o.r.e", "i g n o r e")
joined, case folded, whitespace collapsed; :func:`squash` keeps the letters only. The memory screen
(``memory.directives``) reads text through it too."""

from __future__ import annotations

import re
import unicodedata

from ...text import strip_marks

_HOMOGLYPHS = str.maketrans(
    {
        # Cyrillic
        "а": "a",
        "в": "b",
        "е": "e",
        "ё": "e",
        "к": "k",
        "м": "m",
        "н": "h",
        "о": "o",
        "р": "p",
        "с": "c",
        "т": "t",
        "у": "y",
        "х": "x",
        "ѕ": "s",
        "і": "i",
        "ї": "i",
        "ј": "j",
        "ԁ": "d",
        "ɡ": "g",
        "һ": "h",
        "ӏ": "l",
        "ԛ": "q",
        "ԝ": "w",
        "ү": "y",
        # Greek
        "α": "a",
        "β": "b",
        "ε": "e",
        "η": "n",
        "ι": "i",
        "κ": "k",
        "ν": "v",
        "ο": "o",
        "ρ": "p",
        "τ": "t",
        "υ": "u",
        "χ": "x",
        "γ": "y",
        "ω": "w",
        "μ": "u",
        # Latin look-alikes that NFKC keeps
        "ı": "i",
        "ł": "l",
        "ø": "o",
        "đ": "d",
        "ß": "ss",
        "ɑ": "a",
        "ɩ": "i",
        "ʀ": "r",
        "ѵ": "v",
    }
)
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
INVISIBLE = re.compile(
    r"[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f]"
)
# A word with a letter and a character _LEET maps (only those change: a lookahead skips the others, most of a text).
_LEET_WORD = re.compile(r"(?<![\w@$!|+€])(?=[\w@$!|+€]*[013457@$!|+€])[\w@$!|+€]*[a-z][\w@$!|+€]*(?![\w@$!|+€])")
_WORD_SEP = re.compile(r"(?<=\b\w)[.\-_*~](?=\w\b)")  # i.g.n.o.r.e -> ignore


_NON_LATIN = re.compile(r"[\u0370-\u03ff\u0400-\u04ff]")
_LATIN_WORD = re.compile(r"\w*[a-z]\w*")


def _fold_homoglyphs(t: str) -> str:
    """Look-alikes mapped to Latin letters: everywhere in a text that is mostly Latin, and in a text that is mostly
    Cyrillic or Greek (Russian is read as Russian) only inside the words that mix in Latin letters."""
    if t.isascii():
        return t
    foreign = len(_NON_LATIN.findall(t))
    if foreign <= sum(c.isascii() and c.isalpha() for c in t):
        return t.translate(_HOMOGLYPHS)
    return _LATIN_WORD.sub(lambda m: m.group(0).translate(_HOMOGLYPHS), t)


def normalise(text: str, leet: bool = False) -> str:
    t = unicodedata.normalize("NFKC", text)
    t = INVISIBLE.sub("", t)
    t = _fold_homoglyphs(strip_marks(t).casefold())
    t = t.replace("\u2019", "'").replace("`", "")
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


def squash(text: str) -> str:
    return re.sub(r"[^a-z]", "", normalise(text, leet=True))
