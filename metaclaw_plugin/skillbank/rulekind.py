"""Whether a skill's text states a standing rule (how a user or team wants work done) rather than a technique.

A learned skill stored without ``metadata.kind`` (another evolver, a SKILL.md written by hand, MCP, the dashboard)
is only found by relevance, and the long requests a rule governs rarely name it: 19-30% of such lessons reached
their later rounds (docs/request-path.md, "Unmarked lessons"). A skill whose text reads as a rule ("Always ...",
"Never ...", "... must ...", "Prefer ...", "Every X ...", "no X", "When X, do Y", a title over bulleted rules, in
several languages) is therefore an *inferred* convention. Its file keeps no kind (an explicit ``metadata.kind``
always wins), and a bundled starter skill is never inferred: those are reference notes, found by relevance.
"""

from __future__ import annotations

import re

# Words that make a sentence a standing rule, by language. Only words that rarely appear in a technique's
# description: "needs", "use", "run" or a bare quantifier ("all pages") are not among them.
_WORDS = (
    # English
    r"always|never|must(?:n't| not)?|shall|do not|don't|prefer(?:ably)?|avoid|from now on|by default|required"
    r"|only ever|whenever"
    # German
    r"|immer|stets|nie|niemals|grundsätzlich|ausschließlich|muss|müssen|darf nicht|dürfen nicht|bevorzuge|vermeide"
    # French
    r"|toujours|jamais|doit|doivent|il faut|privilégie[rz]?|préfère[rz]?|évite[rz]?|ne pas|n(?:e |')\w+ pas"
    # Spanish, Portuguese, Italian
    r"|siempre|nunca|jamás|debe[nm]?|hay que|prefiere|prefira|evita[r]?|sempre|devono|bisogna|è necessario"
    # Dutch, Polish, Russian
    r"|altijd|nooit|moet(?:en)?|zawsze|nigdy|musi(?:sz|my|cie|ą)?|всегда|никогда|должн\w*|нельзя|обязательно"
)
_RULE_WORD = re.compile(rf"(?<![\w-])(?:{_WORDS})(?![\w-])", re.IGNORECASE)
# Chinese and Japanese have no spaces between words: the markers stand alone.
_RULE_CJK = re.compile(r"必须|务必|一律|总是|始终|永远不要|不要|不得|禁止|必ず|常に|決して|してはいけない|しないこと")
# "When you X, do Y": a leading condition on the reader's own work, a comma, then what to do. Only with the second
# person: "When summarising API logs into a report, count errors per endpoint" is a technique for one kind of task,
# and a starter-style description often opens with a bare "When ..." or "Before ...".
_CONDITION = re.compile(
    r"^(?:(?:when|whenever|before|after|if|once) you|(?:wenn|bevor|sobald) (?:du|sie)|(?:quand|lorsque|avant que) "
    r"(?:tu|vous)|(?:cuando|siempre que|antes de que) (?:usted|tú|\w+(?:as|es))|quando (?:você|voi|tu)"
    r"|(?:als|wanneer|voordat) (?:je|u)|(?:когда|перед тем как) (?:ты|вы))\b[^,.;:]{0,120},\s*\S",
    re.IGNORECASE,
)
# A description that opens as a how-to names a technique, whatever its steps say.
_HOW_TO = re.compile(r"^(?:how to|steps to|to \w+ |wie man|comment |cómo |como )", re.IGNORECASE)
# A bullet that opens with a quantifier states a rule about every case ("every entry references its ticket").
_QUANTIFIED = re.compile(
    r"^(?:every|each|all|any|jede[rsn]?|alle|chaque|tou(?:te)?s?|cada|tod[oa]s?|ogni|tutt[ie]|elke|alle)\b",
    re.IGNORECASE,
)
# A clause that opens with a prohibiting determiner forbids a thing ("no npm, no yarn", "kein PNG", "sin tildes",
# "pas de emojis"): a rule list says what is not used, a technique says what to do.
_PROHIBITION = re.compile(
    r"(?:^|[,;:(]\s*)(?:no|kein(?:e[nrs]?)?|sin|nada de|pas de|aucune?|geen|niente|nessun[ao]?)\s+(?=\w)", re.IGNORECASE
)
# A bare imperative reads like a technique ("Reconcile bank accounts from the .n43 file, not the PDF"), except in two
# classes. One says how the reader's output is presented: a prefix, a sign-off, capitals, spelling, a title, a name,
# a form of address ("Prefix commit messages with the client ticket ID in square brackets."). The other quantifies
# over the reader's own work in the present tense, the habit ("... in every query you write for us"); a clause in the
# past names the task at hand ("for every page you changed").
_PRESENTATION = re.compile(
    r"^(?:prefix|suffix|capitali[sz]e|spell|title|name|address|abbreviate|sign off|sign \w+ off)\s+\w", re.IGNORECASE
)
_HABIT = re.compile(
    r"\b(?:every|each|any|all)(?:\s+[\w'-]+){1,4}?\s+(?:you|we)\s+(?!(?:did|had|was|were|just)\b)(?![a-z]+ed\b)[a-z]+",
    re.IGNORECASE,
)
_BULLET = re.compile(r"^\s*([-*+•]|\d+[.)])\s+(.+)$")
# The section of a tenant's variant of a shared skill that holds the tenant's lesson (learning.evolution): the
# lesson's description, then its body.
LEARNED_HEADING = "## Learned for this team"
TITLE_WORDS = 8  # a description this short with no rule in it is a title: the rules are in the body's bullets
# A bullet list (not numbered) states rules when at least this share of its bullets does. A lesson written from a
# correction often opens with the complaint ("Way too long and too technical, Frau Korn doesn't know what a CDN
# is.") and states the rules after it, next to the reason ("People zoom text on these sites and px breaks that."):
# a third of the correction's sentences state its rule. Numbered steps are a technique's, and need half, under a
# title only.
LIST_SHARE = 1 / 3
STEPS_SHARE = 1 / 2
SAYS_WORDS = 3  # a bullet shorter than this that states no rule is an interjection ("ugh, no."): not counted


def _rule_in(sentence: str) -> str | None:
    m = _RULE_WORD.search(sentence) or _RULE_CJK.search(sentence) or _PROHIBITION.search(sentence)
    if m:
        return m.group(0).strip(",;:( ")
    m = _QUANTIFIED.match(sentence.strip())
    if m:
        return m.group(0) + " ..."
    m = _CONDITION.search(sentence.strip())
    return m.group(0).split(",", 1)[0] + ", ..." if m else None


def _first_sentence(text: str) -> str:
    """Up to the first sentence end; not at a number's point ("5. März 2025", "step 2. then")."""
    return re.split(r"(?<=[.!?。！？])(?<!\b\d\.)(?<!\b\d\d\.)\s+", text.strip(), maxsplit=1)[0]


def standing_rule(description: str, body: str) -> str | None:
    """Why the text states a standing rule (the words that make it one), or None when it reads as a technique.

    The description's first sentence decides (a rule word, a clause that forbids a thing, an opening quantifier
    over the work: "Every run ...", or a leading second-person condition). Else, unless it opens as a how-to, the
    body's bullets do: a bullet list at least a third of whose bullets state rules (:data:`LIST_SHARE`), or, under a
    description that is only a title ("Release notes format"), numbered items at least half of which do.

    A tenant's variant of a shared skill (a lesson close to a starter skill) is judged by its lesson, the section
    under :data:`LEARNED_HEADING`: its description opens with the shared skill's, a technique's."""
    _, learned, lesson = body.partition(LEARNED_HEADING)
    if learned:
        description, _, body = lesson.strip().partition("\n\n")
    first = _first_sentence(description)
    found = _rule_in(first)
    if not found and (m := _PRESENTATION.match(first) or _HABIT.search(first)):
        found = m.group(0)
    if found:
        return f"its description states a rule ({found!r})"
    if _HOW_TO.match(description.strip()):
        return None
    items = [(m.group(1), m.group(2)) for line in body.splitlines() if (m := _BULLET.match(line))]
    steps = any(mark[0].isdigit() for mark, _ in items)
    if steps and len(description.split()) > TITLE_WORDS:
        return None
    said = [(text, _rule_in(text) is not None) for _, text in items]
    said = [(text, ruled) for text, ruled in said if ruled or len(text.split()) >= SAYS_WORDS]
    ruled = sum(r for _, r in said)
    if ruled and ruled >= (STEPS_SHARE if steps else LIST_SHARE) * len(said):
        return f"{ruled} of its {len(said)} bullets state rules"
    return None
