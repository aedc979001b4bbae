"""What the served policy knew when it answered: prompt ids, response ids and its logprobs, by answer.

The served policy records them as it samples (``record``), keyed by :func:`response_key` of the answer it
returned. When the trainer builds a sample from a captured turn, it looks the turn's answer up
(``lookup``): found, the sample carries the behaviour policy's own ids and logprobs (importance ratios
are valid); not found (another model answered, or the stored answer was redacted), the sample is
tokenised afresh and its logprobs are marked missing.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

from ..store import AnyDatabase


def response_key(content: str | None, tool_calls: list[dict[str, Any]] | None = None) -> str:
    """The key of an answer: a hash of its text (stripped) and its tool calls, as any host stores them."""
    text = (content or "").strip()
    if tool_calls:
        text += "\x00" + json.dumps(
            [
                {"name": (c.get("function") or {}).get("name"), "arguments": (c.get("function") or {}).get("arguments")}
                for c in tool_calls
            ],
            sort_keys=True,
        )
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class TokenRecord:
    prompt_ids: list[int]
    response_ids: list[int]
    logprobs: list[float] | None  # the behaviour policy's, one per response token; None when unknown
    model: str | None = None
    weights: str | None = None  # which weights sampled it (a step or adapter path)


def record(db: AnyDatabase, key: str, rec: TokenRecord) -> None:
    db.execute(
        "INSERT INTO policy_tokens(key, model, prompt_ids, response_ids, logprobs, weights, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET model = excluded.model, "
        "prompt_ids = excluded.prompt_ids, response_ids = excluded.response_ids, logprobs = excluded.logprobs, "
        "weights = excluded.weights, created_at = excluded.created_at",
        (
            key,
            rec.model,
            json.dumps(rec.prompt_ids),
            json.dumps(rec.response_ids),
            None if rec.logprobs is None else json.dumps(rec.logprobs),
            rec.weights,
            time.time(),
        ),
    )


def lookup(db: AnyDatabase, key: str) -> TokenRecord | None:
    rows = db.query("SELECT * FROM policy_tokens WHERE key = ?", [key])
    if not rows:
        return None
    r = rows[0]
    return TokenRecord(
        prompt_ids=json.loads(r["prompt_ids"]),
        response_ids=json.loads(r["response_ids"]),
        logprobs=None if r["logprobs"] is None else json.loads(r["logprobs"]),
        model=r["model"],
        weights=r["weights"],
    )
