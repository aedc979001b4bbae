"""Relevance-ranked skill retrieval.

The keyword retriever is BM25 over name, description and body (name and description weigh more,
since they say when a skill applies). It is built in the background whenever the library
changes; a search is a walk over precomputed postings and costs well under a millisecond at
thousands of skills. Scores are normalised to 0..1 as "the share of the query's information
that this skill matches", where a query's information is capped at ``INFO_CAP`` rare terms: a
short request must be mostly matched, a long one (paths, fields, pasted data) needs as much matched
evidence as a short one, not a share of everything it says. So one threshold
(``retrieval.min_score``) works for short and long requests alike.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple, Protocol

import numpy as np

from ..infra.memo import Memo
from ..tasktext import Repeats, TurnTask, user_words
from ..text import message_text, strip_marks
from ..types import Message, Skill

_TOKEN = re.compile(r"[a-z0-9]+")
# Opaque identifiers: UUIDs and hex runs of 6+ characters with a digit and a letter (request ids, commit hashes,
# trace ids, tags). They name no topic, yet on a short request their sub-word pieces move the embedding and their
# rare terms dilute the keyword share: random 8-hex tags took the block away from one short request 12 times in
# 200 (tests/core/test_retrieval.py). Only whole tokens go: 'a1b2c3.log', 'file_ab12cd' and words of hex letters stay.
_OPAQUE = re.compile(
    r"(?<![\w.-])(?=[0-9a-f-]{6})(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    r"|(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{6,})(?![\w-]|\.\w)",
    re.IGNORECASE,
)
_EMPTY_PAIR = re.compile(r"[\[(<{] *[\])>}]")  # the brackets an identifier stood in
_SPACES = re.compile(r" {2,}")
_DIGIT = re.compile(r"[0-9]")
STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "let",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "please",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "can't",
        "don't",
        "i'm",
        "it's",
        "let's",
        "need",
        "want",
        "make",
        "sure",
        "get",
        "got",
        "also",
        "use",
        "using",
        "used",
        "one",
        "two",
        "new",
        "like",
        "thing",
        "things",
        "something",
        "way",
        "ok",
        "okay",
        "hi",
        "hey",
        "hello",
        "yo",
        "thanks",
        "thank",
        "cheers",
    ]
)
# The function words of the other languages people write to the plugin in (German, French, Spanish, Italian,
# Portuguese, Dutch), accents folded: a learned rule written in German shared "ich", "die" or "ein" with every German
# chat line, which passed for evidence. Words that mean something in English (hat, son, war) are left out; "die"
# is in, as the German article is far more common in requests than the English verb in skills.
FOREIGN_WORDS = frozenset(
    [
        "der",
        "die",
        "das",
        "den",
        "dem",
        "des",
        "ein",
        "eine",
        "einen",
        "einem",
        "einer",
        "eines",
        "und",
        "ist",
        "sind",
        "ich",
        "du",
        "sie",
        "wir",
        "ihr",
        "es",
        "mit",
        "von",
        "zu",
        "zum",
        "zur",
        "auf",
        "fur",
        "nicht",
        "wie",
        "wer",
        "wo",
        "im",
        "auch",
        "bei",
        "oder",
        "aber",
        "noch",
        "nur",
        "mir",
        "mich",
        "dir",
        "dich",
        "kann",
        "konnen",
        "welche",
        "welcher",
        "wenn",
        "dass",
        "sich",
        "man",
        "wird",
        "werden",
        "habe",
        "haben",
        "gibt",
        "lange",
        "viele",
        "le",
        "les",
        "un",
        "une",
        "du",
        "et",
        "est",
        "sont",
        "je",
        "tu",
        "il",
        "elle",
        "nous",
        "vous",
        "ils",
        "elles",
        "pour",
        "dans",
        "avec",
        "sur",
        "pas",
        "que",
        "qui",
        "quoi",
        "quel",
        "quelle",
        "comment",
        "au",
        "aux",
        "ce",
        "cette",
        "mon",
        "ma",
        "mes",
        "ton",
        "ta",
        "se",
        "sa",
        "ses",
        "en",
        "sont",
        "el",
        "los",
        "las",
        "una",
        "uno",
        "unos",
        "unas",
        "es",
        "esta",
        "yo",
        "que",
        "como",
        "para",
        "por",
        "con",
        "del",
        "al",
        "mi",
        "su",
        "sus",
        "cual",
        "cuanto",
        "cuantos",
        "cuantas",
        "muy",
        "lo",
        "le",
        "tiene",
        "hay",
        "il",
        "lo",
        "gli",
        "di",
        "da",
        "che",
        "sono",
        "per",
        "con",
        "una",
        "come",
        "qual",
        "quale",
        "si",
        "non",
        "del",
        "della",
        "e",
        "os",
        "um",
        "uma",
        "sao",
        "com",
        "qual",
        "do",
        "da",
        "dos",
        "das",
        "no",
        "na",
        "em",
        "eu",
        "het",
        "een",
        "en",
        "zijn",
        "ik",
        "je",
        "van",
        "voor",
        "met",
        "op",
        "hoe",
        "wat",
        "wie",
        "niet",
        "dat",
        "er",
        "te",
        "heeft",
    ]
)
ENGLISH_WORDS = STOPWORDS - FOREIGN_WORDS
STOPWORDS = STOPWORDS | FOREIGN_WORDS
_WORD = re.compile(r"[a-z]+")


def outside_english(text: str) -> bool:
    """Whether a request may be written in another language than the static embedding model's (English): letters
    outside ASCII, or a function word of :data:`FOREIGN_WORDS`. That model reads such texts as alike whatever they
    say, so its similarity is no evidence for them without a word in common (HybridIndex)."""
    if not text.isascii():
        return True
    return any(w in FOREIGN_WORDS for w in _WORD.findall(text.lower()))


def in_another_language(text: str) -> bool:
    """Whether a request is written in another language than English: letters outside ASCII, or more function words
    of :data:`FOREIGN_WORDS` than English ones. Stricter than :func:`outside_english`, where one such word is
    enough: in English text it is chance ("e.g." has the Italian "e"). A short line of chat in another language
    passes the hybrid gate on its words alone (HybridIndex)."""
    if not text.isascii():
        return True
    words = set(_WORD.findall(text.lower()))
    return len(words & FOREIGN_WORDS) > len(words & ENGLISH_WORDS)


def written_in_another_language(text: str) -> bool:
    """Whether a skill's text is written in another language than English: more function words of
    :data:`FOREIGN_WORDS` than English ones, accents folded (an English lesson that names "Frau Körner" or a "€" stays
    English); with no Latin word, letters outside ASCII. The static model's similarity across languages means little
    (HybridIndex)."""
    words = set(_WORD.findall(strip_marks(text.lower())))
    if not words:
        return not text.isascii()
    return len(words & FOREIGN_WORDS) > len(words & ENGLISH_WORDS)


FIELD_WEIGHTS = {"name": 3.0, "description": 2.0, "body": 1.0}
K1 = 1.2
B = 0.75
MAX_QUERY_TERMS = 32
# The normaliser counts at most this many "rare terms" of information (in units of the IDF of a term no skill
# has). A long agent request (file names, fields, pasted logs or code) carries far more information than any
# skill can match; without the cap every specific token diluted the score and min_score rejected nearly all
# real requests (issue 21: 3% of long requests got a skill, 81% with the cap, short-set figures unchanged).
INFO_CAP = 6.0
CONTEXT_WEIGHT = 0.5  # earlier messages count half as much as the request itself
SHORT_TERMS = 12  # requests with more distinct terms than this are "long" (the hybrid gate; a work request)
# ... or with more characters than this: Chinese or Japanese text gives few terms (no spaces between its words).
# Every short request of tests/data (short_requests, chance_word_requests) has at most 9 terms and 59 characters;
# every round of the reach scenarios at least 14 terms and 157 characters.
LONG_CHARS = 160
# A question this short with no pasted data is chat, whatever its term count: "my laptop fan goes crazy when I run
# three astro dev servers at once, is that normal? M1 air, 8GB" has 13 terms. The held-out scenarios' chat questions
# of 13-16 terms are 96-195 characters, and no request of the own long set is a question this short. Such a question
# still gets a rule that governs it by relevance, not as a standing rule of its tenant's.
QUESTION_CHARS = 200
_QUESTION_MARK = re.compile(r"[?？¿]")
# A file the request names, by a path or a name with its extension: a task on files is work however short its
# sentence ("Write day02/weekly.json with the week's averages from day02/week.csv", 145 characters, 11 terms).
_FILE_NAMED = re.compile(
    r"(?:^|[\s(`'\"])(?:[\w.-]+/)+[\w.-]*\w|\b[\w-]+\.(?:json|jsonl|csv|tsv|ya?ml|toml|py|ipynb|js|mjs|ts|tsx|jsx|go|rs|"
    r"java|kt|rb|php|sql|md|txt|html|css|scss|sh|xml|ini|cfg|conf|env|lock|xlsx|docx|pdf|log|proto|tf)\b"
)
# Two options of a choice, each on its line ("A. avg_temperature", "b) a bare number", "2: rebase"): a quiz on the
# work asks the user's rules however short its question (the public MetaClaw-Bench's 122 multiple-choice rounds).
_OPTIONS = re.compile(
    r"^[ \t]*(?:\(?[A-Ha-h]\)|[A-Ha-h][.:]|[1-9][.):])[ \t]+\S[^\n]*\n(?:[ \t]*\n)?"
    r"[ \t]*(?:\(?[A-Ha-h]\)|[A-Ha-h][.:]|[1-9][.):])[ \t]+\S",
    re.MULTILINE,
)
# A line of pasted data: indented (a log, code, a table), a code fence, or a shell prompt.
_DATA_LINE = re.compile(r"^(?:[ \t]{2,}\S|```|[$>] )", re.MULTILINE)


def stem(tok: str) -> str:
    """A deliberately light stemmer: enough that 'files'/'file', 'writing'/'write' and 'backed'/'back' meet."""
    if len(tok) <= 3 or tok.isdigit():
        return tok
    if tok.endswith("ies") and len(tok) > 4:
        tok = tok[:-3] + "y"
    elif tok.endswith(("sses", "xes", "ches", "shes", "zes")):
        tok = tok[:-2]
    elif tok.endswith("s") and not tok.endswith(("ss", "us", "is")):
        tok = tok[:-1]
    for suf in ("ing", "edly", "ed"):
        if tok.endswith(suf) and len(tok) - len(suf) >= 3:
            tok = tok[: -len(suf)]
            if len(tok) > 3 and tok[-1] == tok[-2] and tok[-1] not in "lsz":
                tok = tok[:-1]  # 'running' -> 'run', 'stopped' -> 'stop'
            break
    if tok.endswith("e") and len(tok) >= 4:
        tok = tok[:-1]  # 'write'/'writ(ing)', 'file'/'fil(es)'
    return tok


_TERMS: Memo[str, str] = Memo(100_000)  # word -> its term, or "" for a stop word; words repeat: one lookup each


def _term(word: str) -> str:
    return _TERMS.put(word, "" if word in STOPWORDS or len(word) <= 1 else stem(word))


def tokenize(text: str) -> list[str]:
    out = []
    known = _TERMS.get
    for word in _TOKEN.findall(strip_marks(text.lower()).replace("_", " ")):
        term = known(word)
        if term is None:
            term = _term(word)
        if term:
            out.append(term)
    return out


_CONTEXT_TERMS: Memo[str, frozenset[str]] = Memo(4096)


def context_terms(text: str) -> frozenset[str]:
    """The terms of a context text. The context is the conversation's recent past, so the same text
    comes back turn after turn: remember it (bounded)."""
    terms = _CONTEXT_TERMS.get(text)
    if terms is None:
        terms = _CONTEXT_TERMS.put(text, frozenset(tokenize(text)))
    return terms


def without_ids(text: str) -> str:
    """``text`` without its opaque identifiers (:data:`_OPAQUE`), spaces kept single, so the word cache of the
    static embedder still applies. Search only (the skill bank calls it when a request's block is not cached):
    ~2 us for a short request, ~50-70 us for 2,000 characters."""
    if not _DIGIT.search(text):
        return text
    out = _OPAQUE.sub("", text)
    if out == text:
        return text
    return _SPACES.sub(" ", _EMPTY_PAIR.sub("", out)).strip()


# Words of the work that everyday life uses in another sense ("my driving test", "a timeout for my toddler", "commit
# to running three times a week"), and the words that say a line is about someone's life. A short line of a life
# that meets a skill only through such words (and generic ones) meets it by chance: the everyday held-out set of
# tests/data had three such blocks in 45 lines; a set written at stop 61 three in 20 ("debug why my sourdough won't
# rise", "a test to see if my eggs are fresh", "commit to a morning run routine").
OTHER_SENSE_TERMS = frozenset(
    tokenize(
        "test tests commit commits timeout run running runs branch merge push pull build deploy release ship fork "
        "patch cache crash log shell class object string table key port host server bug thread queue stack tree root "
        "driver terminal window bash python java ruby mock hook token pipeline sprint ticket issue review retry time "
        "times three two week weeks day days short long simple quick new help debug debugging good bad best better way "
        "tips tip see still make get suggest fresh"
    )
)
A_LIFE_TERMS = frozenset(
    tokenize(
        "toddler toddlers kid kids son daughter wife husband partner aunt uncle niece nephew mom mum dad mother "
        "father grandma grandpa grandmother grandfather baby babies family friend friends birthday wedding driving "
        "dinner recipe vacation holiday dog cat pet gym workout jogging marathon landlord neighbor neighbour teacher "
        "school morning routine habit breakfast lunch bread sourdough dough cake baking eggs egg fridge kitchen oven "
        "garden plant plants"
    )
)


def by_chance(matched: frozenset[str]) -> bool:
    """Whether the terms a short request about someone's life (one of :data:`A_LIFE_TERMS`) shares with a skill are
    only words of the work in their everyday sense and generic words (:data:`OTHER_SENSE_TERMS`): "What should I bring
    to my driving test?" and a skill on writing tests share "test" alone."""
    return bool(matched) and matched <= OTHER_SENSE_TERMS


def is_long(query: str, n_terms: int | None = None) -> bool:
    """Whether a request is a piece of work (a task with its data, paths, steps) rather than a line of chat: the turns
    a learned standing rule reaches without being named (SkillBank, inferred conventions) and that search with the
    conversation's context. A question of at most :data:`QUESTION_CHARS` with no line of pasted data is chat in any
    language, however many terms it has; a question with its options (a quiz on the work) is work. ``n_terms``: the
    request's distinct terms, when known. (The hybrid gate's
    "long request" is the term count alone: a governed question of 13+ terms passes there on either signal.)"""
    if _OPTIONS.search(query):
        return True
    if len(query) <= QUESTION_CHARS and _QUESTION_MARK.search(query) and not _DATA_LINE.search(query):
        return False
    if n_terms is None:
        n_terms = len(set(tokenize(query)))
    return len(query) > LONG_CHARS or n_terms > SHORT_TERMS or _FILE_NAMED.search(query) is not None


class TaskParts(NamedTuple):
    query: str  # the user's words of the current turn
    context: str  # recent user and assistant messages, newest first, without the client's constant preambles
    repeated: str  # the recent messages left out of ``context`` as constant: not retrieval's signal, but said


def task_parts(
    messages: Sequence[Message],
    context_messages: int = 2,
    max_chars: int = 2000,
    repeats: Repeats | None = None,
    task: TurnTask | None = None,
) -> TaskParts:
    """What the current turn is about: the user's words (:func:`~metaclaw_plugin.tasktext.task_text`: the task
    message without the client's wrappers), and a little recent context apart. With ``repeats`` (the bank's),
    preambles a client sends beside every task are learned and left out of both; ``repeated`` keeps the ones
    left out of the context, since they are still in the prompt (a rule the user opened the conversation with
    comes back in every request of it).

    They are kept apart because they weigh differently: small talk in the context must not dilute the
    request. System messages (host boilerplate, often tens of KB) and tool output are left out. ``task``: the
    request's task text when the caller has it (the plugin's, read once for skills and memory).
    """
    query, at = (task or TurnTask(messages, repeats)).get(max_chars)
    if at < 0:
        return TaskParts("", "", "")
    budget = max_chars - len(query)
    pieces: list[str] = []
    constant: list[str] = []
    for j in range(at - 1, -1, -1):
        if len(pieces) >= context_messages or budget <= 0:
            break
        m = messages[j]
        role = m.get("role") if isinstance(m, dict) else None
        if role not in ("user", "assistant"):
            continue
        t = (user_words(m) if role == "user" else message_text(m))[: min(budget, 500)]
        if not t:
            continue
        if repeats is not None and repeats.constant(t, query):
            if len(constant) < context_messages:
                constant.append(t)
        else:
            pieces.append(t)
            budget -= len(t)
    return TaskParts(query, "\n".join(pieces), "\n".join(constant))


class Ranked(NamedTuple):
    """A first-stage search: the gate's verdict, the skills it serves (``search``'s answer when it passes) and the
    wider ranked candidates the second stage judges (skillbank.rerank): a short request is served only the
    candidates near its best (embedding.RELATIVE), and a long one the gate turns away may keep candidates."""

    passed: bool
    served: list[tuple[Skill, float]]
    candidates: list[tuple[Skill, float]]


def allow_all(_skill: Skill) -> bool:
    """The ``allow`` of a request that may be served every skill (no tenant's own skill in the library, none
    replaced): a retriever ranks as for any filter (a filter's candidate count) and skips the call per candidate."""
    return True


class Retriever(Protocol):
    """A search index over one snapshot of the active skills. Built off the request path."""

    def search(
        self, query: str, k: int, allow: Callable[[Skill], bool] | None = None, context: str = ""
    ) -> list[tuple[Skill, float]]: ...

    def ranked(self, query: str, k: int, allow: Callable[[Skill], bool] | None = None, context: str = "") -> Ranked:
        """The gate's verdict, what it serves and the ranked candidates (:class:`Ranked`)."""
        ...


class KeywordIndex:
    """BM25 with per-term postings held as numpy arrays: a search is a few vectorised adds."""

    def __init__(self, skills: Iterable[Skill], min_score: float = 0.0, min_evidence: float = 0.0):
        self.skills: list[Skill] = list(skills)
        self.min_score = min_score
        self.min_evidence = min_evidence
        n = len(self.skills)
        docs: list[dict[str, float]] = []  # weighted term frequencies per skill
        for s in self.skills:
            tf: dict[str, float] = defaultdict(float)
            for field, w in FIELD_WEIGHTS.items():
                text = s.name.replace("-", " ") if field == "name" else getattr(s, field)
                for tok in tokenize(text):
                    tf[tok] += w
            docs.append(tf)
        lengths = [sum(d.values()) for d in docs]
        avgdl = (sum(lengths) / n) if n else 1.0
        df: Counter[str] = Counter()
        for d in docs:
            df.update(d.keys())
        self.n = n
        self.idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        self.unknown_idf = math.log(1 + (n + 0.5) / 0.5) if n else 1.0
        postings: dict[str, tuple[list[int], list[float]]] = defaultdict(lambda: ([], []))
        for i, d in enumerate(docs):
            norm = K1 * (1 - B + B * lengths[i] / avgdl)
            for t, f in d.items():
                ids, ws = postings[t]
                ids.append(i)
                ws.append(self.idf[t] * f * (K1 + 1) / (f + norm))
        # Per term: skill ids, weights, and the weights at context weight (so a search only concatenates).
        self.postings = {
            t: (
                np.asarray(ids, dtype=np.intp),
                np.asarray(ws, dtype=np.float64),
                np.asarray(ws, dtype=np.float64) * CONTEXT_WEIGHT,
            )
            for t, (ids, ws) in postings.items()
        }

    def _raw(self, query: str, context: str) -> tuple[np.ndarray, float, list[np.ndarray], list[float], int] | None:
        """Raw BM25 scores of every skill, the request's normaliser, and the request terms' postings with
        their information (IDF in units of a term no skill has), for the evidence gate; and the request's term count."""
        if not self.n:
            return None
        terms = set(tokenize(query))
        if not terms:
            return None
        # Rare terms carry the meaning; cap the work for very long queries. Terms no skill has (file names,
        # numbers, hashes) count in the query's information but must not take the slots of terms that can match.
        unknown = self.unknown_idf
        idf = self.idf
        ranked_terms = sorted(((idf.get(t, unknown), t) for t in terms), reverse=True)
        info = sum(w for w, _ in ranked_terms[:MAX_QUERY_TERMS])
        weighted = [p for p in ranked_terms if p[1] in idf][:MAX_QUERY_TERMS]
        best = min(info, INFO_CAP * unknown) * (K1 + 1)
        extra = sorted((self.idf[t], t) for t in context_terms(context) - terms if t in self.idf)[-MAX_QUERY_TERMS:]
        ids: list[np.ndarray] = []
        ws: list[np.ndarray] = []
        own_ids: list[np.ndarray] = []
        own_info: list[float] = []
        postings = self.postings
        for group, col in ((weighted, 1), (extra, 2)):
            for w, t in group:
                hit = postings.get(t)
                if hit is not None:
                    ids.append(hit[0])
                    ws.append(hit[col])
                    if col == 1:
                        own_ids.append(hit[0])
                        own_info.append(w / unknown)
        if not ids:
            return None
        # One scatter-add over all the query's postings. Few numpy calls: inside a busy host each one runs with
        # cold caches (~20-40 us), whatever its size.
        if len(ids) == 1:
            scores = np.bincount(ids[0], ws[0], minlength=self.n)
        else:
            scores = np.bincount(np.concatenate(ids), np.concatenate(ws), minlength=self.n)
        return scores, best, own_ids, own_info, len(terms)

    def raw_scores(self, query: str, context: str = "") -> tuple[np.ndarray, float, int] | None:
        """Every skill's raw score, the normaliser (score / normaliser = the share, capped at 1; the hybrid index
        fuses it) and the request's number of distinct terms; None when no term of the request or its context is
        in any skill."""
        raw = self._raw(query, context)
        return None if raw is None else (raw[0], raw[1], raw[4])

    def matched_set(self, query: str, row: int) -> frozenset[str]:
        """The terms of ``query`` skill ``row`` has."""
        postings = self.postings
        out = []
        for t in context_terms(query):
            hit = postings.get(t)
            if hit is not None:
                ids = hit[0]
                pos = ids.searchsorted(row)
                if pos < len(ids) and ids[pos] == row:
                    out.append(t)
        return frozenset(out)

    def matched_terms(self, query: str, row: int) -> int:
        """How many distinct terms of ``query`` skill ``row`` has (the hybrid gate's "second term" check)."""
        hits = 0
        postings = self.postings
        for t in context_terms(query):  # the gate asks for several rows of one request: its terms are remembered
            hit = postings.get(t)
            if hit is not None:
                ids = hit[0]
                pos = ids.searchsorted(row)  # postings ids are sorted: built in library order (the method: no dispatch)
                hits += bool(pos < len(ids) and ids[pos] == row)
        return hits

    def search(
        self, query: str, k: int, allow: Callable[[Skill], bool] | None = None, context: str = ""
    ) -> list[tuple[Skill, float]]:
        """Rank by BM25. Scores are normalised by the request's own terms only; context terms can add
        evidence (at half weight) but never dilute the request. A skill must also match ``min_evidence``
        rare terms' worth of the request itself: on a one-line chat message a share is one common word
        ("Good night!" shared "night" with a debugging skill and scored 0.31)."""
        if k <= 0:
            return []
        raw = self._raw(query, context)
        if raw is None:
            return []
        scores, best, own_ids, own_info, n_terms = raw
        floor = max(self.min_score * best, 1e-12)
        cand = np.flatnonzero(scores >= floor)
        want = k * 4 if allow else k
        if len(cand) > want:
            cand = cand[np.argpartition(scores[cand], -want)[-want:]]
        # Best first; equal scores in library order.
        ranked = sorted(zip(scores[cand].tolist(), cand.tolist()), key=lambda p: (-p[0], p[1]))
        out = []
        skills = self.skills
        for raw_score, i in ranked:
            sc = min(raw_score / best, 1.0)
            if sc <= 0 or sc < self.min_score:
                break
            s = skills[i]
            if allow is None or allow(s):
                out.append((s, sc, i))
                if len(out) == k:
                    break
        if out and self.min_evidence > 0 and not self._evidenced([i for _, _, i in out], own_ids, own_info, n_terms):
            return []
        return [(s, sc) for s, sc, _ in out]

    def ranked(self, query: str, k: int, allow: Callable[[Skill], bool] | None = None, context: str = "") -> Ranked:
        out = self.search(query, k, allow, context)
        return Ranked(bool(out), out, out)

    def _evidenced(self, rows: list[int], own_ids: list[np.ndarray], own_info: list[float], n_terms: int) -> bool:
        """The request gate: one of the matches shares ``min_evidence`` rare terms' worth of the request itself,
        or has every term of it (in a small library every term is common and no match carries much information).
        The other matches then only need ``min_score``, as the hybrid gate lets a request through, then ranks."""
        cand = np.asarray(rows, dtype=np.intp)
        matched = np.zeros(len(cand))
        count = np.zeros(len(cand), dtype=np.intp)
        for t_ids, w in zip(own_ids, own_info):
            pos = np.searchsorted(t_ids, cand)  # postings ids are sorted: built in library order
            has = t_ids[np.minimum(pos, len(t_ids) - 1)] == cand
            matched += w * has
            count += has
        return bool(((matched >= self.min_evidence) | (count >= n_terms)).any())
