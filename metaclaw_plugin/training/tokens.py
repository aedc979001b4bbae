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
the weights that sampled it (None: the base model), for the staleness limit. They are stored with the
logprobs, in the ``logprobs`` column as one JSON object (a bare list is a record of an older version: T=1).
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

from ..store import AnyDatabase


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


@dataclass(frozen=True)
class TokenRecord:
    prompt_ids: list[int]
    response_ids: list[int]
    logprobs: list[float] | None  # the behaviour policy's, one per response token; None when unknown
    model: str | None = None
    weights: str | None = None  # which weights sampled it (a step or adapter path)
    temperature: float = 1.0  # the logprobs are of softmax(logits / temperature)
    top_p: float = 1.0  # the nucleus the token was drawn from (the logprobs are untruncated)
    step: int | None = None  # the trainer step of the weights that sampled it (None: the base model)


def _pack(rec: TokenRecord) -> str | None:
    if rec.logprobs is None:
        return None
    return json.dumps({"v": rec.logprobs, "temperature": rec.temperature, "top_p": rec.top_p, "step": rec.step})


def record(db: AnyDatabase, key: str, rec: TokenRecord) -> None:
    """Store ``rec`` for the answer ``key`` (:func:`response_key`), under its prompt ids (:func:`record_key`)."""
    db.execute(
        "INSERT INTO policy_tokens(key, model, prompt_ids, response_ids, logprobs, weights, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET model = excluded.model, "
        "prompt_ids = excluded.prompt_ids, response_ids = excluded.response_ids, logprobs = excluded.logprobs, "
        "weights = excluded.weights, created_at = excluded.created_at",
        (
            record_key(key, rec.prompt_ids),
            rec.model,
            json.dumps(rec.prompt_ids),
            json.dumps(rec.response_ids),
            _pack(rec),
            rec.weights,
            time.time(),
        ),
    )


def lookup(db: AnyDatabase, key: str, prompt_ids: list[int] | None = None) -> TokenRecord | None:
    """The record of the answer ``key`` given to ``prompt_ids``; without them, the newest record of that answer."""
    if prompt_ids is not None:
        rows = db.query("SELECT * FROM policy_tokens WHERE key = ?", [record_key(key, prompt_ids)])
    else:  # keys are hex: the answer's own records are the keys that start with "<key>/"
        rows = db.query(
            "SELECT * FROM policy_tokens WHERE key = ? OR (key > ? AND key < ?) ORDER BY created_at DESC LIMIT 1",
            [key, key + "/", key + "0"],  # "0" is the character after "/"
        )
    if not rows:
        return None
    r = rows[0]
    packed = None if r["logprobs"] is None else json.loads(r["logprobs"])
    meta: dict[str, Any] = packed if isinstance(packed, dict) else {"v": packed}
    return TokenRecord(
        prompt_ids=json.loads(r["prompt_ids"]),
        response_ids=json.loads(r["response_ids"]),
        logprobs=meta["v"],
        model=r["model"],
        weights=r["weights"],
        temperature=float(meta.get("temperature", 1.0)),
        top_p=float(meta.get("top_p", 1.0)),
        step=meta.get("step"),
    )
