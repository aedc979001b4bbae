"""Samples RL can use: token ids, the behaviour policy's logprobs and a loss mask, built from captured turns.

A buffer row (:class:`~metaclaw_plugin.types.Sample`) names a captured turn and its reward. The turn's
messages are stored as sent, the injected skill block included, so the policy's chat template applied to
them gives the prompt the policy saw.

* **Single-step turn** (the answer follows the last user message directly): if the served policy gave
  this answer, its token record (:mod:`.tokens`, looked up by :func:`~.tokens.response_key`) supplies
  the response ids and behaviour logprobs exactly as sampled, provided its prompt ids equal those of the
  stored prompt. The stored prompt is redacted; a record whose prompt differs (a secret was redacted, or
  the host sent tools the template renders) is not used, so no redacted text reaches a training payload
  and no logprob conditioned on another prompt is used. Otherwise ``logprobs`` is ``None``.
* **Multi-step turn** (the agent called tools after the last user message, then answered): the completion
  is everything after the last user message: earlier assistant steps (mask 1), tool results (mask 0, the
  policy did not write them) and the final answer (mask 1). Only the final answer could have a token
  record, so behaviour logprobs for the whole completion are unknown: ``logprobs`` is ``None``.

``logprobs is None`` means "no importance ratio": the losses train such samples in the on-policy
REINFORCE form (see :mod:`.losses`). Chat-template headers (``<|im_start|>assistant``) are prompt format,
mask 0. Tool calls are trained as the template renders them (a template that drops them trains only the
text).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..store import AnyDatabase
from ..types import Message, Sample, Turn
from . import tokens


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


def _template(tokenizer: Any, messages: Sequence[Message], generation_prompt: bool) -> str:
    text = tokenizer.apply_chat_template(
        [{"role": m.get("role", "user"), "content": _text(m.get("content"))} for m in messages],
        tokenize=False,
        add_generation_prompt=generation_prompt,
    )
    return str(text)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts: keep the text ones
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return "" if content is None else str(content)


def _ids(tokenizer: Any, text: str) -> list[int]:
    return [int(t) for t in tokenizer(text, add_special_tokens=False)["input_ids"]]


def _last_user(messages: Sequence[Message]) -> int:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            return i
    return len(messages) - 1


def prompt_ids(tokenizer: Any, messages: Sequence[Message]) -> list[int]:
    """The ids of the prompt the policy answers ``messages`` from (chat template, generation prompt). A served
    policy that samples from exactly these ids records them, and its answers keep their logprobs as samples."""
    return _ids(tokenizer, _template(tokenizer, messages, True))


def tokenize_turn(
    tokenizer: Any, messages: Sequence[Message], response: Message
) -> tuple[list[int], list[int], list[int]]:
    """(prompt ids, completion ids, mask) of a turn with the policy's chat template (see the module doc)."""
    convo = [*messages, {**response, "role": "assistant"}]
    u = _last_user(messages)
    prompt = _template(tokenizer, convo[: u + 1], True)
    consumed = prompt
    completion: list[int] = []
    mask: list[int] = []
    for i in range(u + 1, len(convo)):
        pieces: list[tuple[str, int]] = []
        if convo[i].get("role") == "assistant":
            header = _template(tokenizer, convo[:i], True)
            if not header.startswith(consumed):
                raise SampleError("the chat template is not prefix-stable")
            pieces.append((header[len(consumed) :], 0))
            consumed = header
        full = _template(tokenizer, convo[: i + 1], False)
        if not full.startswith(consumed):
            raise SampleError("the chat template is not prefix-stable")
        pieces.append((full[len(consumed) :], 1 if convo[i].get("role") == "assistant" else 0))
        consumed = full
        for text, m in pieces:
            ids = _ids(tokenizer, text) if text else []
            completion += ids
            mask += [m] * len(ids)
    prompt_ids = _ids(tokenizer, prompt)
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
    prompt_key = tokens.response_key(repr([(m.get("role"), _text(m.get("content"))) for m in turn.messages]))
    prompt_ids, completion_ids, mask = tokenize_turn(tokenizer, turn.messages, turn.response)
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
