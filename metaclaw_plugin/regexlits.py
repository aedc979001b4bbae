"""Literals a regex cannot match without, and a one-pass scanner for them: a prefilter that skips the patterns a text
cannot match (the redactor's detectors, the screen's intent patterns) without changing what any pattern finds.

:func:`required_literals` reads the parsed pattern (``re._parser``) the way RE2's prefilter does: small sets of exact
strings are concatenated along a sequence (``(?:send|post) (?:it|them)`` gives four), a branch needs one of its
alternatives' literals, a repeat of at least one its item's, and an optional part or a class breaks the run. The
most selective set along the pattern is kept, and the others along it are required too (RE2's AND): a sentence
holding one of the many verbs of "send ... a copy" but none of its objects is not offered the pattern. It is sound
by construction: where it is unsure it requires nothing.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

try:
    from re import _parser as _sre  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_parse as _sre

_CAP = 16  # the most exact strings a node is expanded to (RE2's prefilter uses 16)
_BIG_CAP = 2048  # the most literals a large branch is expanded to with what comes before it
_CLASS_CAP = 6  # a class of up to this many single characters is expanded ([sz] in "characteri[sz]e")
MIN_LITERAL = 2  # single characters are in nearly every text: a pattern needing only those always runs
_REPEATS = {_sre.MAX_REPEAT, _sre.MIN_REPEAT, getattr(_sre, "POSSESSIVE_REPEAT", _sre.MAX_REPEAT)}
_ZERO_WIDTH = {_sre.AT, _sre.ASSERT, _sre.ASSERT_NOT}


@dataclass(frozen=True)
class _Info:
    exact: frozenset[str] | None  # every string the node can match, when that is a small set
    need: frozenset[str] | None  # one of these is in every match; None: nothing is known
    also: tuple[frozenset[str], ...] = ()  # further sets, one of each of which is in every match too
    # every string the node can match, when that set is too large to combine along a sequence (a branch of many
    # verbs): what came just before it is still put before each (a word boundary, "\\b(?:send|post|...)")
    big: frozenset[str] | None = None


_ANY = _Info(None, None)
_EMPTY = _Info(frozenset({""}), None)


def _need_of(info: _Info) -> frozenset[str] | None:
    if info.exact is not None:
        return None if "" in info.exact else info.exact
    return info.need


def _better(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    """The more selective of two requirements: the longer shortest literal, then the fewer literals."""
    if a is None or b is None:
        return a if b is None else b
    ka, kb = (min(map(len, a)), -len(a)), (min(map(len, b)), -len(b))
    return a if ka >= kb else b


def _seq(items: Sequence[Any], lower: bool, bounds: bool = False) -> _Info:
    run: frozenset[str] | None = frozenset({""})
    whole: frozenset[str] | None = run  # the sequence's exact set while every item has one
    needs: list[frozenset[str]] = []  # each item matches inside the sequence's match: every one of these is required
    every: frozenset[str] | None = run  # the sequence's every string, large ones included (:attr:`_Info.big`)
    for item in items:
        info = _node(item, lower, bounds)
        full = info.exact if info.exact is not None else info.big
        every = (
            frozenset(a + b for a in every for b in full)
            if every is not None and full is not None and len(every) * len(full) <= _BIG_CAP
            else None
        )
        if info.exact is not None and whole is not None and len(whole) * len(info.exact) <= _CAP:
            whole = frozenset(a + b for a in whole for b in info.exact)
        else:
            whole = None
        if info.exact is not None and run is not None and len(run) * len(info.exact) <= _CAP:
            run = frozenset(a + b for a in run for b in info.exact)
            continue
        need = info.need
        if info.big is not None and run is not None and len(run) * len(info.big) <= _BIG_CAP:
            need, run = frozenset(a + b for a in run for b in info.big), None  # the run goes on in it, no further
        needs += [n for n in (_need_of(_Info(run, None)) if run is not None else None, need) if n is not None]
        needs += info.also
        run = info.exact if info.exact is not None else frozenset({""})
    if whole is not None:
        return _Info(whole, None)
    last = _need_of(_Info(run, None)) if run is not None else None
    needs += [last] if last is not None else []
    best: frozenset[str] | None = None
    for n in needs:
        best = _better(best, n)
    return _Info(None, best, tuple(dict.fromkeys(n for n in needs if n != best)), every)


def _node(item: tuple[Any, Any], lower: bool, bounds: bool = False) -> _Info:
    op, av = item
    if op is _sre.LITERAL:
        c = chr(av)
        return _Info(frozenset({c.lower() if lower else c}), None)
    if op is _sre.AT and bounds and av == _sre.AT_BOUNDARY:
        return _BOUND  # "\\b": the scanned text marks each word boundary (:func:`mark_bounds`)
    if op in _ZERO_WIDTH:
        return _EMPTY  # matches no text: what a look-around asks for is not required of the match itself
    if op is _sre.IN:
        if all(o is _sre.LITERAL for o, _ in av) and len(av) <= _CLASS_CAP:
            return _Info(frozenset(chr(v).lower() if lower else chr(v) for _, v in av), None)
        return _ANY
    if op is _sre.SUBPATTERN:
        _group, add_flags, del_flags, sub = av
        return _ANY if add_flags or del_flags else _seq(sub, lower, bounds)  # a local flag changes what a literal means
    if op is getattr(_sre, "ATOMIC_GROUP", None):
        return _seq(av, lower, bounds)
    if op is _sre.BRANCH:
        infos = [_seq(b, lower, bounds) for b in av[1]]
        exacts = [i.exact for i in infos]
        if all(e is not None for e in exacts) and sum(len(e) for e in exacts if e is not None) <= _CAP:
            return _Info(frozenset().union(*(e for e in exacts if e is not None)), None)
        if all(e is not None for e in exacts):
            every = frozenset().union(*(e for e in exacts if e is not None))
            return _Info(None, None if "" in every else every, big=every)
        needs = [_need_of(i) for i in infos]
        if any(n is None for n in needs):
            return _ANY
        return _Info(None, frozenset().union(*(n for n in needs if n is not None)))
    if op in _REPEATS:
        lo, hi, sub = av
        info = _seq(sub, lower, bounds)
        if lo == 0:
            if hi == 1 and info.exact is not None and len(info.exact) < _CAP:
                return _Info(info.exact | {""}, None)
            return _ANY
        if lo == hi == 1:
            return info
        return _Info(None, _need_of(info), info.also)
    return _ANY


def required_literals(pattern: re.Pattern[str], min_length: int = MIN_LITERAL) -> tuple[str, ...] | None:
    """Literals one of which every match of ``pattern`` contains (lower-cased when it ignores case), or None when
    none of ``min_length`` characters or more is known."""
    try:
        items = _sre.parse(pattern.pattern, pattern.flags)
    except Exception:
        return None
    need = _need_of(_seq(list(items), bool(pattern.flags & re.IGNORECASE)))
    if not need or min(map(len, need)) < min_length:
        return None
    return tuple(sorted(need))


def required_literal_sets(
    pattern: re.Pattern[str], min_length: int = MIN_LITERAL, *, bounds: bool = False
) -> tuple[tuple[str, ...], ...]:
    """Every set of literals that the matches of ``pattern`` each hold one of, :func:`required_literals`' first;
    only sets whose literals have ``min_length`` characters or more. Empty when none is known. With ``bounds``, a
    literal carries the word boundaries the pattern asks for (``\\b(?:cc|dm)\\b``: "\\x01cc\\x01") and those
    inside it, as :func:`mark_bounds` shows a text: "cc" then is no longer held by "success"."""
    try:
        items = _sre.parse(pattern.pattern, pattern.flags)
    except Exception:
        return ()
    bounds = bounds and not pattern.flags & (re.ASCII | re.LOCALE)  # their \\b is not the one marked
    info = _seq(list(items), bool(pattern.flags & re.IGNORECASE), bounds)
    first = _need_of(info)
    if not first or min(map(_core_len, first)) < min_length:
        return ()
    sets = [first, *(n for n in info.also if n and min(map(_core_len, n)) >= min_length)]
    return tuple(tuple(sorted({_marked(lit) for lit in n} if bounds else n)) for n in sets)


BOUND = "\x01"  # a word boundary, in a marked text and in the literals read with ``bounds``
_BOUND = _Info(frozenset({BOUND}), None)
_WORD_BOUNDARY = re.compile(r"\b")


def mark_bounds(text: str) -> str:
    """``text`` with :data:`BOUND` at each word boundary (as ``re`` reads ``\\b`` in a str pattern). A BOUND the text
    already holds only adds matches: a literal is never missed."""
    return _WORD_BOUNDARY.sub(BOUND, text)


def _core_len(lit: str) -> int:
    return len(lit.replace(BOUND, ""))


def _is_word(c: str) -> bool:
    return c.isalnum() or c == "_"


def _marked(lit: str) -> str:
    """A literal as a marked text holds it: a BOUND wherever its own characters change between word and non-word,
    and at an end where the pattern asks for one (a BOUND the pattern asks for inside it is one of those, or can
    never match: dropped)."""
    core = lit.replace(BOUND, "")
    if not core:
        return lit
    out = [core[0]]
    for a, b in itertools.pairwise(core):
        if _is_word(a) != _is_word(b):
            out.append(BOUND)
        out.append(b)
    return (BOUND if lit.startswith(BOUND) else "") + "".join(out) + (BOUND if lit.endswith(BOUND) else "")


def literal_scanner(literals: Iterable[str]) -> Callable[[str], set[str]]:
    """``text -> the literals it holds``, in one pass over the text: an Aho-Corasick automaton (pyahocorasick), about
    3x faster than a substring test per literal on a message (~15 against ~50 µs for the redactor's 90 literals on a
    1 KB message: ``python benchmarks/redaction.py --per-message-only``); the substring tests where the package is
    not installed."""
    lits = tuple(literals)
    try:
        import ahocorasick
    except ImportError:  # pragma: no cover - a dependency of the package; kept working without it
        return lambda text: {lit for lit in lits if lit in text}
    if not lits:
        return lambda text: set()
    automaton = ahocorasick.Automaton()
    for lit in lits:
        automaton.add_word(lit, lit)
    automaton.make_automaton()
    return lambda text: {lit for _, lit in automaton.iter(text)}


# Characters that ignore-case matching treats as equal to another that ``str.lower`` does not map them to (dotless
# i as "i", long s as "s", the Greek letter variants, final sigma), and dotted capital I (``lower`` makes it two
# characters): in a text holding one, a prefilter on lower-cased literals could miss a match, so every pattern runs;
# a pattern whose literals hold one always runs. Their ASCII partners ("i", "s") are safe on their own.
def _case_exceptions() -> frozenset[str]:
    try:
        from re import _compiler  # type: ignore[attr-defined]

        groups = _compiler._equivalences
    except (ImportError, AttributeError):  # pragma: no cover - the table moved: take the known ones
        groups = ((0x69, 0x131), (0x73, 0x17F), (0x3C2, 0x3C3))
    chars = {chr(c) for g in groups for c in g} | {"\u0130"}
    return frozenset(
        c for c in chars | {c.upper() for c in chars} | {c.lower() for c in chars} if len(c) == 1 and not c.isascii()
    )


_CASE_EXCEPTIONS = re.compile("[" + "".join(re.escape(c) for c in sorted(_case_exceptions())) + "]")


class Prefilter:
    """Which of a list of patterns may match a text: those whose required literals it holds (lower-cased), and those
    with none known. Asking costs one pass of an automaton over the text; a pattern it rules out cannot match."""

    def __init__(self, patterns: Iterable[re.Pattern[str]]):
        self._always: list[int] = []
        self._by_literal: dict[str, list[int]] = {}
        self._also: dict[int, tuple[frozenset[str], ...]] = {}  # a pattern's further sets, each needing a literal
        rxs = list(patterns)
        scanned: set[str] = set()
        for i, rx in enumerate(rxs):
            sets = required_literal_sets(rx, bounds=True)
            if not sets or any(_CASE_EXCEPTIONS.search(lit) for lit in sets[0]):
                self._always.append(i)
                continue
            for lit in sets[0]:
                self._by_literal.setdefault(lit.lower(), []).append(i)
            also = [s for s in sets[1:] if not any(_CASE_EXCEPTIONS.search(lit) for lit in s)]
            if also:
                self._also[i] = tuple(frozenset(lit.lower() for lit in s) for s in also)
            scanned.update(lit.lower() for s in (sets[0], *also) for lit in s)
        self.size = len(rxs)
        self._scan = literal_scanner(scanned)
        self._bounded = any(BOUND in lit for lit in scanned)  # the text is scanned marked (:func:`mark_bounds`)

    def candidates(self, text: str) -> list[int]:
        """Indices, in order, of the patterns that may match ``text``."""
        if _CASE_EXCEPTIONS.search(text):
            return list(range(self.size))
        low = text.lower()
        held = self._scan(mark_bounds(low) if self._bounded else low)
        found = set(self._always)
        for lit in held:
            found.update(self._by_literal.get(lit, ()))
        also = self._also
        return sorted(i for i in found if i not in also or all(not s.isdisjoint(held) for s in also[i]))
