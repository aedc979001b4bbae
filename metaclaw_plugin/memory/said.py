"""How a line says what it says, beyond its words: whether it only wishes, supposes or denies a thing (a hedge), and
which names in it only address the listener.

A question about what someone did ("Where did Ana learn to surf?") is not answered by a line where she only wished
to ("I've always wanted to learn to surf someday"): the words match, the fact is not there. A question that is itself
about wishes or plans ("What does Ana want to try?") is. And in a transcript, "Thanks, Caroline!" said by Melanie is
Melanie talking to Caroline, not about her: the name is an address, not the line's subject.
"""

from __future__ import annotations

import re

from .text import fold, terms

# Wishing, supposing or denying, in the languages the index reads (matched on folded text: no accents, lower case).
_HEDGE = re.compile(
    r"\b(?:(?:always |ever |really )?want(?:s|ed)? to|wish(?:es|ed)? (?:i|we|to)|someday|some day|one day|"
    r"bucket list|tempted to|(?:i'd|i would|we'd|we would) (?:love|like) to|dream(?:s|ed|ing)? (?:of|about)|"
    r"(?:hope|hoping) to|if only|maybe (?:i|we) (?:should|could|will)|never (?:been|tried|done|had)|"
    r"(?:haven't|have not|hasn't) (?:been|tried|done|started|had)|"
    r"j'aimerais|je voudrais|un jour|je reve de|me gustaria|algun dia|quisiera|sueno con|gostaria|um dia|"
    r"sonho em)\b"
)
# A request about wishes, plans or what might be: a hedged line answers it.
_HEDGED_REQUEST = re.compile(
    r"\b(?:want|wish|dream|hope|hoping|like to|love to|someday|some day|one day|bucket list|plan|goal|aspir|"
    r"tempted|consider|would|might|could|thinking of|interested|aimerai|voudrai|gustari|quier|gostari|quer)"
)
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n+")
# A question asking where (en, fr, es, pt), and a line that places something: a locative preposition before a name
# ("moved to Istanbul", "has been in San Diego", "a picnic at the Radcliffe Park").
_WHERE = re.compile(r"^\W*(?:where|où|d[oó]nde|onde|aonde)\b", re.I)
_PLACE = re.compile(
    r"\b(?:in|to|at|from|near|around|outside|en|à|au|aux|chez|desde|em|no|na|para)\s+"
    r"(?:(?:the|la|le|les|el|los|las|o|a|os|as)\s+)?[A-Z]"
)
_APOSTROPHE = str.maketrans({"’": "'", "‘": "'"})


def _folded(text: str) -> str:
    return fold(text.translate(_APOSTROPHE))


def hedged(text: str) -> bool:
    """Whether the line's main sentence (the one with the most content words: the others are asides, "Still
    thinking about it.") only wishes, supposes or denies."""
    sentences = [s for s in _SENTENCE.split(_folded(text)) if s.strip()]
    if not sentences:
        return False
    main = sentences[0] if len(sentences) == 1 else max(sentences, key=lambda s: len(terms(s)))
    return _HEDGE.search(main) is not None


def asks_where(text: str) -> bool:
    """Whether the request asks where something is or happened."""
    return _WHERE.search(text) is not None


def places(line: str) -> bool:
    """Whether a rendered line places something: a preposition of place before a name (its date label aside)."""
    return _PLACE.search(line.split("] ", 1)[-1]) is not None


def hedged_request(text: str) -> bool:
    """Whether the request asks about wishes, plans or what might be."""
    return _HEDGED_REQUEST.search(_folded(text)) is not None


# A name only addressing the listener: after a greeting or thanks ("Hey Mel", "Thanks, Caroline"), or set off by a
# comma at the end of a sentence ("That's so cool, Camille!"). Its words are left out of what the line is about.
_NAME = r"([A-Z][a-z][\w'’-]*)"
_GREETING = (
    r"(?:^|(?<=[.!?,:;]\s))(?i:(?:hey|hi|hello|hiya|yo|thanks|thank you|thx|bye|goodbye|congrats|congratulations|welcome|"
    r"good (?:morning|night|evening|afternoon|luck)|morning|evening|night|take care|see you|talk soon|cheers|dear|"
    r"sorry|oh|wow|aw+|yay|haha|omg|miss you|love you|bonjour|salut|merci|hola|gracias|oi|obrigad[oa]))[,!]?\s+"
)
_ADDRESS = re.compile(rf"{_GREETING}{_NAME}(?![\w'’-])|,\s+{_NAME}(?=\s*(?:[.!?](?:\s|$)|$))")


def unaddressed(text: str) -> str:
    """``text`` without the names that only address the listener."""
    return _ADDRESS.sub(lambda m: m.group(0).replace(m.group(1) or m.group(2), " "), text)
