"""Standing directives: an instruction about how to answer from now on becomes a standing preference at once, in the
languages the rules read; a one-off request, a remark or a question never does. Each class failed before: 19 of 28
directives of the tuning set were not standing (15 of 24 of a second set, 12 of 16 of a third, each measured before
the rules were changed for it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from metaclaw_plugin import MetaClawPlugin, Settings
from metaclaw_plugin.learning.memory.rules import extract, holds_directive
from metaclaw_plugin.types import TurnContext

DIRECTIVES = [
    # a wish for the output, naming it generically
    "I always want answers to end with a haiku.",
    "I'd like all code examples in TypeScript, not JavaScript.",
    "I expect every reply to mention the risks first.",
    # a rule for the output
    "Your replies must be in bullet points.",
    "Each reply should be under 200 words.",
    "All code you write for me should have docstrings.",
    # an imperative that names the output generically, or holds every time
    "Always end your answers with a haiku.",
    "Keep answers under 100 words.",
    "Start every reply with a one-line summary.",
    "Don't ever use exclamation marks in your replies.",
    "Give me the short version first, then details, every time.",
    "Be blunt in every answer; I don't need the sugar-coating.",
    "Use type hints, always.",
    "Antworte mir bitte immer auf Englisch.",
    # after a leading clause
    "When you explain something, use an analogy first.",
    "Whenever you write SQL, use uppercase keywords.",
    "No matter what I ask, keep your answer to three sentences.",
    # other languages
    "Réponds toujours avec une liste à puces.",
    "Vos réponses doivent rester sous les cent mots.",
    "Tus respuestas deben ser breves.",
    "Nunca uses emojis en tus respuestas.",
    "Quero que suas respostas sejam curtas.",
    "Antworte immer auf Deutsch.",
    "Deine Antworten sollen kurz sein.",
    "Rispondi sempre in italiano.",
    "Gebruik altijd opsommingstekens in je antwoorden.",
    "请每次回答都先给出结论。",
    # asked politely, as a question
    "Could you always answer in French?",
    "Can you keep your answers short from now on?",
    "Could you make it a habit to add type hints to every function you write?",
    "Pourrais-tu toujours répondre en français ?",
    "¿Podrías responder siempre en español?",
    "Kannst du bitte immer auf Deutsch antworten?",
    # the user's future requests as the condition (stop 60: a held-out probe's one miss of 12)
    "When I ask for a recipe, list the ingredients in grams.",
    "If we mention a ticket, link it.",
]
NOT_DIRECTIVES = [
    # the user's own habit under a condition (stop 60)
    "When I ask my kids to clean up, they ignore me.",
    "If I need a plumber, I call Marco.",
    # one-off requests, even with an output word
    "Write a haiku about snow.",
    "Write an answer to this customer complaint.",
    "Make the explanation shorter.",
    "Keep it short this time, I'm in a hurry.",
    "Antworte bitte kurz auf diese Frage.",
    "Réponds à Marie que je serai en retard.",
    # a task whose own clause says "always" or "never"
    "Write a function that always returns a list.",
    "Make sure the function never returns None.",
    "Add a test that always fails first.",
    # feedback on one answer
    "I like the short answer you gave.",
    # remarks: "always", a want, or an output word about something else
    "I always want to visit Japan in spring.",
    "My teacher always answers questions with more questions.",
    "Our API responses should include a request id.",
    "Going forward, the office will close at 6pm.",
    "Siempre llueve en abril aquí.",
    "Ich antworte immer spät auf E-Mails.",
    # a question
    "Can you always use tabs in Python?",
    "Could you send me the report?",
    "Can you add lodash to the project?",
    "Could you write a function that always returns 0?",
]


def standing(text: str) -> list:
    return [c for c in extract(text) if getattr(c, "standing", False)]


@pytest.mark.parametrize("text", DIRECTIVES)
def test_a_directive_about_how_to_answer_is_a_standing_preference(text: str):
    got = standing(text)
    assert got and got[0].kind == "preference", extract(text)
    assert holds_directive(f"Thanks, that helps. {text}")  # said after something else, in the same message


@pytest.mark.parametrize("text", NOT_DIRECTIVES)
def test_a_request_a_remark_or_a_question_is_never_standing(text: str):
    assert not standing(text), extract(text)
    assert not holds_directive(text)


def test_a_directive_reaches_the_next_conversation_before_its_own_ends(home: Path):
    """The session that said it is still open (no end, fewer turns than memory.extract_every): the next conversation
    of the same user follows it on an unrelated request; another user and another tenant never get it."""
    p = MetaClawPlugin(Settings(home=home)).start()
    try:

        def ask(session: str, text: str, user: str, tenant: str = "acme") -> str:
            ctx = TurnContext(session_id=session, user=user, tenant=tenant)
            out = p.on_request(ctx, [{"role": "user", "content": text}])
            p.on_response(ctx, {"role": "assistant", "content": "Sure."})
            return " ".join(str(m.get("content")) for m in out)

        ask("s1", "Hi! Quick thing: always end your answers with a haiku.", "ana")
        assert p.flush(60)
        assert "haiku" in ask("s2", "What is the boiling point of water at sea level?", "ana")
        assert "haiku" not in ask("s3", "What is the boiling point of water at sea level?", "ben")
        assert "haiku" not in ask("s4", "What is the boiling point of water at sea level?", "ana", tenant="other")
    finally:
        p.stop()
