"""The checkers of ``bench learning``'s task families: did an answer follow the user's rule?

Standard library only, so the plugin's verifier path runs this file as a command, the way a user's config
does (``reward.verifiers: {boxed: [python, -I, learning_checks.py, boxed]}``): the turn arrives as JSON on
stdin, exit 0 scores +1 and anything else -1. The benchmark scores success with the same functions.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable

BOXED = re.compile(r"\\boxed\{[^{}]+\}")
# a date and time with an explicit offset (±hh:mm, or Z for UTC), e.g. 2024-03-01T09:00:00+01:00
ISO_OFFSET = re.compile(r"\b\d{4}-[01]\d-[0-3]\dT[0-2]\d:[0-5]\d(?::[0-5]\d(?:\.\d+)?)?(?:[+-][01]\d:[0-5]\d|Z)(?!\w)")
# YYYY-MM-DD_topic.ext, lowercase, the topic words joined by - or _
FILE_NAME = re.compile(r"(?<![\w.-])\d{4}-[01]\d-[0-3]\d_[a-z0-9]+(?:[-_][a-z0-9]+)*\.[a-z0-9]{2,5}(?![\w-])")
_FENCE = re.compile(r"^```(?:json)?\s*\n?(.*?)\n?```$", re.S)
_FR = frozenset(
    [
        "le",
        "la",
        "les",
        "un",
        "une",
        "des",
        "du",
        "de",
        "et",
        "est",
        "je",
        "tu",
        "il",
        "elle",
        "nous",
        "vous",
        "ils",
        "elles",
        "que",
        "qui",
        "pour",
        "dans",
        "sur",
        "avec",
        "pas",
        "ne",
        "ce",
        "cette",
        "ces",
        "mon",
        "ma",
        "mes",
        "votre",
        "vos",
        "son",
        "sa",
        "ses",
        "au",
        "aux",
        "en",
        "où",
        "mais",
        "ou",
        "donc",
        "très",
        "bien",
        "oui",
        "non",
        "merci",
        "bonjour",
        "c'est",
        "il",
        "y",
        "a",
    ]
)
_EN = frozenset(
    [
        "the",
        "a",
        "an",
        "and",
        "is",
        "are",
        "i",
        "you",
        "he",
        "she",
        "we",
        "they",
        "that",
        "which",
        "for",
        "in",
        "on",
        "with",
        "not",
        "this",
        "these",
        "my",
        "your",
        "his",
        "her",
        "to",
        "of",
        "it",
        "be",
        "was",
        "were",
        "have",
        "has",
        "do",
        "does",
        "yes",
        "no",
        "thanks",
        "hello",
        "there",
        "what",
    ]
)


def boxed(text: str) -> bool:
    """The final answer is in ``\\boxed{...}``."""
    return bool(BOXED.search(text))


def json_answer(text: str) -> bool:
    """The whole answer is one JSON object with an ``answer`` key (a ```json fence around it is allowed)."""
    s = text.strip()
    m = _FENCE.match(s)
    if m:
        s = m.group(1).strip()
    try:
        doc = json.loads(s)
    except ValueError:
        return False
    return isinstance(doc, dict) and "answer" in doc


def iso_date(text: str) -> bool:
    """A date written in ISO 8601 with a time and an offset."""
    return bool(ISO_OFFSET.search(text))


def file_name(text: str) -> bool:
    """A file named ``YYYY-MM-DD_topic.ext`` in lowercase."""
    return bool(FILE_NAME.search(text))


def french(text: str) -> bool:
    """The answer is in French: at least three French function words, more than English ones."""
    words = re.findall(r"[a-zàâçéèêëîïôûùüÿœ']+", text.lower())
    fr = sum(w in _FR for w in words)
    return fr >= 3 and fr > sum(w in _EN for w in words)


def short(text: str) -> bool:
    """One short answer: 1 to 12 words."""
    return 1 <= len(text.split()) <= 12


CHECKS: dict[str, Callable[[str], bool]] = {
    "boxed": boxed,
    "json": json_answer,
    "iso_date": iso_date,
    "file_name": file_name,
    "french": french,
    "short": short,
}


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[1] not in CHECKS:
        print(f"usage: learning_checks.py {{{','.join(CHECKS)}}} < turn.json", file=sys.stderr)
        return 2
    try:
        turn = json.load(sys.stdin)
    except ValueError as e:
        print(f"the turn is not JSON: {e}", file=sys.stderr)
        return 2
    return 0 if CHECKS[argv[1]](str(turn.get("response") or "")) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
