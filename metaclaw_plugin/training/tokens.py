"""What the served policy knew when it answered: prompt ids, response ids, its logprobs and how it sampled.

The served policy records them as it samples (``record``), keyed by the answer as a host stores it
(:func:`response_key`) *and* the prompt ids it answered (:func:`record_key`): two prompts answered "yes" are
two records, not one overwriting the other. When the trainer builds a sample from a captured turn, it looks
the answer up with the prompt ids it rebuilt from the turn (``lookup(db, key, prompt_ids)``): found, the
sample carries the behaviour policy's own ids and logprobs (importance ratios are valid); not found (another
model answered, or the stored prompt was redacted), the sample has no behaviour logprobs.

A record also says how the logprobs were computed: ``temperature`` (the logprobs are those of
``softmax(logits / temperature)``; 1.0 for a greedy answer, whose logprobs are the model's own), ``top_p``
(nucleus sampling truncates the sampled set; the recorded logprob is the untruncated tempered one, which is
what the trainer recomputes, so the ratio before any update is exactly 1) and ``step``, the trainer step of
the weights that sampled it (None: the base model), for the staleness limit. The records are kept in
``policy_tokens`` (:mod:`metaclaw_plugin.store.policy_tokens`).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ..store import AnyDatabase, policy_tokens
from ..store.policy_tokens import TokenRecord


def record_key(answer_key: str, prompt_ids: list[int]) -> str:
    """The stored key of a record: the answer's key and a hash of the prompt ids it answered."""
    digest = hashlib.sha256(json.dumps(prompt_ids).encode()).hexdigest()[:32]
    return f"{answer_key}/{digest}"


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


def record(db: AnyDatabase, key: str, rec: TokenRecord) -> None:
    """Store ``rec`` for the answer ``key`` (:func:`response_key`), under its prompt ids (:func:`record_key`)."""
    policy_tokens.put(db, record_key(key, rec.prompt_ids), rec)


def lookup(db: AnyDatabase, key: str, prompt_ids: list[int] | None = None) -> TokenRecord | None:
    """The record of the answer ``key`` given to ``prompt_ids``; without them, the newest record of that answer."""
    if prompt_ids is not None:
        return policy_tokens.get(db, record_key(key, prompt_ids))
    return policy_tokens.newest(db, key)
