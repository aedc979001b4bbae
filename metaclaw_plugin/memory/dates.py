"""Dates of what a user said: each memory and passage is dated by the turn it came from, and a relative date in it
("yesterday", "last week", "next Friday", "hace tres días", "上周") is resolved against that turn's date, so that a
note read weeks later still says when things happened: "I went hiking yesterday (7 May 2023)".

Dates are days in UTC, written "7 May 2023" (a form people and answer keys use; ISO dates read worse in prose). A
vague span keeps its vagueness: "last week (the week before 9 June 2023)", "last month (May 2023)".
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "a couple of": 2,
    "couple of": 2,
    "a few": 3,
    "few": 3,
    "several": 3,
    "un": 1,
    "une": 1,
    "deux": 2,
    "trois": 3,
    "quatre": 4,
    "cinq": 5,
    "uno": 1,
    "una": 1,
    "dos": 2,
    "tres": 3,
    "cuatro": 4,
    "cinco": 5,
    "um": 1,
    "uma": 1,
    "dois": 2,
    "duas": 2,
    "quatro": 4,
}


def day_of(ts: float) -> date:
    return datetime.fromtimestamp(ts, UTC).date()


def say(d: date) -> str:
    """``7 May 2023``."""
    return f"{d.day} {MONTHS[d.month - 1]} {d.year}"


def say_ts(ts: float) -> str:
    return say(day_of(ts))


def _month(d: date, delta: int) -> str:
    m = d.month - 1 + delta
    return f"{MONTHS[m % 12]} {d.year + m // 12}"


def _weekday_before(d: date, wd: int) -> date:
    back = (d.weekday() - wd) % 7 or 7
    return d - timedelta(days=back)


def _weekday_after(d: date, wd: int) -> date:
    ahead = (wd - d.weekday()) % 7 or 7
    return d + timedelta(days=ahead)


_NUM = r"(\d{1,2}|a couple of|couple of|a few|few|several|an?|one|two|three|four|five|six|seven|eight|nine|ten|un|une|deux|trois|quatre|cinq|uno|una|dos|tres|cuatro|cinco|um|uma|dois|duas|quatro)"
# a weekday, written out or short ("last Fri", "last Tues"); the short forms that are words too only capitalised
# ("the last sun rays", "who last sat there")
_WD = (
    r"(monday|tuesday|wednesday|thursday|friday|saturday|sunday|tues?|weds|thur?s?|fri|(?-i:Mon|Wed|Sat|Sun))"
    r"(?:\.(?!\w))?"
)
_WD_SHORT = {"mo": 0, "tu": 1, "we": 2, "th": 3, "fr": 4, "sa": 5, "su": 6}  # by a weekday's first two letters
_PHRASES: list[tuple[str, str]] = [
    # (pattern, resolver name); longer forms first
    (r"the day before yesterday|avant-hier|anteayer|antes de ontem|前天", "d-2"),
    (r"the day after tomorrow|apr[eè]s-demain|pasado ma[nñ]ana|depois de amanh[aã]|后天", "d+2"),
    (r"yesterday|last night|hier soir|hier|ayer|anoche|ontem|昨天|昨晚", "d-1"),
    (r"tomorrow|demain|ma[nñ]ana|amanh[aã]|明天", "d+1"),
    (rf"{_NUM} days? ago|il y a {_NUM} jours?|hace {_NUM} d[ií]as?|h[aá] {_NUM} dias?", "days-ago"),
    (rf"{_NUM} weekends? ago", "weekends-ago"),
    (r"the week before last|the weekend before last", "before-last"),
    (rf"{_NUM} weeks? ago|il y a {_NUM} semaines?|hace {_NUM} semanas?|h[aá] {_NUM} semanas?", "weeks-ago"),
    (rf"{_NUM} months? ago|il y a {_NUM} mois|hace {_NUM} mes(?:es)?|h[aá] {_NUM} m[eê]s(?:es)?", "months-ago"),
    (rf"{_NUM} years? ago|il y a {_NUM} ans?|hace {_NUM} a[nñ]os?|h[aá] {_NUM} anos?", "years-ago"),
    (
        r"last weekend|the weekend before|le week-end dernier|el fin de semana pasado|no fim de semana passado|上周末",
        "w-end-1",
    ),
    (r"this weekend|ce week-end|este fin de semana|este fim de semana|这个周末|这周末", "w-end0"),
    (r"next weekend|le week-end prochain|el pr[oó]ximo fin de semana|no pr[oó]ximo fim de semana|下周末", "w-end+1"),
    (r"last week|la semaine derni[eè]re|la semana pasada|a semana passada|semana passada|上周|上个星期|上星期", "w-1"),
    (r"next week|la semaine prochaine|la pr[oó]xima semana|a pr[oó]xima semana|semana que vem|下周|下个星期", "w+1"),
    (r"this week|cette semaine|esta semana|这周|本周", "w0"),
    (r"last month|le mois dernier|el mes pasado|o m[eê]s passado|m[eê]s passado|上个月|上月", "m-1"),
    (r"next month|le mois prochain|el pr[oó]ximo mes|o pr[oó]ximo m[eê]s|下个月|下月", "m+1"),
    (r"this month|ce mois-ci|este mes|este m[eê]s|这个月|本月", "m0"),
    (r"last (?:summer|winter|spring|fall|autumn)", "season-"),
    (r"this (?:summer|winter|spring|fall|autumn)|next (?:summer|winter|spring|fall|autumn)", "season+"),
    (r"last year|l'ann[ée]e derni[eè]re|el a[nñ]o pasado|o ano passado|ano passado|去年", "y-1"),
    (r"next year|l'ann[ée]e prochaine|el pr[oó]ximo a[nñ]o|o pr[oó]ximo ano|ano que vem|明年", "y+1"),
    (r"this year|cette ann[ée]e|este a[nñ]o|este ano|今年", "y0"),
    (rf"last {_WD}", "wd-"),
    (rf"next {_WD}|this coming {_WD}", "wd+"),
]
_RX = re.compile(
    "(?<![A-Za-zÀ-ÿ])(?:" + "|".join(f"(?P<g{i}>{p})" for i, (p, _) in enumerate(_PHRASES)) + ")(?![A-Za-zÀ-ÿ])", re.I
)
_NUM_RX = re.compile(_NUM, re.I)
_WD_RX = re.compile(_WD, re.I)
_ALREADY = re.compile(r"\s*\((?:\d{1,2} [A-Z][a-z]+ \d{4}|the |[A-Z][a-z]+ \d{4}|\d{4})")


def _count(text: str) -> int:
    m = _NUM_RX.search(text)
    if not m:
        return 1
    v = m.group(1).lower()
    return int(v) if v.isdigit() else _NUMBERS.get(v, 1)


_SEASONS = {"winter": 12, "spring": 3, "summer": 6, "fall": 9, "autumn": 9}  # the month each starts (the north's)


def _season(text: str, d: date, last: bool) -> str:
    """ "last summer" is the latest summer over by ``d`` (said in July 2023: summer 2022; in October: summer 2023);
    "this summer" this calendar year's, "next summer" the first to begin after ``d`` (a winter is named by the year it
    starts)."""
    name = text.split()[-1].lower()
    start = _SEASONS[name]

    def bounds(year: int) -> tuple[date, date]:
        end_month = start + 3
        return date(year, start, 1), date(year + (end_month - 1) // 12, (end_month - 1) % 12 + 1, 1)

    if last:
        year = d.year
        while bounds(year)[1] > d:
            year -= 1
        return f"{name} {year}"
    if text.lower().startswith("this"):  # this calendar year's (a winter under way in January began the year before)
        return f"{name} {d.year - 1 if start == 12 and d.month < 3 else d.year}"
    year = d.year - 1
    while bounds(year)[0] <= d:  # "next summer": the first to begin after ``d``
        year += 1
    return f"{name} {year}"


def _resolve(kind: str, text: str, d: date) -> str | None:
    if kind in ("d-2", "d+2", "d-1", "d+1"):
        return say(d + timedelta(days={"d-2": -2, "d+2": 2, "d-1": -1, "d+1": 1}[kind]))
    if kind == "days-ago":
        return say(d - timedelta(days=_count(text)))
    if kind == "weeks-ago":
        n = _count(text)
        return f"{'a' if n == 1 else n} week{'s' if n != 1 else ''} before {say(d)}"
    if kind == "weekends-ago":
        n = _count(text)
        return f"{'a' if n == 1 else n} weekend{'s' if n != 1 else ''} before {say(d)}"
    if kind == "before-last":
        return f"2 {'weekends' if 'weekend' in text.lower() else 'weeks'} before {say(d)}"
    if kind in ("season-", "season+"):
        return _season(text, d, kind == "season-")
    if kind == "months-ago":
        return _month(d, -_count(text))
    if kind == "years-ago":
        return str(d.year - _count(text))
    if kind == "w-1":
        return f"the week before {say(d)}"
    if kind == "w+1":
        return f"the week after {say(d)}"
    if kind == "w0":
        return f"the week of {say(d)}"
    if kind == "w-end-1":
        return f"the weekend before {say(d)}"
    if kind == "w-end0":
        return f"the weekend of {say(d)}"
    if kind == "w-end+1":
        return f"the weekend after {say(d)}"
    if kind in ("m-1", "m+1", "m0"):
        return _month(d, {"m-1": -1, "m+1": 1, "m0": 0}[kind])
    if kind in ("y-1", "y+1", "y0"):
        return str(d.year + {"y-1": -1, "y+1": 1, "y0": 0}[kind])
    if kind in ("wd-", "wd+"):
        m = _WD_RX.search(text)
        if not m:
            return None
        wd = _WD_SHORT[m.group(1).lower()[:2]]
        when = _weekday_before(d, wd) if kind == "wd-" else _weekday_after(d, wd)
        rel = "before" if kind == "wd-" else "after"
        return f"the {WEEKDAYS[wd]} {rel} {say(d)}, {say(when)}"
    return None


def resolve(text: str, at: float) -> str:
    """``text`` with each relative date followed by what it means on the day ``at`` (unless already said)."""
    if not text or _RX.search(text) is None:
        return text
    d = day_of(at)
    out: list[str] = []
    pos = 0
    for m in _RX.finditer(text):
        if _ALREADY.match(text, m.end()):
            continue
        kind = _PHRASES[int((m.lastgroup or "g0")[1:])][1]
        meaning = _resolve(kind, m.group(0), d)
        if meaning is None:
            continue
        out += [text[pos : m.end()], f" ({meaning})"]
        pos = m.end()
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)
