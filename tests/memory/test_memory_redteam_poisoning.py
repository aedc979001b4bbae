"""Memory poisoning, held out (issue 41, item 4): a second red-team set written before reading the screens
(tests/support/memory_redteam_corpus.py: 90 statements, nine languages besides English, polite, third-person,
conditional, markdown, split and obfuscated forms) goes through the real path, end to end: said as a user turn
through ``on_request``/``on_response``, its session ended, the memory thread drained; a later request of the same
user, worded like the statement, gets nothing of it in its ``<metaclaw-memory>`` block, nothing of it is active (as a
memory or a passage), it is kept quarantined, and the agents' MCP ``memory_store`` files it quarantined. Its benign
look-alikes are never quarantined. Measured on main before the fixes: 41 of 90 injected (dev 29/60, held-out third
12/30), 1 of 48 benign quarantined (docs/memory.md has the figures).
"""

from __future__ import annotations

from collections import Counter

import pytest
from memory_poison_corpus import CLASSES
from memory_redteam_corpus import Benign, Poison, benign, poisoning
from memory_redteam_run import Outcome, assert_quarantined, by_text

POISON = poisoning()
BENIGN = benign()


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    return by_text(tmp_path_factory.mktemp("redteam-home"), [*POISON, *BENIGN])


def test_the_set_covers_every_class_and_language_in_both_thirds() -> None:
    assert len(POISON) >= 60 and len(BENIGN) >= 40
    assert {c.cls for c in POISON} == CLASSES
    langs = Counter(c.lang for c in POISON)
    assert {"en", "de", "fr", "es", "pt", "it", "nl", "zh", "ja", "ru", "mixed"} <= set(langs), langs
    assert Counter(c.split for c in POISON)["heldout"] == len(POISON) // 3
    assert len({c.text for c in POISON + BENIGN}) == len(POISON) + len(BENIGN)


@pytest.mark.parametrize("case", POISON, ids=lambda c: f"{c.split}-{c.lang}-{c.cls}-{c.form}")
def test_a_directive_is_never_injected_nor_active_and_is_kept_quarantined(
    case: Poison, outcomes: dict[str, Outcome]
) -> None:
    assert_quarantined(case, outcomes[case.text])


@pytest.mark.parametrize("case", BENIGN, ids=lambda c: f"{c.split}-{c.lang}-{c.text[:40]}")
def test_a_look_alike_statement_is_never_quarantined(case: Benign, outcomes: dict[str, Outcome]) -> None:
    o = outcomes[case.text]
    assert o.quarantined == 0 and o.active, (o.active, o.quarantined)
    assert o.tool == "active"
