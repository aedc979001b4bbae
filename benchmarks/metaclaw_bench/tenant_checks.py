"""The checkers of ``bench learning --preset tenants``: did an answer follow its tenant's rule, and is the asked fact
right?

Standard library only: the plugin's verifier path runs this file as a command (``python -I tenant_checks.py
RULE``, the turn as JSON on stdin; exit 0 scores +1, anything else -1). By default a verifier scores the rule *and*
the content, so an answer that follows the form but loses the fact (a one-word fragment, invented words) is not
rewarded; ``--rule-only`` scores the rule alone. The benchmark reads the two apart with the same functions.

The checks read meaning where a table can say it: the asked capital or continent must be named and no other
capital or continent of the table; a file name must carry the asked date and topic. The language checks read
function-word *density*: French prose is about a third function words (le, de, est, que...); a string of invented
words with a few French articles is not. They hold no dictionary, so a text of invented words dense in real function
words would still pass (docs/bench-learning.md says so).
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from collections.abc import Callable

# the question pool's facts: country -> (capital forms, continent); both tenants ask from this one pool
FACTS: dict[str, tuple[tuple[str, ...], str]] = {
    "France": (("Paris",), "europe"),
    "Japan": (("Tokyo",), "asia"),
    "Kenya": (("Nairobi",), "africa"),
    "Canada": (("Ottawa",), "north america"),
    "Italy": (("Rome", "Roma"), "europe"),
    "Egypt": (("Cairo", "Le Caire"), "africa"),
    "Peru": (("Lima",), "south america"),
    "Norway": (("Oslo",), "europe"),
    "Spain": (("Madrid",), "europe"),
    "Germany": (("Berlin",), "europe"),
    "Chile": (("Santiago",), "south america"),
    "Vietnam": (("Hanoi",), "asia"),
    "Morocco": (("Rabat",), "africa"),
    "Greece": (("Athens", "Athenes"), "europe"),
    "Sweden": (("Stockholm",), "europe"),
    "Turkey": (("Ankara",), "asia"),
    "Argentina": (("Buenos Aires",), "south america"),
    "Ghana": (("Accra",), "africa"),
    "Poland": (("Warsaw", "Varsovie"), "europe"),
    "Thailand": (("Bangkok",), "asia"),
    "Portugal": (("Lisbon", "Lisbonne", "Lisboa"), "europe"),
    "Nigeria": (("Abuja",), "africa"),
    "Ireland": (("Dublin",), "europe"),
    "Colombia": (("Bogota",), "south america"),
    "Indonesia": (("Jakarta",), "asia"),
    "Finland": (("Helsinki",), "europe"),
    "Austria": (("Vienna", "Vienne", "Wien"), "europe"),
    "Cuba": (("Havana", "La Havane"), "north america"),
    "China": (("Beijing", "Pekin"), "asia"),
    "Russia": (("Moscow", "Moscou"), "europe"),
    "Senegal": (("Dakar",), "africa"),
    "Hungary": (("Budapest",), "europe"),
}
CONTINENTS: dict[str, tuple[str, ...]] = {
    "europe": ("Europe",),
    "asia": ("Asia", "Asie"),
    "africa": ("Africa", "Afrique"),
    "north america": ("North America", "Amerique du Nord"),
    "south america": ("South America", "Amerique du Sud"),
}
CAPITAL_Q = re.compile(r"^What is the capital of (?P<c>[A-Z][a-z]+)\?$")
CONTINENT_Q = re.compile(r"^Which continent is (?P<c>[A-Z][a-z]+) in\?$")
FILE_Q = re.compile(r"^Suggest a file name for my (?P<t>[a-z ]+) from (?P<m>[A-Z][a-z]+) (?P<d>\d+), (?P<y>\d{4})\.$")
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]  # fmt: skip

# tenant ana's file names: YYYY-MM-DD_topic.ext; tenant ben's: topic_YYYYMMDD.ext (lowercase, topic words by - or _)
FILE_DATE_FIRST = re.compile(r"(?<![\w.-])\d{4}-[01]\d-[0-3]\d_[a-z0-9]+(?:[-_][a-z0-9]+)*\.[a-z0-9]{2,5}(?![\w-])")
FILE_DATE_LAST = re.compile(r"(?<![\w.-])[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*_\d{4}[01]\d[0-3]\d\.[a-z0-9]{2,5}(?![\w-])")
_WORD = re.compile(r"[a-zàâçéèêëîïôûùüÿœ]+(?:'[a-zàâçéèêëîïôûùüÿœ]+)?")
FR_WORDS = frozenset(
    re.findall(
        r"\S+",
        "le la les l un une des du de d et est sont été être ont je tu il elle on nous vous ils elles que qui "
        "quoi dont pour dans sur sous avec sans pas ne n ce c cette ces cet mon ma mes ton ta tes son sa ses "
        "notre nos votre vos leur leurs au aux en où mais ou donc car très bien plus moins aussi comme se s y "
        "par entre vers chez c'est il y qu'il qu'elle n'est l'est d'un d'une l'on oui non",
    )
)
EN_WORDS = frozenset(
    re.findall(
        r"\S+",
        "the an and is are was were be been i you he she it we they that which who what for in on at with "
        "without not no this these those my your his her its our their to of from by as or but so also very "
        "more than there has have had do does it's yes",
    )
)


def fold(text: str) -> str:
    """Lowercase without accents, so Athènes matches Athenes and Amérique America's French form."""
    return "".join(c for c in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(c))


def _names(text: str, forms: tuple[str, ...]) -> bool:
    t = fold(text)
    return any(re.search(rf"(?<![a-z]){re.escape(fold(f))}(?![a-z])", t) for f in forms)


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("’", "'"))


def short(text: str) -> bool:
    """One short answer: 1 to 12 words."""
    return 1 <= len(text.split()) <= 12


def detailed(text: str) -> bool:
    """A detailed answer: at least 20 words."""
    return len(text.split()) >= 20


def _prose(text: str, own: frozenset[str], other: frozenset[str]) -> bool:
    ws = words(text)
    k = sum(w in own for w in ws)
    return len(ws) >= 3 and k >= 2 and k >= 0.35 * len(ws) and k > 2 * sum(w in other for w in ws)


def french(text: str) -> bool:
    """French prose: at least 2 French function words, over a third of the words, over twice the English ones."""
    return _prose(text, FR_WORDS, EN_WORDS)


def english(text: str) -> bool:
    """English prose, by the same density rule as :func:`french`."""
    return _prose(text, EN_WORDS, FR_WORDS)


def file_date_first(text: str) -> bool:
    """A file named ``YYYY-MM-DD_topic.ext`` in lowercase."""
    return bool(FILE_DATE_FIRST.search(text))


def file_date_last(text: str) -> bool:
    """A file named ``topic_YYYYMMDD.ext`` in lowercase."""
    return bool(FILE_DATE_LAST.search(text))


def content(question: str, text: str) -> bool | None:
    """Is the asked fact right? The expected capital (continent) is named and no other of the table's; a file name
    carries the asked date (year, month, day in that order, digits) and topic. None: a request outside the pool."""
    if m := CAPITAL_Q.match(question):
        want = FACTS[m["c"]][0]
        other_capitals = tuple(f for c, (forms, _) in FACTS.items() if c != m["c"] for f in forms)
        return _names(text, want) and not _names(text, other_capitals)
    if m := CONTINENT_Q.match(question):
        key = FACTS[m["c"]][1]
        others = tuple(f for k, forms in CONTINENTS.items() if k != key for f in forms)
        return _names(text, CONTINENTS[key]) and not _names(text, others)
    if m := FILE_Q.match(question):
        y, mo, d = m["y"], MONTHS.index(m["m"]) + 1, int(m["d"])
        date = re.compile(rf"{y}[-_. ]?{mo:02d}[-_. ]?{d:02d}(?!\d)")
        topic = r"[-_ ]?".join(re.escape(w) for w in m["t"].split())
        return bool(date.search(text)) and bool(re.search(topic, text.lower()))
    return None


RULES: dict[str, Callable[[str], bool]] = {
    "short": short,
    "detailed": detailed,
    "french": french,
    "english": english,
    "file_date_first": file_date_first,
    "file_date_last": file_date_last,
}


def main(argv: list[str]) -> int:
    """``tenant_checks.py RULE [--rule-only]``: the rule and the asked fact, or (``--rule-only``) the rule alone."""
    rule, flags = (argv[1], argv[2:]) if len(argv) > 1 else ("", [])
    if rule not in RULES or flags not in ([], ["--rule-only"]):
        print(f"usage: tenant_checks.py {{{','.join(RULES)}}} [--rule-only] < turn.json", file=sys.stderr)
        return 2
    raw = sys.stdin.read()
    try:
        turn = dict(json.loads(raw))
    except (ValueError, TypeError) as e:
        print(f"the turn is not a JSON object: {e}", file=sys.stderr)
        return 2
    answer = str(turn.get("response") or "")
    fact = bool(flags) or content(str(turn.get("instruction") or ""), answer)
    return 0 if RULES[rule](answer) and fact else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
