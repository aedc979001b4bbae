"""Samples RL can use: token ids, the behaviour policy's logprobs and a loss mask, built from captured turns.

A buffer row (:class:`~metaclaw_plugin.types.Sample`) names a captured turn and its reward. The turn's
messages are stored as sent, the injected skill block included, with the request's ``tools``; the policy's
chat template applied to them by :func:`.chat.render` (the one rendering the served policy also samples
from) gives the prompt the policy saw, tool definitions, earlier tool calls and tool results included.

* **The completion is the turn's own answer**, the prompt everything before it. In a multi-step tool turn
  (the agent called tools after the last user message, then answered) each model call is a captured turn of
  its own; the earlier steps are in this turn's prompt (tool results included), never trained again here.
* **Behaviour logprobs**: if the served policy gave this answer to this prompt, its token record
  (:mod:`.tokens`, looked up by the answer and the prompt ids rebuilt here) supplies the response ids and
  logprobs exactly as sampled (a tool call as the policy wrote it) and the temperature they were computed
  at. The stored prompt is redacted; a record of a prompt that differs (a secret was redacted) is not
  found, so no redacted text reaches a training payload and no logprob conditioned on another prompt is
  used. Otherwise ``logprobs`` is ``None`` (another model answered).

``logprobs is None`` means "no importance ratio": such samples are dropped, or trained in the on-policy
REINFORCE form (see :mod:`.losses`), as ``training.off_policy`` says. Chat-template headers (``<|im_start|>assistant``) are prompt format,
mask 0. Tool calls are trained as the template renders them (natively, or in the fallback format of
:mod:`.chat`).
"""

from __future__ import annotations

import re
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
    temperature: float = 1.0  # the behaviour logprobs are of softmax(logits / temperature): recomputed so
    sampled_step: int | None = None  # the trainer step of the weights that sampled it (None: base or unknown)
    prompt_key: str = ""  # the sample's group for per-group advantages (:func:`group_key`)
    group: str = ""  # the group its advantage was normalised in ("": the whole batch)
    tenant: str = ""  # the tenant of its prompt
    resampled: bool = False  # an answer the trainer sampled for its group (:mod:`.groups`), not a captured turn

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


def group_key(messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None) -> str:
    """The group of a turn for ``training.advantage: group``: its last user message, normalised (case, spacing,
    and every run of digits as ``#``), with the names of its tools.

    Keyed by the whole prompt, no two turns ever grouped (the system prompt changes with the injected skills and
    the history with the session), so every group had one member and no advantage. The last user message is
    the request; digits are what varies between instances of one task ("convert 3 km", "convert 12 km")."""
    text = message_text(messages[_last_user(messages)]) if messages else ""
    norm = re.sub(r"\d+", "#", " ".join(text.lower().split()))
    names = sorted(str((t.get("function") or {}).get("name")) for t in tools or [] if isinstance(t, dict))
    return tokens.response_key(norm + ("\x00" + ",".join(names) if names else ""))


def tokenize_turn(
    tokenizer: Any, messages: Sequence[Message], response: Message, tools: Sequence[dict[str, Any]] | None = None
) -> tuple[list[int], list[int], list[int]]:
    """(prompt ids, completion ids, mask) of a turn with the policy's chat template: the prompt is every message
    with the generation prompt (what the policy answered from), the completion the answer (see the module doc)."""
    convo = [*messages, {**response, "role": "assistant"}]
    prompt = chat.render(tokenizer, messages, tools, generation_prompt=True)
    full = chat.render(tokenizer, convo, tools, generation_prompt=False)
    if not full.startswith(prompt):
        raise SampleError("the chat template is not prefix-stable")
    completion = chat.ids(tokenizer, full[len(prompt) :])
    prompt_ids = chat.ids(tokenizer, prompt)
    if not completion or not prompt_ids:
        raise SampleError("the answer (or the prompt) has no tokens")
    return prompt_ids, completion, [1] * len(completion)


def build_sample(turn: Turn, sample: Sample, tokenizer: Any, db: AnyDatabase | None = None) -> TrainSample:
    """A :class:`TrainSample` for the buffer row ``sample`` of captured ``turn``."""
    if turn.response is None:
        raise SampleError(f"turn {turn.turn_id} has no answer")
    prompt_key = group_key(turn.messages, turn.tools)
    prompt_ids, completion_ids, mask = tokenize_turn(tokenizer, turn.messages, turn.response, turn.tools)
    rec = None
    if db is not None:
        answer = tokens.response_key(turn.response.get("content"), turn.response.get("tool_calls"))
        rec = tokens.lookup(db, answer, prompt_ids)
    logprobs, temperature, sampled_step = None, 1.0, None
    if (
        rec is not None
        and rec.prompt_ids
        == prompt_ids  # else redaction changed the prompt: its secrets stay out, and so do the logprobs
        and rec.logprobs is not None
        and len(rec.logprobs) == len(rec.response_ids) > 0
    ):
        completion_ids, mask, logprobs = list(rec.response_ids), [1] * len(rec.response_ids), list(rec.logprobs)
        temperature, sampled_step = rec.temperature, rec.step
    return TrainSample(
        turn_id=turn.turn_id,
        prompt_ids=prompt_ids,
        completion_ids=completion_ids,
        mask=mask,
        logprobs=logprobs,
        reward=sample.reward,
        generation=sample.skill_generation,
        prompt_key=prompt_key,
        tenant=sample.tenant,
        temperature=temperature,
        sampled_step=sampled_step,
    )
