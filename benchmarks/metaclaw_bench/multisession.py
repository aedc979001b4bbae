"""``bench memory --preset multisession``: long multi-session conversations (LoCoMo's shape), what the memory block
injected into a later question holds, against BM25 and recency over the user's raw past turns in the same budget.

The set: :mod:`.convgen` (seeded, generated at run time), or the public LoCoMo file (``--locomo PATH``, the same
JSON layout: samples with ``conversation`` holding ``speaker_a``, ``speaker_b``, ``session_N_date_time`` and
``session_N`` lists of ``{speaker, dia_id, text}``, and ``qa`` lists of ``{question, answer, evidence, category}``;
category 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial, whose items carry
``adversarial_answer`` and no ``answer``).

Feeding, through the real hooks of a real plugin (a fresh home, default settings, keyword retrieval for skills, no
model): each sample is one (tenant, user); each of its sessions a plugin session in date order; every dialogue turn a
main user turn of that user (``"Caroline: I went ..."``: both speakers' facts are the user's own past turns) with a
short neutral acknowledgement as the reply; the session ends; the learner is flushed. Then each question is a request
of the same user in a new session dated after the last one, and the ``<metaclaw-memory>`` section injected into it is
what is scored. ``TurnContext.started_at`` carries each turn's session date: the plugin dates every passage and
memory by it, and resolves relative dates ("yesterday") against it.

Scoring (the same scorer for the plugin and both baselines), per category and overall:

- **answer in block**: the answer's content words (casefolded, punctuation and articles gone, a stop list, a light
  suffix stemmer; dates in any of ISO ``2023-05-07``, ``7 May 2023``, ``May 7, 2023`` read as one day token) are all
  in the block. An answer that carries a date must have all its words on one line of the block, where a line's
  relative dates are resolved against the first date on the line (its "said" stamp): "yesterday" on a line stamped
  2023-05-08 is 2023-05-07. Open-domain answers are cut at the first ``;`` as LoCoMo's own evaluation does.
- **evidence recall**: the share of a question's evidence turns covered by the block; a turn is covered when at least
  60% of its content words are in the block. Also the share of all evidence turns covered (micro).
- **unanswerable given a block**: the share of adversarial questions whose memory block is not empty; for the
  generated set also by form (``swap``: a speaker's question asked of the other, LoCoMo's usual form; ``never``:
  something never said; ``wish``: something only wished for).
- **block tokens**: the plugin's own approximation (``metaclaw_plugin.text.approx_tokens``).

Baselines at the plugin's budget (``memory.tokens``, the same header and per-line cost): **BM25** (Okapi, k1 1.2,
b 0.75, over the user's raw past turns, each rendered as ``- (said 2023-05-08) Caroline: ...``), packed best-first,
only turns sharing a word with the question; **recency**: the newest turns that fit.

Latency: the plugin's ``memory_section`` (memory's whole part of ``on_request``) p50/p90/p99 with 10k memories for one
user, built from generated turns and asked the generated questions; with 50k raw-turn passages too once the plugin
has a passages store (see :func:`install_passages`, the hook).
"""

from __future__ import annotations

import gc
import json
import math
import re
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from metaclaw_plugin.config import Settings
from metaclaw_plugin.memory.model import Memory
from metaclaw_plugin.memory.view import CLOSE, HEADER, OPEN
from metaclaw_plugin.plugin import MetaClawPlugin
from metaclaw_plugin.store.passages import Passage
from metaclaw_plugin.text import approx_tokens
from metaclaw_plugin.types import TurnContext

from . import convgen

CATEGORY = convgen.CATEGORY
ANSWERABLE = (4, 1, 2, 3)  # LoCoMo's own reporting order: single-hop, multi-hop, temporal, open-domain
ADVERSARIAL = convgen.ADVERSARIAL
COVER = 0.6  # share of an evidence turn's content words that must be in the block
TENANT = "multisession"
SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
ACKS = ["Got it.", "Thanks for sharing.", "Understood.", "Noted, thanks.", "Okay.", "Thanks, that's helpful."]
TARGETS = {
    "answer_in_block": 0.55,
    "evidence_recall": 0.60,
    "unanswerable_block_rate": 0.30,
    "p50_ms": 0.5,
    "p99_ms": 5.0,
}
LOCOMO_NOTE = (
    "LoCoMo's layout and categories as in snap-research/locomo (data/locomo10.json; task_eval/evaluation.py scores "
    "category 1 as multi-answer, cuts category 3 answers at ';', and treats 5 as adversarial; evaluation_stats.py "
    "reports them in the order 4, 1, 2, 3, 5): 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial"
)


# The set ------------------------------------------------------------------------------------------------------------
@dataclass
class Turn:
    dia_id: str
    session: int
    speaker: str
    text: str  # as the user said it, without the speaker
    when: datetime

    @property
    def fed(self) -> str:
        """What the plugin receives as the user's message."""
        return f"{self.speaker}: {self.text}"

    @property
    def line(self) -> str:
        """How a baseline puts it in the block (the plugin's own lines carry a "said" date too)."""
        return f"- (said {self.when.date().isoformat()}) {self.fed}"


@dataclass
class Question:
    question: str
    category: int
    answer: str | None
    evidence: list[str]
    adversarial_answer: str | None = None
    form: str | None = None  # the generator's label of an adversarial question ("swap", "wish", "never")


@dataclass
class Sample:
    sample_id: str
    speakers: tuple[str, str]
    sessions: list[tuple[int, datetime, list[Turn]]]
    questions: list[Question]
    undated_sessions: int = 0

    @property
    def turns(self) -> list[Turn]:
        return [t for _, _, ts in self.sessions for t in ts]

    @property
    def asked_at(self) -> datetime:
        return self.sessions[-1][1] + timedelta(days=1) if self.sessions else datetime(2024, 1, 1)


_LOCOMO_WHEN = re.compile(r"(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})", re.I)


def session_date(text: Any) -> datetime | None:
    """``1:56 pm on 8 May, 2023`` (LoCoMo's form), else an ISO date or date-time; None when neither."""
    if not isinstance(text, str):
        return None
    m = _LOCOMO_WHEN.search(text)
    if m:
        month = _month(m.group(5))
        if month:
            h = int(m.group(1)) % 12 + (12 if m.group(3).lower() == "pm" else 0)
            try:
                return datetime(int(m.group(6)), month, int(m.group(4)), h, int(m.group(2)))
            except ValueError:
                return None
    try:
        return datetime.fromisoformat(text.strip())
    except ValueError:
        return None


def _evidence_ids(raw: Any) -> list[str]:
    """Evidence ids as ``D<session>:<turn>`` (the public file has a few like ``D8:6; D9:17`` or ``D30:05``)."""
    items = raw if isinstance(raw, list) else [raw] if raw else []
    out: list[str] = []
    for item in items:
        for m in re.finditer(r"D(\d+)\s*:\s*(\d+)", str(item)):
            out.append(f"D{int(m.group(1))}:{int(m.group(2))}")
    return out


def _norm_id(dia_id: Any) -> str:
    ids = _evidence_ids(dia_id)
    return ids[0] if ids else str(dia_id)


def load_samples(data: Any) -> list[Sample]:
    """Samples from LoCoMo's layout (a list of samples, or one sample, or ``{"data": [...]}``)."""
    if isinstance(data, dict):
        data = data.get("data", [data])
    out = []
    for i, raw in enumerate(data):
        conv = raw["conversation"]
        numbers = sorted(
            int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k) and isinstance(conv[k], list)
        )
        sessions = []
        undated = 0
        last = datetime(2000, 1, 1)
        for n in numbers:
            when = session_date(conv.get(f"session_{n}_date_time"))
            if when is None:
                undated += 1
                when = last + timedelta(days=1)
            last = max(last, when)
            turns = []
            for k, t in enumerate(conv[f"session_{n}"]):
                if not isinstance(t, dict) or not isinstance(t.get("text"), str):
                    continue
                text = t["text"]
                if t.get("blip_caption"):  # LoCoMo's images: the caption is what a text-only reader gets
                    text = f"{text} [shares {t['blip_caption']}]"
                turns.append(
                    Turn(_norm_id(t.get("dia_id", f"D{n}:{k + 1}")), n, str(t.get("speaker", "?")), text, when)
                )
            sessions.append((n, when, turns))
        sessions.sort(key=lambda s: s[1])
        qs = []
        for q in raw.get("qa", []):
            cat = int(q.get("category", 0) or 0)
            ans = q.get("answer")
            qs.append(
                Question(
                    str(q["question"]),
                    cat,
                    None if ans is None or cat == ADVERSARIAL else str(ans),
                    _evidence_ids(q.get("evidence")),
                    None if q.get("adversarial_answer") is None else str(q["adversarial_answer"]),
                    str(q["form"]) if isinstance(q.get("form"), str) else None,
                )
            )
        speakers = (str(conv.get("speaker_a", "A")), str(conv.get("speaker_b", "B")))
        out.append(Sample(str(raw.get("sample_id", f"sample-{i + 1}")), speakers, sessions, qs, undated))
    return out


def load_locomo(path: Path) -> list[Sample]:
    return load_samples(json.loads(Path(path).read_text("utf-8")))


# Text: words, dates, coverage -----------------------------------------------------------------------------------------
_STOP_TEXT = """
a an the and or but of to in on at by for with from into onto as is are was were be been being am do does did done
have has had having it its this that these those there here then than so such too very just also only not no nor i
me my mine myself we us our ours you your yours he she him her his they them their theirs what which who whom whose
when where why how all any each some can could will would shall should may might must about up out over if because
while until after before again still already ever s t d ll m re ve don didn doesn isn wasn oh yeah haha lol ok okay
really get got going go gone went
"""
STOP = frozenset(_STOP_TEXT.split())
_MONTHS = {m[:3].lower(): i + 1 for i, m in enumerate(convgen.MONTHS)}
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_ORD = r"(?:st|nd|rd|th)?"
_ISO = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_DMY = re.compile(rf"\b(\d{{1,2}}){_ORD}(?:\s+of)?\s+{_MONTH},?\s+(\d{{4}})\b", re.I)
_MDY = re.compile(rf"\b{_MONTH}\s+(\d{{1,2}}){_ORD},?\s+(\d{{4}})\b", re.I)
_MY = re.compile(rf"\b{_MONTH},?\s+(\d{{4}})\b", re.I)
_DM = re.compile(rf"\b(\d{{1,2}}){_ORD}(?:\s+of)?\s+{_MONTH}\b", re.I)
_MD = re.compile(rf"\b{_MONTH}\s+(\d{{1,2}}){_ORD}\b", re.I)
_NUM = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_N = r"(\d+|one|two|three|four|five|six|seven|eight|nine|ten)"
_WD = {d.lower(): i for i, d in enumerate(convgen.WEEKDAYS)}
_WDS = "(" + "|".join(_WD) + ")"
_WORD = re.compile(r"[^\W_]+", re.U)


def _month(name: str) -> int | None:
    return _MONTHS.get(name[:3].lower())


def _day_token(d: date) -> str:
    return f"d{d:%Y%m%d}"


def _month_token(year: int, month: int) -> str:
    return f"m{year:04d}{month:02d}"


def _shift_month(d: date, n: int) -> tuple[int, int]:
    m = d.month - 1 + n
    return d.year + m // 12, m % 12 + 1


def _safe_date(y: int, m: int, d: int) -> date | None:
    if not m:
        return None
    try:
        return date(y, m, d)
    except ValueError:
        return None


# A line's leading label: the baselines' "- (said 2023-05-08) ...", the plugin's "- [8 May 2023] (fact) ...".
_LABEL = re.compile(r"^\s*-?\s*(?:\[([^\]]*)\]|\(([^)]*)\))(?:\s*\([^)]*\))?")
_REL_WEEK = {("week", "before"): "wb", ("week", "after"): "wa", ("weekend", "before"): "eb", ("weekend", "after"): "ea"}
_DATE_TOKEN = re.compile(r"(?:d|m|wb|wa|eb|ea)\d{6,8}")


def is_date_token(t: str) -> bool:
    return bool(_DATE_TOKEN.fullmatch(t))


def date_tokens(text: str) -> tuple[list[str], date | None]:
    """The date tokens of one line, and its reference date.

    The reference is the date in the line's leading label (``- (said 2023-05-08) ...``; the label's own date is not
    a token: that the line was said that day does not say when the thing happened), else the first full date in
    the text. Full dates (ISO, day month year, month day year) become day tokens, "May 2023" a month token, "the
    week before 8 May 2023" a week token (also weekend, after), "the Sunday before 8 May 2023" that Sunday's day
    token. Against the reference, dates without a year take its year and relative dates resolve: today, yesterday,
    the day before yesterday, N days ago, in N days, tomorrow, last / this past / this coming / next <weekday>, last
    / next week and weekend, last / this / next month and year."""
    work = text
    found: list[tuple[int, str, date | None]] = []
    stamp: date | None = None
    label = _LABEL.match(text)
    if label:
        for rx, order in ((_ISO, "ymd"), (_DMY, "dMy"), (_MDY, "Mdy")):
            m = rx.search(label.group(1) or label.group(2))
            if m:
                stamp = _from_match(m, order)
                if stamp is not None:
                    work = " " * label.end() + text[label.end() :]
                    break

    def take(rx: re.Pattern[str], build: Callable[[re.Match[str]], tuple[str, date | None] | None]) -> None:
        nonlocal work
        for m in list(rx.finditer(work)):
            got = build(m)
            if got is not None:
                found.append((m.start(), got[0], got[1]))
                work = work[: m.start()] + " " * (m.end() - m.start()) + work[m.end() :]

    def anchored(m: re.Match[str]) -> tuple[str, date | None] | None:
        """ "the week before 8 May 2023", "the Sunday after May 8, 2023": relative to a named date."""
        inner = m.group(3)
        d = None
        for rx, order in ((_ISO, "ymd"), (_DMY, "dMy"), (_MDY, "Mdy")):
            mm = rx.fullmatch(inner.strip())
            if mm:
                d = _from_match(mm, order)
                break
        if d is None:
            return None
        what, way = m.group(1).lower(), m.group(2).lower()
        if what in _WD:
            n = (d.weekday() - _WD[what]) % 7 or 7 if way == "before" else (_WD[what] - d.weekday()) % 7 or 7
            dd = d - timedelta(days=n) if way == "before" else d + timedelta(days=n)
            return _day_token(dd), None
        return f"{_REL_WEEK[(what, way)]}{d:%Y%m%d}", None

    full_date = rf"(\d{{4}}-\d{{1,2}}-\d{{1,2}}|\d{{1,2}}{_ORD}(?:\s+of)?\s+{_MONTH},?\s+\d{{4}}|{_MONTH}\s+\d{{1,2}}{_ORD},?\s+\d{{4}})"
    take(re.compile(rf"\bthe\s+(week|weekend|{'|'.join(_WD)})\s+(before|after)\s+{full_date}", re.I), anchored)
    take(_ISO, lambda m: _tok(_from_match(m, "ymd")))
    take(_DMY, lambda m: _tok(_from_match(m, "dMy")))
    take(_MDY, lambda m: _tok(_from_match(m, "Mdy")))
    if stamp is None:
        firsts = [f for f in found if f[2] is not None]
        stamp = min(firsts, key=lambda f: f[0])[2] if firsts else None

    def month_year(m: re.Match[str]) -> tuple[str, date | None] | None:
        mo = _month(m.group(1))
        return (_month_token(int(m.group(2)), mo), None) if mo else None

    take(_MY, month_year)
    if stamp is None:
        return [t for _, t, _ in found], None
    s = stamp
    take(_DM, lambda m: _tok(_safe_date(s.year, _month(m.group(2)) or 0, int(m.group(1)))))
    take(_MD, lambda m: _tok(_safe_date(s.year, _month(m.group(1)) or 0, int(m.group(2)))))
    low = work.lower()
    extra: list[str] = []

    def rel(rx: str, fn: Callable[[re.Match[str]], str | None]) -> None:
        nonlocal low
        for m in list(re.finditer(rx, low)):
            tok = fn(m)
            if tok:
                extra.append(tok)
            low = low[: m.start()] + " " * (m.end() - m.start()) + low[m.end() :]

    def days(n: int) -> str:
        return _day_token(s + timedelta(days=n))

    rel(r"\bthe day before yesterday\b", lambda m: days(-2))
    rel(r"\bthe day after tomorrow\b", lambda m: days(2))
    rel(r"\byesterday\b", lambda m: days(-1))
    rel(r"\btomorrow\b", lambda m: days(1))
    rel(r"\b(?:earlier )?today\b|\bthis (?:morning|afternoon|evening)\b|\btonight\b", lambda m: days(0))
    rel(rf"\b{_N} days? ago\b", lambda m: days(-_count(m.group(1))))
    rel(rf"\bin {_N} days?\b", lambda m: days(_count(m.group(1))))
    rel(rf"\b(?:last|this past) {_WDS}\b", lambda m: days(-((s.weekday() - _WD[m.group(1)]) % 7 or 7)))
    rel(rf"\b(?:this coming|next) {_WDS}\b", lambda m: days((_WD[m.group(1)] - s.weekday()) % 7 or 7))
    rel(r"\b(?:last|this past) weekend\b", lambda m: f"eb{s:%Y%m%d}")
    rel(r"\b(?:next|this coming) weekend\b", lambda m: f"ea{s:%Y%m%d}")
    rel(r"\blast week\b", lambda m: f"wb{s:%Y%m%d}")
    rel(r"\bnext week\b", lambda m: f"wa{s:%Y%m%d}")
    rel(r"\b(?:last|past) month\b", lambda m: _month_token(*_shift_month(s, -1)))
    rel(r"\bthis month\b", lambda m: _month_token(s.year, s.month))
    rel(r"\bnext month\b", lambda m: _month_token(*_shift_month(s, 1)))
    rel(r"\blast year\b", lambda m: str(s.year - 1))
    rel(r"\bthis year\b", lambda m: str(s.year))
    rel(r"\bnext year\b", lambda m: str(s.year + 1))
    return [t for _, t, _ in found] + extra, stamp


def _from_match(m: re.Match[str], order: str) -> date | None:
    """A date from a match of _ISO ("ymd"), _DMY ("dMy": day, month name, year) or _MDY ("Mdy")."""
    g = m.groups()
    if order == "ymd":
        return _safe_date(int(g[0]), int(g[1]), int(g[2]))
    if order == "dMy":
        return _safe_date(int(g[2]), _month(g[1]) or 0, int(g[0]))
    return _safe_date(int(g[2]), _month(g[0]) or 0, int(g[1]))


def _tok(d: date | None) -> tuple[str, date | None] | None:
    return (_day_token(d), d) if d is not None else None


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _NUM[word]


def stem(w: str) -> str:
    """A light suffix stemmer, the same on both sides: plural s/es/ies, -ing, -ed, a final e."""
    if w.isdigit() or is_date_token(w):
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("es") and len(w) > 4 and w[-3] in "sxz":
        w = w[:-2]
    elif w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        w = w[:-1]
    for suf in ("ing", "ed"):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            w = w[: -len(suf)]
            break
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    return w


def words(text: str) -> list[str]:
    """Casefolded words with apostrophes and punctuation as separators."""
    return _WORD.findall(text.casefold())


def content(text: str) -> list[str]:
    """Stemmed content words (stop words gone)."""
    return [stem(w) for w in words(text) if w not in STOP]


def line_terms(line: str) -> set[str]:
    """What one line of a block offers: its stemmed words (stop words too) and its resolved date tokens."""
    toks, _ = date_tokens(line)
    return {stem(w) for w in words(line)} | set(toks)


def answer_terms(answer: str, category: int) -> list[str]:
    """The content words an answer needs; its dates as day / month tokens."""
    if category == convgen.OPEN_DOMAIN:
        answer = answer.split(";")[0]
    toks, _ = date_tokens(answer)
    stripped = re.sub(rf"\bthe\s+(?:week|weekend|{'|'.join(_WD)})\s+(?:before|after)\b", " ", answer, flags=re.I)
    for rx in (_ISO, _DMY, _MDY, _MY):
        stripped = rx.sub(" ", stripped)
    terms = list(dict.fromkeys(toks + content(stripped)))
    return terms or [stem(w) for w in words(answer)]


@dataclass
class Block:
    """A memory block as scored: its lines' terms, and all of them together."""

    text: str
    lines: list[set[str]] = field(default_factory=list)
    terms: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, text: str) -> Block:
        lines = [line_terms(ln) for ln in text.splitlines() if ln.strip()]
        return cls(text, lines, set().union(*lines) if lines else set())

    @property
    def empty(self) -> bool:
        return not self.text.strip()


def answer_in_block(answer: str, block: Block, category: int = convgen.SINGLE_HOP) -> bool:
    """All the answer's content words are in the block; an answer with a date needs them all on one line."""
    if block.empty:
        return False
    need = set(answer_terms(answer, category))
    if not need:
        return False
    if any(is_date_token(t) for t in need):
        return any(need <= ln for ln in block.lines)
    return need <= block.terms


def covered(turn_text: str, block: Block, share: float = COVER) -> bool:
    """At least ``share`` of the turn's content words are in the block (all its words when it has no content word)."""
    if block.empty:
        return False
    need = set(content(turn_text)) or {stem(w) for w in words(turn_text)}
    if not need:
        return False
    return len(need & block.terms) >= share * len(need)


# Baselines ---------------------------------------------------------------------------------------------------------------
class BM25:
    """Okapi BM25 over a user's turns (k1 1.2, b 0.75, idf log(1 + (N - n + .5) / (n + .5)))."""

    def __init__(self, docs: Sequence[str], k1: float = 1.2, b: float = 0.75):
        self.k1, self.b = k1, b
        self.tf = [Counter(content(d)) for d in docs]
        self.len = [sum(c.values()) for c in self.tf]
        self.avg = (sum(self.len) / len(self.len)) if self.len else 0.0
        df: Counter[str] = Counter()
        for c in self.tf:
            df.update(c.keys())
        n = len(docs)
        self.idf = {t: math.log(1.0 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.post: dict[str, list[int]] = {}
        for i, c in enumerate(self.tf):
            for t in c:
                self.post.setdefault(t, []).append(i)

    def scores(self, query: str) -> dict[int, float]:
        out: dict[int, float] = {}
        for t in set(content(query)):
            idf = self.idf.get(t)
            if idf is None:
                continue
            for i in self.post[t]:
                f = self.tf[i][t]
                norm = self.k1 * (1 - self.b + self.b * self.len[i] / (self.avg or 1.0))
                out[i] = out.get(i, 0.0) + idf * f * (self.k1 + 1) / (f + norm)
        return out

    def ranked(self, query: str) -> list[int]:
        s = self.scores(query)
        return sorted(s, key=lambda i: (-s[i], i))


def pack(lines: Iterable[str], budget: int) -> str:
    """The plugin's packing: its header, then lines in order while they fit ``budget`` tokens (a line that does not
    fit is skipped, as the view does); "" when none fits."""
    used = approx_tokens(f"{OPEN}\n{HEADER}\n{CLOSE}")
    chosen = []
    for ln in lines:
        cost = approx_tokens(ln) + 1
        if used + cost > budget:
            continue
        chosen.append(ln)
        used += cost
    if not chosen:
        return ""
    return f"{OPEN}\n{HEADER}\n" + "\n".join(chosen) + f"\n{CLOSE}"


def bm25_block(index: BM25, turns: Sequence[Turn], question: str, budget: int) -> str:
    return pack((turns[i].line for i in index.ranked(question)), budget)


def recency_block(turns: Sequence[Turn], budget: int) -> str:
    return pack((t.line for t in reversed(turns)), budget)


# The plugin ----------------------------------------------------------------------------------------------------------------
def section_of(messages: Sequence[dict[str, Any]]) -> str:
    """The ``<metaclaw-memory>`` section of what the plugin sent on ("" when none)."""
    for m in messages:
        c = m.get("content")
        if isinstance(c, str) and OPEN in c:
            i = c.find(OPEN)
            j = c.find(CLOSE, i)
            return c[i : j + len(CLOSE)] if j >= 0 else c[i:]
    return ""


def _user(sample: Sample) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", sample.sample_id)[:60] or "user"


def _ts(dt: datetime) -> float:
    return dt.replace(tzinfo=UTC).timestamp()


def settings_for(home: Path) -> Settings:
    """Default settings, keyword retrieval for skills; evolution and the reward judge off (no model here)."""
    return Settings(home=home, retrieval={"mode": "keyword"}, evolution={"enabled": False}, reward={"enabled": False})


def plugin_blocks(samples: Sequence[Sample], home: Path, log: Callable[[str], None] = lambda m: None) -> dict[str, Any]:
    """Feed every sample through a fresh plugin and ask its questions; the injected memory sections, per sample."""
    p = MetaClawPlugin(settings_for(home)).start()
    out: dict[str, Any] = {"blocks": {}, "memories": {}, "feed_s": 0.0, "ask_s": 0.0, "flushed": True}
    try:
        learner = p.memory_learner
        out["extractor"] = f"{learner.extractor}: {learner.why}" if learner is not None else "memory off"
        t0 = time.perf_counter()
        for n, sample in enumerate(samples):
            user = _user(sample)
            k = 0
            for number, when, turns in sample.sessions:
                sid = f"{user}-s{number}"
                for j, turn in enumerate(turns):
                    ctx = TurnContext(
                        session_id=sid, tenant=TENANT, user=user, host="bench", started_at=_ts(when) + 30 * j
                    )
                    p.on_request(ctx, [SYSTEM, {"role": "user", "content": turn.fed}])
                    p.on_response(ctx, {"role": "assistant", "content": ACKS[k % len(ACKS)]})
                    k += 1
                p.on_session_end(TurnContext(session_id=sid, tenant=TENANT, user=user, host="bench"))
            out["flushed"] = p.flush(300) and out["flushed"]  # extraction done and in the view before questions
            log(f"multisession: fed {sample.sample_id} ({n + 1}/{len(samples)}, {k} turns)")
        out["flushed"] = p.flush(300) and out["flushed"]
        p.refresh_memory()
        out["feed_s"] = round(time.perf_counter() - t0, 2)
        t0 = time.perf_counter()
        for sample in samples:
            user = _user(sample)
            asked = _ts(sample.asked_at)
            blocks = []
            for i, q in enumerate(sample.questions):
                ctx = TurnContext(session_id=f"{user}-q{i}", tenant=TENANT, user=user, host="bench", started_at=asked)
                sent = p.on_request(ctx, [SYSTEM, {"role": "user", "content": q.question}])
                blocks.append(section_of(sent))
                p.on_response(ctx, {"role": "assistant", "content": "I'll check."})
            out["blocks"][sample.sample_id] = blocks
        out["ask_s"] = round(time.perf_counter() - t0, 2)
        store = p.memory_store
        if store is not None:
            kinds = Counter(m.kind for m in store.find(statuses=("active",)))
            out["memories"] = {"active": sum(kinds.values()), "by_kind": dict(sorted(kinds.items()))}
    finally:
        p.stop()
    return out


# Scoring -------------------------------------------------------------------------------------------------------------------
@dataclass
class Tally:
    n: int = 0
    answer: int = 0
    recall: list[float] = field(default_factory=list)
    ev_total: int = 0
    ev_covered: int = 0
    with_block: int = 0
    beyond_preferences: int = 0  # blocks with a line other than a "(preference)" one (those go on every turn)
    beyond_names: int = 0  # blocks with a line sharing a content word with the question, the speakers' names aside
    tokens: list[int] = field(default_factory=list)

    def summary(self, answerable: bool) -> dict[str, Any]:
        def r(x: float) -> float:
            return round(x, 3)

        out: dict[str, Any] = {"n": self.n}
        if answerable:
            out["answer_in_block"] = r(self.answer / self.n) if self.n else None
            out["evidence_recall"] = r(statistics.mean(self.recall)) if self.recall else None
            out["evidence_turns_covered"] = r(self.ev_covered / self.ev_total) if self.ev_total else None
        out["block_rate"] = r(self.with_block / self.n) if self.n else None
        out["block_rate_beyond_preferences"] = r(self.beyond_preferences / self.n) if self.n else None
        out["block_rate_beyond_names"] = r(self.beyond_names / self.n) if self.n else None
        out["tokens_mean"] = round(statistics.mean(self.tokens), 1) if self.tokens else 0.0
        given = [t for t in self.tokens if t]
        out["tokens_mean_when_given"] = round(statistics.mean(given), 1) if given else 0.0
        return out


def score(samples: Sequence[Sample], blocks: dict[str, list[str]], keep_misses: int = 0) -> dict[str, Any]:
    """One arm's figures: per category, all answerable questions together, and the unanswerable ones."""
    per: dict[int, Tally] = {}
    total = Tally()
    misses: list[dict[str, Any]] = []
    missing_ids = 0
    for sample in samples:
        by_id = {t.dia_id: t for t in sample.turns}
        names = {stem(w) for sp in sample.speakers for w in words(sp)}
        for q, text in zip(sample.questions, blocks[sample.sample_id]):
            b = Block.of(text)
            tally = per.setdefault(q.category, Tally())
            tallies = [tally] if q.category == ADVERSARIAL or q.answer is None else [tally, total]
            for t in tallies:
                t.n += 1
                t.with_block += 0 if b.empty else 1
                t.beyond_preferences += any(_gated(ln) for ln in text.splitlines())
                t.beyond_names += _topical(q.question, text, names)
                t.tokens.append(approx_tokens(text) if text else 0)
            if len(tallies) == 1:
                continue
            assert q.answer is not None
            hit = answer_in_block(q.answer, b, q.category)
            ev = [by_id[e] for e in q.evidence if e in by_id]
            missing_ids += len(q.evidence) - len(ev)
            cov = [covered(e.text, b) for e in ev]
            for t in tallies:
                t.answer += hit
                if cov:
                    t.recall.append(sum(cov) / len(cov))
                    t.ev_total += len(cov)
                    t.ev_covered += sum(cov)
            if not hit and len(misses) < keep_misses:
                misses.append({"category": CATEGORY.get(q.category, str(q.category)), "q": q.question, "a": q.answer})
    out: dict[str, Any] = {
        "categories": {
            CATEGORY.get(c, str(c)): per[c].summary(c != ADVERSARIAL)
            for c in [*ANSWERABLE, ADVERSARIAL, *sorted(per)]
            if c in per
        },
        "answerable": total.summary(True),
    }
    adv = per.get(ADVERSARIAL)
    out["unanswerable_block_rate"] = adv.summary(False)["block_rate"] if adv else None
    out["unanswerable_block_rate_beyond_preferences"] = (
        adv.summary(False)["block_rate_beyond_preferences"] if adv else None
    )
    out["unanswerable_block_rate_beyond_names"] = adv.summary(False)["block_rate_beyond_names"] if adv else None
    forms: dict[str, list[int]] = {}  # the generator's adversarial forms: [questions, given a block]
    for sample in samples:
        for q, text in zip(sample.questions, blocks[sample.sample_id]):
            if q.category == ADVERSARIAL and q.form:
                f = forms.setdefault(q.form, [0, 0])
                f[0] += 1
                f[1] += not Block.of(text).empty
    out["unanswerable_block_rate_by_form"] = {k: {"n": n, "block_rate": round(g / n, 3)} for k, (n, g) in forms.items()}
    out["evidence_ids_not_found"] = missing_ids
    if keep_misses:
        out["answer_misses"] = misses
    return out


def _topical(question: str, block: str, names: set[str]) -> bool:
    """Whether a line of the block shares a content word with the question other than the speakers' names (the
    feed puts a speaker's name on every turn: a gate that counts it answers every question about that person)."""
    want = set(content(question)) - names
    return bool(want) and any(want & set(content(_body(ln))) for ln in block.splitlines() if _LABEL.match(ln))


def _gated(line: str) -> bool:
    """A memory line that is not a preference (the view puts standing preferences on every main turn)."""
    return _LABEL.match(line) is not None and "(preference" not in line[:40]


def _body(line: str) -> str:
    """A line's words without its label (its date is not a word of the question's)."""
    label = _LABEL.match(line)
    return line[label.end() :] if label else line


def baseline_blocks(samples: Sequence[Sample], budget: int) -> dict[str, dict[str, list[str]]]:
    bm, rec = {}, {}
    for sample in samples:
        turns = sample.turns
        index = BM25([t.fed for t in turns])
        bm[sample.sample_id] = [bm25_block(index, turns, q.question, budget) for q in sample.questions]
        block = recency_block(turns, budget)
        rec[sample.sample_id] = [block for _ in sample.questions]
    return {"bm25": bm, "recency": rec}


# Latency ------------------------------------------------------------------------------------------------------------------
def corpus(n_turns: int, seed: int | str = "latency") -> tuple[list[str], list[str]]:
    """At least ``n_turns`` generated turn texts (as fed) and the generated questions of the same conversations."""
    texts: list[str] = []
    questions: list[str] = []
    i = 0
    while len(texts) < n_turns:
        s = load_samples([convgen.conversation(seed, i)])[0]
        texts += [t.fed for t in s.turns]
        questions += [q.question for q in s.questions]
        i += 1
    return texts[:n_turns], questions


def latency(
    n_memories: int = 10_000, n_passages: int = 50_000, requests: int = 3000, home: Path | None = None
) -> dict[str, Any]:
    """``memory_section`` per request (µs, p50/p90/p99) with ``n_memories`` memories (and ``n_passages`` passages when
    the plugin keeps them) for one user, made of generated turns and asked generated questions. The garbage of what
    ran before is collected first (a pause of the benchmark's own making is not the memory section's cost)."""
    with tempfile.TemporaryDirectory() as tmp:
        p = MetaClawPlugin(settings_for(home or Path(tmp))).start()
        try:
            texts, questions = corpus(max(n_memories, n_passages))
            now = time.time()
            kinds = ["fact", "event", "fact", "project"]
            mems = [
                Memory(
                    id=f"m{i}",
                    tenant=TENANT,
                    user="lat",
                    kind="preference" if i < 2 else kinds[i % 4],
                    subject=f"s{i}",
                    text=text,
                    valid_from=now - i,
                    standing=i < 2,
                )
                for i, text in enumerate(texts[:n_memories])
            ]
            said = [
                Passage(f"p{i}", TENANT, "lat", f"s{i // 40}", text, now - 60.0 * (n_passages - i))
                for i, text in enumerate(texts[:n_passages])
            ]
            t0 = time.perf_counter()
            p.memory.put(TENANT, "lat", mems, said)
            build_s = time.perf_counter() - t0
            asks = [questions[i % len(questions)] for i in range(requests + 50)]
            xs: list[float] = []
            given = 0
            gc.collect()
            for i, a in enumerate(asks):
                # each request its own conversation: a question asked again is rendered again, not served from the
                # cache a tool loop's steps share
                ctx = TurnContext(session_id=f"lat-{i}", tenant=TENANT, user="lat", host="bench")
                msgs = [SYSTEM, {"role": "user", "content": a}]
                t = time.perf_counter_ns()
                sec = p.memory_section(ctx, msgs)
                dt = (time.perf_counter_ns() - t) / 1000.0
                if i >= 50:  # a warm-up first
                    xs.append(dt)
                    given += bool(sec)
            xs.sort()
            return {
                "memories_per_user": n_memories,
                "passages_per_user": n_passages,
                "requests": requests,
                "view_build_s": round(build_s, 3),
                "memory_section_p50_us": round(statistics.median(xs), 1),
                "memory_section_p90_us": round(xs[int(0.9 * (len(xs) - 1))], 1),
                "memory_section_p99_us": round(xs[int(0.99 * (len(xs) - 1))], 1),
                "requests_with_block_share": round(given / len(xs), 3),
            }
        finally:
            p.stop()


# The run -------------------------------------------------------------------------------------------------------------------
def run(
    *,
    conversations: int | None = None,
    seed: int | str = 0,
    locomo: Path | None = None,
    quick: bool = False,
    n_memories: int | None = None,
    n_passages: int | None = None,
    requests: int | None = None,
    log: Callable[[str], None] = lambda m: None,
) -> dict[str, Any]:
    size = convgen.QUICK if quick else convgen.DEFAULT
    if conversations is not None:
        size = convgen.Size(conversations, size.sessions, size.turns)
    if locomo is not None:
        samples = load_locomo(locomo)
        if conversations is not None:
            samples = samples[:conversations]
        source = f"locomo file {locomo}"
    else:
        log(f"multisession: generating {size.conversations} conversations (seed {seed})")
        samples = load_samples(convgen.generate(seed, size))
        source = f"generated: metaclaw_bench.convgen, seed {seed}, {size.conversations} conversations"
    budget = Settings().memory.tokens
    result: dict[str, Any] = {
        "preset": "multisession",
        "source": source,
        "layout": LOCOMO_NOTE,
        "budget_tokens": budget,
        "counts": _counts(samples),
    }
    with tempfile.TemporaryDirectory() as tmp:
        log("multisession: feeding the plugin")
        fed = plugin_blocks(samples, Path(tmp), log)
    arms = {"plugin": score(samples, fed["blocks"], keep_misses=12)}
    for name, blocks in baseline_blocks(samples, budget).items():
        arms[name] = score(samples, blocks)
    result["arms"] = arms
    result["plugin"] = {
        "extractor": fed.get("extractor"),
        "memories": fed.get("memories"),
        "feed_s": fed["feed_s"],
        "learner_flushed": fed["flushed"],
        "ask_s": fed["ask_s"],
    }
    n_mem = n_memories if n_memories is not None else (2000 if quick else 10_000)
    n_pas = n_passages if n_passages is not None else (5000 if quick else 50_000)
    log(f"multisession: memory_section latency at {n_mem} memories")
    result["latency"] = latency(n_mem, n_pas, requests or (300 if quick else 3000))
    result["targets"] = TARGETS
    result["scoring"] = {
        "answer_in_block": "all the answer's content words (stop list, light stemmer, dates as day/month tokens) in "
        "the block; a dated answer on one line, relative dates resolved against the line's first date",
        "evidence_recall": f"mean share of a question's evidence turns with >= {COVER:.0%} of their content words in "
        "the block",
        "unanswerable_block_rate": "adversarial questions given a non-empty memory block",
        "baselines": "BM25 (k1 1.2, b 0.75) best-first / newest first over the user's raw turns, packed into "
        "memory.tokens with the plugin's header and per-line cost",
    }
    return result


def _counts(samples: Sequence[Sample]) -> dict[str, Any]:
    cats = Counter(q.category for s in samples for q in s.questions)
    return {
        "conversations": len(samples),
        "sessions": sum(len(s.sessions) for s in samples),
        "turns": sum(len(s.turns) for s in samples),
        "questions": {CATEGORY.get(c, str(c)): cats[c] for c in sorted(cats)},
        "answerable": sum(v for c, v in cats.items() if c != ADVERSARIAL),
        "undated_sessions": sum(s.undated_sessions for s in samples),
    }


def table(result: dict[str, Any]) -> str:
    arms = result["arms"]
    names = ["plugin", "bm25", "recency"]
    label = {"plugin": "plugin", "bm25": "BM25", "recency": "recency"}
    head = "| category | n | " + " | ".join(f"answer: {label[a]}" for a in names)
    head += " | " + " | ".join(f"evidence: {label[a]}" for a in names) + " |"
    lines = [head, "|---|---|" + "---|" * (2 * len(names))]

    def row(title: str, key: str | None) -> None:
        cells = [(arms[a]["categories"].get(key) if key else arms[a]["answerable"]) or {} for a in names]
        n = cells[0].get("n", 0)
        vals = [str(c.get("answer_in_block")) for c in cells] + [str(c.get("evidence_recall")) for c in cells]
        lines.append(f"| {title} | {n} | " + " | ".join(vals) + " |")

    for c in ANSWERABLE:
        row(CATEGORY[c], CATEGORY[c])
    row("**all answerable**", None)
    lines.append("")
    lines.append("| | " + " | ".join(label[a] for a in names) + " |")
    lines.append("|---|" + "---|" * len(names))
    adv = [arms[a]["categories"].get("adversarial", {}) for a in names]
    lines.append(
        f"| unanswerable given a block (n={adv[0].get('n', 0)}) | "
        + " | ".join(str(x.get("block_rate")) for x in adv)
        + " |"
    )
    for form in sorted(arms[names[0]].get("unanswerable_block_rate_by_form", {})):
        cells = [arms[a].get("unanswerable_block_rate_by_form", {}).get(form, {}) for a in names]
        lines.append(
            f"| unanswerable given a block, form {form} (n={cells[0].get('n', 0)}) | "
            + " | ".join(str(x.get("block_rate")) for x in cells)
            + " |"
        )
    lines.append(
        "| unanswerable given a block beyond preferences | "
        + " | ".join(str(x.get("block_rate_beyond_preferences")) for x in adv)
        + " |"
    )
    lines.append(
        "| unanswerable given a block with a line sharing a word with the question, speakers' names aside | "
        + " | ".join(str(x.get("block_rate_beyond_names")) for x in adv)
        + " |"
    )
    lines.append(
        "| block tokens, mean (answerable) | "
        + " | ".join(str(arms[a]["answerable"]["tokens_mean"]) for a in names)
        + " |"
    )
    lines.append(
        "| answerable questions given a block | "
        + " | ".join(str(arms[a]["answerable"]["block_rate"]) for a in names)
        + " |"
    )
    lat = result["latency"]
    t = result["targets"]
    p50, p99 = lat["memory_section_p50_us"] / 1000, lat["memory_section_p99_us"] / 1000
    lines.append("")
    lines.append(
        f"memory_section at {lat['memories_per_user']} memories"
        + (f" + {lat['passages_per_user']} passages" if lat["passages_per_user"] else "")
        + f" for one user: p50 {p50:.3f} ms, p90 {lat['memory_section_p90_us'] / 1000:.3f} ms, p99 {p99:.3f} ms "
        f"({lat['requests']} requests; view built in {lat['view_build_s']} s)"
    )
    plug = arms["plugin"]
    checks = [
        ("answer in block", plug["answerable"]["answer_in_block"], t["answer_in_block"], ">="),
        ("evidence recall", plug["answerable"]["evidence_recall"], t["evidence_recall"], ">="),
        ("unanswerable given a block", plug["unanswerable_block_rate"], t["unanswerable_block_rate"], "<="),
        ("memory p50 ms", round(p50, 3), t["p50_ms"], "<="),
        ("memory p99 ms", round(p99, 3), t["p99_ms"], "<="),
    ]
    met = []
    for name, v, goal, op in checks:
        ok = v is not None and (v >= goal if op == ">=" else v <= goal)
        met.append(f"{name} {v} (target {op} {goal}: {'met' if ok else 'not met'})")
    lines.append("plugin against the targets: " + "; ".join(met))
    c = result["counts"]
    lines.append(
        f"set: {result['source']}; {c['conversations']} conversations, {c['sessions']} sessions, {c['turns']} turns, "
        f"{c['answerable']} answerable questions, {c['questions'].get('adversarial', 0)} adversarial; budget "
        f"{result['budget_tokens']} tokens; plugin extractor: {result['plugin']['extractor']}"
    )
    return "\n".join(lines)
