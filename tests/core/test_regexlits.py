"""The literal prefilter: what it requires of a pattern, and that skipping patterns on it changes no finding."""

from __future__ import annotations

import re

import pytest

from metaclaw_plugin.learning.memory import directives, standing
from metaclaw_plugin.learning.memory.guard import screen_memory
from metaclaw_plugin.learning.screening import normalise, scans, screen
from metaclaw_plugin.privacy import Redactor
from metaclaw_plugin.regexlits import Prefilter, required_literal_sets, required_literals
from metaclaw_plugin.types import Skill
from tests.support import memory_poison_corpus, memory_redteam_later, screening_corpus


@pytest.mark.parametrize(
    ("pattern", "flags", "expected"),
    [
        (r"\b(?:send|post) (?:it|them)\b", re.I, ("post it", "post them", "send it", "send them")),
        (r"ab(?:c|d)?ef", 0, ("abcef", "abdef", "abef")),
        (r"characteri[sz]e", 0, ("characterise", "characterize")),
        (r"Token[0-9]+xy", re.I, ("token",)),  # a range ends the run; the longer literal is kept
        (r"(?:a|bb)(?:c|dd)", 0, ("ac", "add", "bbc", "bbdd")),
        (r"(?:AKIA){2,}", 0, ("AKIA",)),  # a repeat of at least one needs its item
        (r"(?:ignore|forget) all|wipe\w*", 0, ("forget all", "ignore all", "wipe")),
    ],
)
def test_required_literals(pattern: str, flags: int, expected: tuple[str, ...]) -> None:
    assert required_literals(re.compile(pattern, flags)) == expected


@pytest.mark.parametrize(
    "pattern",
    [
        r"(?:abc)?\w+",  # an optional literal is not required
        r"abc|\d+",  # one alternative needs nothing, so the branch needs nothing
        r"(?i:ab)c",  # a local flag changes what its literals mean: they are not used
        r"[^ ]{40}",
        r"x+y?",  # one character: in nearly every text
    ],
)
def test_nothing_required_where_nothing_is_sure(pattern: str) -> None:
    assert required_literals(re.compile(pattern)) is None


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"\b(?:send|post)\w* .{0,20}(?:a copy|copies)\b", (("a copy", "copies"), ("post", "send"))),
        (r"(?:ab|cd)[0-9]+(?:xyz)+", (("xyz",), ("ab", "cd"))),  # a repeat of at least one keeps what it needs
        (r"(?:send|post) \w+|(?:a copy|copies)", (("a copy", "copies", "post ", "send "),)),  # one alternative's
        (r"(?:abc)?\w+", ()),
    ],
)
def test_every_set_of_literals_along_a_pattern_is_required(pattern: str, expected: tuple[tuple[str, ...]]) -> None:
    assert required_literal_sets(re.compile(pattern, re.I)) == expected


def test_a_text_holding_one_set_only_is_not_offered_the_pattern() -> None:
    rx = re.compile(r"\b(?:send|post)\w* .{0,20}(?:a copy|copies)\b", re.I)
    pf = Prefilter([rx])
    assert pf.candidates("please send me a copy") == [0] and rx.search("please send me a copy") is not None
    assert pf.candidates("please send it over") == [] and rx.search("please send it over") is None
    assert pf.candidates("copies of the posters") == [0]  # both sets held: offered (the pattern decides)


def test_a_word_boundary_the_pattern_asks_for_is_required_of_its_literals() -> None:
    """``\\b(?:cc|dm|send|...)``: "cc" inside "success" or "dm" inside "admin" does not offer the pattern; the word
    itself, or a literal with a hyphen inside ("e-mail"), does."""
    verbs = "|".join(["cc", "dm", "e-mail", *(f"verb{i}" for i in range(40))])  # too many to combine along it
    rx = re.compile(rf"\b(?:{verbs})\s+\S+@\S+", re.I)
    assert required_literal_sets(rx, bounds=True)[0][:3] == ("\x01cc", "\x01dm", "\x01e\x01-\x01mail")
    pf = Prefilter([rx])
    for text in ("a success story: bob@x.io", "ask the admin bob@x.io", "the emailer bob@x.io"):
        assert pf.candidates(text) == [] and rx.search(text) is None
    for text in ("cc bob@x.io", "please DM  ana@x.io now", "e-mail ops@x.io", "(cc bob@x.io)"):
        assert pf.candidates(text) == [0] and rx.search(text) is not None
    # a text holding the marker itself is only offered more patterns, never fewer
    assert Prefilter([rx]).candidates("succ\x01cc bob@x.io") == [0]


def test_the_ignore_case_exceptions_run_every_pattern() -> None:
    """``re.I`` matches "s" to the long s and "i" to the dotless i, which ``str.lower`` keeps apart: a text holding
    one is offered every pattern."""
    rx = re.compile(r"\bpassword\b", re.I)
    pf = Prefilter([rx])
    for text in ("my pa\u017fsword", "d\u0131gits"):
        assert pf.candidates(text) == [0]
    assert rx.search("my pa\u017fsword")  # the case the exception is for
    assert pf.candidates("nothing to see") == []


def _corpus() -> list[str]:
    texts: list[str] = []
    for item in screening_corpus.malicious() + screening_corpus.benign():
        texts += [item.name, item.description, item.body]
    for case in memory_poison_corpus.poisoning() + memory_poison_corpus.benign():
        texts.append(case.text)
    texts += [case.text for case in memory_redteam_later.poisoning() + memory_redteam_later.benign()]
    return [t for t in texts if t]


def test_every_match_holds_a_required_literal() -> None:
    """On the red-team corpora (every variant the screen reads), each match of each intent pattern holds one of its
    literals, and the prefilter offers that pattern."""
    matched = 0
    gates = [
        (scans._PREFILTER, [rx for _, _, rx in scans._PATTERNS]),
        (directives._ACTIONS_GATE, [act.rx for act in directives.ACTIONS]),
        (standing._TOUCH_GATE, list(standing._TOUCH)),
    ]
    for gate, patterns in gates:
        literals = [required_literal_sets(rx) for rx in patterns]
        for text in _corpus():
            plain = " ".join(text.casefold().split())
            for variant in {normalise.normalise(text), normalise.normalise(text, leet=True), plain}:
                offered = set(gate.candidates(variant))
                for i, (rx, sets) in enumerate(zip(patterns, literals, strict=True)):
                    for m in rx.finditer(variant):
                        matched += 1
                        assert i in offered, (rx.pattern[:80], variant[:120])
                        for lits in sets:  # one literal of each set, the first being required_literals'
                            assert any(lit in m.group(0).lower() for lit in lits), (rx.pattern[:80], m.group(0))
                        assert not sets or sets[0] == required_literals(rx)
    assert matched > 200  # the corpora do exercise the patterns


def test_the_screens_find_the_same_with_and_without_the_prefilters(monkeypatch: pytest.MonkeyPatch) -> None:
    """The skills' screen on the red-team corpus, and memory's (its directive screen included) on the poisoning
    corpus, with the prefilters and with every pattern run: the same verdicts, codes and reasons."""
    skills = [
        Skill(name=i.name, description=i.description, body=i.body, origin="evolved")
        for i in screening_corpus.malicious() + screening_corpus.benign()
    ]
    said = [c.text for c in memory_poison_corpus.poisoning() + memory_poison_corpus.benign()]
    said += [c.text for c in memory_redteam_later.poisoning() + memory_redteam_later.benign()]

    def findings() -> tuple[list[tuple[str, list[str], list[str]]], list[object]]:
        return [(r.verdict, r.codes, r.reasons) for r in map(screen, skills)], [screen_memory(t) for t in said]

    directives.findings.cache_clear()
    standing.findings.cache_clear()
    filtered = findings()

    class Everything:
        def __init__(self, n: int) -> None:
            self.n = n

        def candidates(self, text: str) -> list[int]:
            return list(range(self.n))

    monkeypatch.setattr(scans, "_PREFILTER", Everything(len(scans._PATTERNS)))
    monkeypatch.setattr(scans, "_CRED_SOURCE_GATE", Everything(1))
    monkeypatch.setattr(directives, "_ACTIONS_GATE", Everything(len(directives.ACTIONS)))
    monkeypatch.setattr(standing, "_TOUCH_GATE", Everything(len(standing._TOUCH)))
    directives.findings.cache_clear()
    standing.findings.cache_clear()
    assert findings() == filtered
    assert sum(f[0] != "accepted" for f in filtered[0]) > 100 and sum(f is not None for f in filtered[1]) > 100


def test_the_redactor_finds_the_same_with_the_shared_extractor() -> None:
    """The redactor's detectors are gated by the same extractor: a key that only a detector knows is still found."""
    red = Redactor()
    token = "sq0csp-" + "A" * 43
    assert token not in red.redact(f"square {token}")
