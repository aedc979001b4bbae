"""Samples RL can use: token ids, the behaviour policy's logprobs and a loss mask, built from captured turns.

A buffer row (:class:`~metaclaw_plugin.types.Sample`) names a captured turn and its reward. The turn's
messages are stored as sent, the injected skill block included, with the request's ``tools``; the policy's
chat template applied to them by :func:`.chat.render` (the one rendering the served policy also samples
from) gives the prompt the policy saw, tool definitions, earlier tool calls and tool results included.

* **Single-step turn** (the answer follows the last user message directly): if the served policy gave
  this answer, its token record (:mod:`.tokens`, looked up by :func:`~.tokens.response_key`) supplies
  the response ids and behaviour logprobs exactly as sampled (a tool call as the policy wrote it),
  provided its prompt ids equal those of the stored prompt. The stored prompt is redacted; a record whose
  prompt differs (a secret was redacted) is not used, so no redacted text reaches a training payload and
  no logprob conditioned on another prompt is used. Otherwise ``logprobs`` is ``None``.
* **Multi-step turn** (the agent called tools after the last user message, then answered): the completion
  is everything after the last user message: earlier assistant steps (mask 1), tool results (mask 0, the
  policy did not write them) and the final answer (mask 1). Only the final answer could have a token
  record, so behaviour logprobs for the whole completion are unknown: ``logprobs`` is ``None``.

``logprobs is None`` means "no importance ratio": the losses train such samples in the on-policy
REINFORCE form (see :mod:`.losses`). Chat-template headers (``<|im_start|>assistant``) are prompt format,
mask 0. Tool calls are trained as the template renders them (natively, or in the fallback format of
:mod:`.chat`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..store import AnyDatabase
from ..text import message_text
from ..types import Message, Sample, Turn
from . import chat, tokens


class SampleError(ValueError):
    """A turn that cannot become a training sample (no answer, or a template that is not prefix-stable)."""


@dataclass
class TrainSample:
    turn_id: str
    prompt_ids: list[int]
    completion_ids: list[int]
    mask: list[int]  # per completion token: 1 trained, 0 not (tool results, template headers)
    logprobs: list[float] | None  # behaviour policy's, per completion token; None: unknown (no ratio)
    reward: float
    generation: int
    advantage: float = 0.0
    token_advantages: list[float] | None = None  # per completion token (OPD adds a KL term); else ``advantage``
    prompt_key: str = ""  # groups answers to the same prompt (per-group advantages)

    @property
    def tokens(self) -> list[int]:
        return self.prompt_ids + self.completion_ids

    def advantages(self) -> list[float]:
        return self.token_advantages if self.token_advantages is not None else [self.advantage] * len(self.mask)


def _last_user(messages: Sequence[Message]) -> int:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            return i
    return len(messages) - 1


def tokenize_turn(
    tokenizer: Any, messages: Sequence[Message], response: Message, tools: Sequence[dict[str, Any]] | None = None
) -> tuple[list[int], list[int], list[int]]:
    """(prompt ids, completion ids, mask) of a turn with the policy's chat template (see the module doc)."""
    convo = [*messages, {**response, "role": "assistant"}]
    u = _last_user(messages)

    def text(upto: int, generation_prompt: bool) -> str:
        return chat.render(tokenizer, convo[:upto], tools, generation_prompt=generation_prompt)

    prompt = text(u + 1, True)
    consumed = prompt
    completion: list[int] = []
    mask: list[int] = []
    i = u + 1
    while i < len(convo):
        pieces: list[tuple[str, int]] = []
        assistant = convo[i].get("role") == "assistant"
        if assistant:
            header = text(i, True)
            if not header.startswith(consumed):
                raise SampleError("the chat template is not prefix-stable")
            pieces.append((header[len(consumed) :], 0))
            consumed = header
            end = i + 1
        else:  # a run of tool results (and other messages) is one piece: templates close a run at its end
            end = i + 1
            while end < len(convo) and convo[end].get("role") != "assistant":
                end += 1
        full = text(end, False)
        if not full.startswith(consumed):
            raise SampleError("the chat template is not prefix-stable")
        pieces.append((full[len(consumed) :], 1 if assistant else 0))
        consumed = full
        for piece, m in pieces:
            ids = chat.ids(tokenizer, piece) if piece else []
            completion += ids
            mask += [m] * len(ids)
        i = end
    prompt_ids = chat.ids(tokenizer, prompt)
    if not any(mask) or not prompt_ids:
        raise SampleError("the answer (or the prompt) has no tokens")
    return prompt_ids, completion, mask


def build_sample(turn: Turn, sample: Sample, tokenizer: Any, db: AnyDatabase | None = None) -> TrainSample:
    """A :class:`TrainSample` for the buffer row ``sample`` of captured ``turn``."""
    if turn.response is None:
        raise SampleError(f"turn {turn.turn_id} has no answer")
    single_step = _last_user(turn.messages) == len(turn.messages) - 1
    rec = None
    if single_step and db is not None:
        rec = tokens.lookup(db, tokens.response_key(turn.response.get("content"), turn.response.get("tool_calls")))
    prompt_key = tokens.response_key(
        repr([(m.get("role"), message_text(m)) for m in turn.messages])
        + (json.dumps(turn.tools, sort_keys=True, default=str) if turn.tools else "")
    )
    prompt_ids, completion_ids, mask = tokenize_turn(tokenizer, turn.messages, turn.response, turn.tools)
    logprobs = None
    if (
        rec is not None
        and rec.prompt_ids
        == prompt_ids  # else redaction changed the prompt: its secrets stay out, and so do the logprobs
        and rec.logprobs is not None
        and len(rec.logprobs) == len(rec.response_ids) > 0
    ):
        completion_ids, mask, logprobs = list(rec.response_ids), [1] * len(rec.response_ids), list(rec.logprobs)
    return TrainSample(
        turn_id=turn.turn_id,
        prompt_ids=prompt_ids,
        completion_ids=completion_ids,
        mask=mask,
        logprobs=logprobs,
        reward=sample.reward,
        generation=sample.skill_generation,
        prompt_key=prompt_key,
    )
