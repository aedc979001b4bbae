"""Look-alike letters (Cyrillic, Greek, and Latin ones NFKC keeps) and the characters that show nothing: how the
screens (``learning/screening/normalise.py``) and the credential scan (``privacy.unveiled``) read a word disguised
with them."""

from __future__ import annotations

import re
from collections.abc import Callable

_LOOKALIKES = {
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
HOMOGLYPHS = str.maketrans(
    _LOOKALIKES | {k.upper(): v.upper() for k, v in _LOOKALIKES.items() if len(k.upper()) == 1 and k.upper() != k}
)
INVISIBLE = re.compile(
    r"[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f]"
)

_NON_LATIN = re.compile(r"[\u0370-\u03ff\u0400-\u04ff]")
# A word with a Latin letter, matched from the word's start only (``\w*[A-Za-z]`` tried at every position of a
# Cyrillic text backtracks through each word again: ~1 ms per 10 KB)
_LATIN_WORD = re.compile(r"(?<!\w)(?=\w*[A-Za-z])\w+")
_ANY_LATIN = re.compile(r"[A-Za-z]")
_ANY_LOOKALIKE = re.compile("[" + re.escape("".join(map(chr, HOMOGLYPHS))) + "]")


def fold_homoglyphs(t: str) -> str:
    """Look-alikes mapped to Latin letters: everywhere in a text that is mostly Latin, and in a text that is mostly
    Cyrillic or Greek (Russian is read as Russian) only inside the words that mix in Latin letters."""
    if t.isascii():
        return t
    foreign = len(_NON_LATIN.findall(t))
    if foreign <= sum(c.isascii() and c.isalpha() for c in t):  # mostly Latin
        return t.translate(HOMOGLYPHS)
    return fold_mixed(t)


def fold_mixed(t: str, only: Callable[[str, str], bool] | None = None) -> str:
    """Look-alikes mapped to Latin letters inside the words that have a Latin letter ("pаsswоrd" with a Cyrillic а
    and о): a word of one script is left as it is. ``only(word, folded)``: fold just the words it accepts (a Polish
    "nieprawidłowe" keeps its ł where only a disguised noun should change)."""
    if _ANY_LATIN.search(t) is None or _ANY_LOOKALIKE.search(t) is None:  # one script only, or no look-alike
        return t
    if only is None:
        return _LATIN_WORD.sub(lambda m: m.group(0).translate(HOMOGLYPHS), t)

    def fold(m: re.Match[str]) -> str:
        word = m.group(0)
        folded = word.translate(HOMOGLYPHS)
        return folded if folded != word and only(word, folded) else word

    return _LATIN_WORD.sub(fold, t)
