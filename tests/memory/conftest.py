"""Fixtures of the memory tests."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from metaclaw_plugin import MetaClawPlugin, Settings, TurnContext

Turn = Callable[..., str]  # session, text, at=None


@pytest.fixture
def turn(home: Path) -> Iterator[Turn]:
    """One user's turns, each a session ended at once (its memories are extracted): say a text, get the memory
    section its request was given ("" when none); ``at``: when it was said (now by default)."""
    p = MetaClawPlugin(Settings(home=home)).start()

    def say(session: str, text: str, at: float | None = None) -> str:
        ctx = TurnContext(session_id=session, user="sam", tenant="acme", started_at=time.time() if at is None else at)
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
