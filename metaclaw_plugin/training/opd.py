"""On-policy distillation (OPD): a teacher's logprobs for the student's own tokens add a reverse-KL term.

For each answer token t the student sampled, ``A_t = A - kl_coef * (log p_student(t) - log p_teacher(t))``:
tokens the teacher finds unlikely are pushed down, as in on-policy distillation. The teacher is any
OpenAI-compatible ``/v1/completions`` endpoint that scores a prompt given as token ids with
``echo: true, max_tokens: 0, logprobs: 1`` (vLLM does), so teacher and student must share the tokenizer.

Only samples with the student's behaviour logprobs (answers the served policy sampled) get the term: for
the others the student's logprob of its tokens is not known when the batch is built. A teacher call that
fails leaves the batch's advantages as they were (fail open, logged, counted).
"""

from __future__ import annotations

import json
import logging
import urllib.request
from typing import Any

from ..config import OPDSettings
from .samples import TrainSample

log = logging.getLogger(__name__)


class Teacher:
    def __init__(self, settings: OPDSettings):
        if not settings.teacher_model or not settings.api_base:
            raise ValueError("training.opd needs teacher_model and api_base")
        self.settings = settings
        self.failures = 0

    def logprobs(self, token_ids: list[int]) -> list[float | None]:
        """The teacher's logprob of each token given the ones before it (None for the first)."""
        body = {
            "model": self.settings.teacher_model,
            "prompt": token_ids,
            "echo": True,
            "max_tokens": 0,
            "logprobs": 1,
            "temperature": 0,
        }
        req = urllib.request.Request(
            str(self.settings.api_base).rstrip("/") + "/completions",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"}
            | ({"Authorization": f"Bearer {self.settings.api_key}"} if self.settings.api_key else {}),
        )
        with urllib.request.urlopen(req, timeout=self.settings.timeout) as resp:
            data: dict[str, Any] = json.loads(resp.read())
        values = data["choices"][0]["logprobs"]["token_logprobs"]
        if len(values) != len(token_ids):
            raise ValueError(f"the teacher scored {len(values)} tokens of {len(token_ids)}")
        return values

    def __call__(self, samples: list[TrainSample]) -> None:
        for s in samples:
            if s.logprobs is None:
                continue
            try:
                teacher = self.logprobs(s.tokens)[len(s.prompt_ids) :]
            except Exception:
                self.failures += 1
                log.warning("OPD teacher call failed for %s; no KL term", s.turn_id, exc_info=True)
                continue
            s.token_advantages = [
                (s.advantage - self.settings.kl_coef * (student - t)) * m if t is not None else s.advantage * m
                for student, t, m in zip(s.logprobs, teacher, s.mask)
            ]
