"""What the served policy knew when it answered (``policy_tokens``): one :class:`TokenRecord` per stored key.

A record's logprobs are stored with how they were computed, in the ``logprobs`` column as one JSON object
(``{"v": [...], "temperature", "top_p", "step"}``); a bare list is a record of an older version (T=1). The keys
are the served policy's (:func:`metaclaw_plugin.training.tokens.record_key`): an answer's key, or that key, a
``/`` and a hash of the prompt ids it answered.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from .backend import AnyDatabase


@dataclass(frozen=True)
class TokenRecord:
    prompt_ids: list[int]
    response_ids: list[int]
    logprobs: list[float] | None  # the behaviour policy's, one per response token; None when unknown
    model: str | None = None
    weights: str | None = None  # which weights sampled it (a step or LoRA weights path)
    temperature: float = 1.0  # the logprobs are of softmax(logits / temperature)
    top_p: float = 1.0  # the nucleus the token was drawn from (the logprobs are untruncated)
    step: int | None = None  # the trainer step of the weights that sampled it (None: the base model)


def _pack(rec: TokenRecord) -> str | None:
    if rec.logprobs is None:
        return None
    return json.dumps({"v": rec.logprobs, "temperature": rec.temperature, "top_p": rec.top_p, "step": rec.step})


def _unpack(r: Any) -> TokenRecord:
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


def put(db: AnyDatabase, key: str, rec: TokenRecord) -> None:
    """Store ``rec`` under ``key``, replacing what was there."""
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
            _pack(rec),
            rec.weights,
            time.time(),
        ),
    )


def get(db: AnyDatabase, key: str) -> TokenRecord | None:
    rows = db.query("SELECT * FROM policy_tokens WHERE key = ?", [key])
    return _unpack(rows[0]) if rows else None


def newest(db: AnyDatabase, answer_key: str) -> TokenRecord | None:
    """The newest record of an answer: stored under ``answer_key`` itself or under ``<answer_key>/<hash>``."""
    rows = db.query(  # keys are hex: the answer's own records are the keys that start with "<key>/"
        "SELECT * FROM policy_tokens WHERE key = ? OR (key > ? AND key < ?) ORDER BY created_at DESC LIMIT 1",
        [answer_key, answer_key + "/", answer_key + "0"],  # "0" is the character after "/"
    )
    return _unpack(rows[0]) if rows else None
