"""What the plugin's own LLM calls spent, per UTC day and purpose (judge, evolver, memory...): calls, tokens and
failed calls, so that a daily budget holds across restarts and the processes of a home. Owns ``llm_budget``."""

from __future__ import annotations

from .backend import AnyDatabase, Query


def spent(query: Query, day: str) -> dict[str, tuple[int, int]]:
    """Purpose -> (calls, tokens) spent on ``day`` (``YYYY-MM-DD``, UTC)."""
    return {
        str(r[0]): (int(r[1]), int(r[2]))
        for r in query("SELECT purpose, calls, tokens FROM llm_budget WHERE day = ?", [day])
    }


def charge(db: AnyDatabase, day: str, purpose: str, calls: int, tokens: int, failed: bool) -> None:
    """Add calls and tokens (and a failure, when ``failed``) to ``day``'s spending for ``purpose``."""
    db.execute(
        "INSERT INTO llm_budget(day, purpose, calls, tokens, failures) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT(day, purpose) DO UPDATE SET calls = calls + excluded.calls, "
        "tokens = tokens + excluded.tokens, failures = failures + excluded.failures",
        [day, purpose, int(calls), int(tokens), 1 if failed else 0],
    )
