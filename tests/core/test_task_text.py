"""Retrieval reads the user's words, not the text an agent client wraps around them (issue 29, item 2).

The recorded requests are real bodies of Claude Code, Codex, aider and qwen-code (tests/data/client_requests); the
unit cases are classes of wrappers no client here sends, so that the rules are structural.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from client_requests import load, plain

from metaclaw_plugin import Settings, TurnContext
from metaclaw_plugin.skillbank import SkillBank, bundled_skills_dir
from metaclaw_plugin.skillbank.retrieve import task_parts
from metaclaw_plugin.tasktext import Repeats, strip_wrappers, task_text

MAIN = [r for r in load() if r.kind == "main"]


def bank(home: Path) -> SkillBank:
    b = SkillBank(Settings(home=home, skills_dir=bundled_skills_dir()))
    b.refresh(force=True)
    return b


def picks(b: SkillBank, messages: list) -> list[str]:
    return b.injection(TurnContext("s"), messages).names


def test_recorded_requests_cover_every_client():
    assert {r.client for r in MAIN} == {"claude-code", "codex", "aider", "qwen-code"}


@pytest.mark.parametrize("rec", MAIN, ids=[f"{r.client}-{r.name}" for r in MAIN])
def test_the_task_text_of_a_recorded_request_is_what_the_user_typed(rec):
    assert task_text(rec.messages)[0] == rec.task


@pytest.mark.parametrize("client", ["claude-code", "codex", "qwen-code"])
def test_a_clients_wrapping_does_not_change_the_picks(home: Path, client: str):
    b = bank(home)
    for rec in load(client):
        if rec.kind == "main":
            want = picks(b, plain(rec.task))
            assert want, rec.task
            assert picks(b, rec.messages) == want, rec.name


def test_aiders_fixed_preamble_is_learned_from_its_earlier_tasks(home: Path):
    """aider sends the same "files added to the chat" exchange before every task: once it has been seen beside
    different tasks it is the client's, and the picks are those of the bare task."""
    b = bank(home)
    recs = [r for r in load("aider") if r.kind == "main"]
    for _ in range(2):  # the first tasks of a session teach the preamble (two exchanges, one after the other)
        for rec in recs:
            picks(b, rec.messages)
    for rec in recs:
        assert set(picks(b, rec.messages)) == set(picks(b, plain(rec.task))), rec.name


# Classes of wrappers -------------------------------------------------------------------------------------------
TASK = "Make the CSV export stream rows instead of loading the whole table into memory"


@pytest.mark.parametrize(
    "wrapped",
    [
        f"<ide_selection path='a.py'>\nline 1\nline 2\n</ide_selection>\n{TASK}",
        f"{TASK}\n\n<workspace-state>\n<open_files>a.py</open_files>\n</workspace-state>",
        f"<context>\n<nested>x</nested>\n</context>\n\n{TASK}\n<hint kind=x>\nbe brief\n</hint>",
    ],
)
def test_any_tag_block_on_its_own_lines_is_a_wrapper(wrapped: str):
    assert strip_wrappers(wrapped) == TASK


def test_a_tag_inside_the_users_sentence_is_kept():
    text = "Center the <div> in index.html and keep the <span> inline"
    assert strip_wrappers(text) == text


def test_typed_parts_that_are_not_text_are_not_the_users_words():
    msgs = [
        {"role": "user", "content": TASK},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "read", "input": {}}]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t", "content": "id,name\n1,a"},
                {"type": "image", "source": {"type": "base64", "data": "AAAA"}},
                {"type": "text", "text": "<reminder>\nthe file changed\n</reminder>"},
            ],
        },
    ]
    assert task_text(msgs) == (TASK, 0)


def test_the_first_user_message_of_the_turn_wins_over_appended_ones():
    msgs = [
        {"role": "user", "content": "an earlier request"},
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": TASK},
        {"role": "user", "content": "Here is the current content of the open editor tab: ..."},
    ]
    assert task_text(msgs) == (TASK, 2)


def test_an_appended_instruction_sheet_is_dropped_and_a_short_markdown_task_kept():
    rules = "# Output rules\n\n" + "\n".join(
        f"{i}. Always format replies in the house style, rule {i}." for i in range(30)
    )
    assert strip_wrappers(f"{TASK}\n\n{rules}") == TASK
    own = f"{TASK}\n\n## Notes\n\n- keep the header row\n- gzip when asked"
    assert strip_wrappers(own) == own


def test_paragraphs_echoing_the_system_prompt_are_not_the_users():
    sheet = "When you edit a file, reply with the full path and the whole new content inside one fenced block. " * 5
    msgs = [
        {"role": "system", "content": f"You are a helper.\n\n{sheet}"},
        {"role": "user", "content": f"{TASK}\n\n{sheet}"},
    ]
    assert task_text(msgs)[0] == TASK


def test_a_preamble_sent_beside_every_task_is_learned():
    r = Repeats()
    pre = "Project conventions: four spaces, type hints everywhere, no print statements, tests beside the code. " * 2
    tasks = [f"Task number {i}: rename the helper {i}" for i in range(4)]
    for t in tasks[:3]:
        task_text([{"role": "user", "content": f"{pre}\n\n{t}"}], repeats=r)
    assert task_text([{"role": "user", "content": f"{pre}\n\n{tasks[3]}"}], repeats=r)[0] == tasks[3]
    # the user's own long task, resent on every call of an agent loop, is never taken for a preamble
    long_task = "Refactor the billing module so that invoices are computed from line items and taxes per region. " * 2
    for _ in range(5):
        assert task_text([{"role": "user", "content": long_task}], repeats=r)[0] == long_task.strip()


def test_a_message_that_is_all_markup_is_still_the_users():
    msgs = [{"role": "user", "content": "<config>\n<port>80</port>\n</config>"}]
    assert task_text(msgs)[0] == "<config>\n<port>80</port>\n</config>"


def test_task_parts_context_leaves_wrappers_out():
    msgs = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "<env>\ncwd=/x\n</env>"}, {"type": "text", "text": "earlier ask"}],
        },
        {"role": "assistant", "content": "earlier answer"},
        {"role": "user", "content": TASK},
    ]
    assert task_parts(msgs) == (TASK, "earlier answer\nearlier ask", "")


@pytest.mark.parametrize(
    ("sent", "read"),
    [
        ('"Fix the flaky login test"', "Fix the flaky login test"),  # opencode's prompt, as it sends it
        ("\u201cFix the flaky login test\u201d", "Fix the flaky login test"),
        ("'Fix the flaky login test'", "Fix the flaky login test"),
        ('"strict" is the flag to set', '"strict" is the flag to set'),  # quotes that do not wrap the whole
        ('"a" and "b"', '"a" and "b"'),
        ('Use "strict" mode', 'Use "strict" mode'),
    ],
)
def test_a_prompt_wrapped_whole_in_quotes_is_read_inside_them(sent: str, read: str) -> None:
    assert task_text([{"role": "user", "content": sent}])[0] == read


def test_the_rule_extractor_reads_a_quoted_statement() -> None:
    from metaclaw_plugin.learning.memory.rules import Forget, extract

    found = extract('"remember that my allergy is penicillin"')
    assert len(found) == 1 and not isinstance(found[0], Forget) and found[0].text == "my allergy is penicillin"
