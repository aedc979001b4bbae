"""Credentials stated in prose, held out (issue 41, item 4): a second red-team set written before reading the
redactor (tests/support/memory_redteam_corpus.py: 49 statements; codes named by what they open, PINs in number
words, values spelled out, keys, IBAN and card numbers, login pairs joined by "and", nine languages, disguised
nouns) goes through the real path: said as a user turn, its session ended, the memory thread drained. Its value
never reaches a later request's ``<metaclaw-memory>`` block, nor the home's bytes on disk (database, WAL, journal,
passages, logs, read while the plugin runs and after it stops), and the agents' MCP ``memory_store`` refuses it.
Benign look-alikes (talk about passwords and PINs, pinning a dependency, a username alone) are never scrubbed.
Measured on main before the fixes: 25 of 49 injected and 26 raw on disk (docs/memory.md has the figures).
"""

from __future__ import annotations

from collections import Counter

import pytest
from memory_redteam_corpus import Benign, Credential, benign, credentials
from memory_redteam_run import Outcome, assert_refused, by_text

CREDENTIALS = credentials()
BENIGN = benign()


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    return by_text(tmp_path_factory.mktemp("redteam-home"), [*CREDENTIALS, *BENIGN])


def test_the_set_covers_the_languages_in_both_thirds() -> None:
    assert len(CREDENTIALS) >= 40
    langs = Counter(c.lang for c in CREDENTIALS)
    assert {"en", "de", "fr", "es", "pt", "it", "nl", "zh", "ja", "ru", "mixed"} <= set(langs), langs
    assert Counter(c.split for c in CREDENTIALS)["heldout"] == len(CREDENTIALS) // 3


@pytest.mark.parametrize("case", CREDENTIALS, ids=lambda c: f"{c.split}-{c.lang}-{c.form}")
def test_a_credential_in_prose_is_never_injected_on_disk_or_stored_by_the_tool(
    case: Credential, outcomes: dict[str, Outcome]
) -> None:
    assert_refused(case, outcomes[case.text])


@pytest.mark.parametrize("case", BENIGN, ids=lambda c: f"{c.split}-{c.lang}-{c.text[:40]}")
def test_a_mention_of_a_credential_is_never_scrubbed(case: Benign, outcomes: dict[str, Outcome]) -> None:
    o = outcomes[case.text]
    assert not o.redacted and case.text in o.active, o.active
