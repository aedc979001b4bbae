"""Fixtures of the memory tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from metaclaw_plugin import MetaClawPlugin, Settings, TurnContext

Turn = Callable[[str, str], str]


@pytest.fixture
def turn(home: Path) -> Iterator[Turn]:
    """One user's turns, each a session ended at once (its memories are extracted): say a text, get the memory
    section its request was given ("" when none)."""
    p = MetaClawPlugin(Settings(home=home)).start()

    def say(session: str, text: str) -> str:
        ctx = TurnContext(session_id=session, user="sam", tenant="acme")
        out = p.on_request(ctx, [{"role": "system", "content": "Hi."}, {"role": "user", "content": text}])
        p.on_response(ctx, {"role": "assistant", "content": "Noted."})
        p.on_session_end(TurnContext(session_id=session, tenant="acme"))
        assert p.flush(60)
        system = str(out[0]["content"])
        return system[system.find("<metaclaw-memory>") :] if "<metaclaw-memory>" in system else ""

    try:
        yield say
    finally:
        p.stop()
