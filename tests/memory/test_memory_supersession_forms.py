"""A change said in the forms people use supersedes the old fact (issue 41: supersessions all right): a move ("I
moved to Berlin", "we relocated to Valencia"), a new holder of a role ("my new manager is Raj"), a replacement with
its old value ("we replaced Jenkins with GitHub Actions"), an upgrade of a possession ("I upgraded my phone to an
iPhone 15"), the same attribute named with a qualifier or a head noun ("my new email address"), a change in the
second clause ("I changed dentists, my new dentist is Dr. Moreau"). Before: 3 of 8 of each of two sets."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from metaclaw_plugin import MetaClawPlugin, Settings, TurnContext
from metaclaw_plugin.learning.memory.rules import extract, sentences

Turn = Callable[..., str]  # the `turn` fixture (tests/memory/conftest.py): session, text, at=None

CASES = [
    ("I live in Paris.", "I moved to Berlin last month.", "Where do I live?", "Berlin"),
    ("I'm based in Madrid.", "We relocated to Valencia in the spring.", "Which city am I in?", "Valencia"),
    ("My manager is Sofia.", "My new manager is Raj, Sofia left the company.", "Who is my manager?", "Raj"),
    ("We use Jenkins for CI.", "We replaced Jenkins with GitHub Actions.", "What do we use for CI?", "GitHub Actions"),
    ("My phone is a Pixel 6.", "I upgraded my phone to an iPhone 15.", "What phone do I have?", "iPhone"),
    ("My email is ana@old.example.", "My new email address is ana@new.example.", "What's my email?", "ana@new"),
    ("My dentist is Dr. Hale.", "I changed dentists, my new dentist is Dr. Moreau.", "Who is my dentist?", "Moreau"),
    ("The team lead is Omar.", "The team lead is now Beatriz.", "Who leads the team?", "Beatriz"),
    ("I use Firefox as my browser.", "I switched my browser to Brave.", "Which browser do I use?", "Brave"),
    # stop 60: a move with where from, and a thing given up and its replacement in two sentences
    ("I live in Porto.", "I just moved from Porto to Ghent.", "Where do I live?", "Ghent"),
    ("I ride a Vespa to work.", "I sold the Vespa. Now I ride an e-bike.", "What do I ride to work?", "e-bike"),
    # a promotion, a standing time moved, a thing given up for another (stop 60's eleventh probe: 5 of 10 before)
    ("I work at Initrode as a tester.", "I got promoted to team lead at Initrode.", "What's my job?", "team lead"),
    ("Our retro is at 4pm on Fridays.", "We moved the retro to 2pm on Thursdays.", "When is our retro?", "2pm"),
    ("I'm learning Dutch.", "I gave up on Dutch and started Greek.", "Which language am I learning?", "Greek"),
    # a replacement that names only the values: found by the words of what it replaced
    (
        "My climbing gym is Boulder Hub.",
        "I cancelled Boulder Hub and joined Crag House instead.",
        "Which climbing gym do I go to?",
        "Crag House",
    ),
]


def test_a_title_or_an_abbreviation_does_not_end_a_sentence():
    assert sentences("My dentist is Dr. Hale. She is great.") == ["My dentist is Dr. Hale.", "She is great."]
    assert sentences("Use a linter, e.g. ruff. Then commit.") == ["Use a linter, e.g. ruff.", "Then commit."]


def test_the_team_lead_is_a_role_not_the_teams_practice():
    assert [c.subject for c in extract("The team lead is Omar.")] == [
        c.subject for c in extract("The team lead is now Bea.")
    ]


def test_a_thing_given_up_then_its_replacement_in_the_next_sentence_is_one_change():
    (change,) = extract("I sold the Vespa. Now I ride an e-bike.")
    assert change.replaces == ["the Vespa"] and "e-bike" in change.text
    (change,) = extract("We dropped Jira. Now we track everything in Linear.")
    assert change.replaces == ["Jira"]
    assert len(extract("I sold the Vespa. I like Rome.")) <= 1  # no "now": two statements, nothing replaced


def test_each_change_supersedes_the_old_fact_and_only_the_new_one_is_recalled(home: Path):
    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        t0 = time.time() - 3600

        def turn(session: str, text: str, user: str, at: float | None = None) -> str:
            ctx = TurnContext(session_id=session, user=user, tenant="acme", started_at=at or time.time())
            out = p.on_request(ctx, [{"role": "system", "content": "Hi."}, {"role": "user", "content": text}])
            p.on_response(ctx, {"role": "assistant", "content": "Noted."})
            p.on_session_end(TurnContext(session_id=session, tenant="acme"))
            system = str(out[0]["content"])
            return system[system.find("<metaclaw-memory>") :] if "<metaclaw-memory>" in system else ""

        wrong = []
        for i, (old, new, question, want) in enumerate(CASES):
            user = f"u{i}"
            turn(f"old{i}", old, user, at=t0)
            assert p.flush(60)
            turn(f"new{i}", new, user, at=t0 + 60)  # the change is said after the fact it replaces
            assert p.flush(60)
            got = turn(f"ask{i}", question, user)
            if want not in got or old.rstrip(".") in got:
                wrong.append((question, got[-300:]))
        assert wrong == []
    finally:
        p.stop()


def test_a_change_takes_out_the_old_statement_not_the_rest_of_the_turn_it_was_said_in(turn: Turn):
    """A superseded statement took the whole turn it was said in out of recall: on a public LoCoMo conversation 63
    of 662 passages went, whole, with one of their sentences ("the lunch had salads, sandwiches and homemade
    desserts" with "my favorite is the banana split"). The old statement said alone still goes."""
    t0 = time.time() - 3600
    turn(
        "s1",
        "The shelter lunch had salads, sandwiches and homemade desserts, and the volunteers stayed until six. "
        "My dentist is Dr. Hale.",
        at=t0,
    )
    turn("s2", "My gym is PureFit.", at=t0 + 30)
    turn("s3", "I changed dentists, my new dentist is Dr. Moreau.", at=t0 + 60)
    turn("s4", "I switched gyms, my gym is now IronWorks.", at=t0 + 90)
    assert "desserts" in turn("ask1", "What food was there at the shelter lunch? Any desserts?")
    got = turn("ask2", "Which gym do I go to?")
    assert "IronWorks" in got and "PureFit" not in got  # the old statement, said alone, went
