"""Helpers for the served-policy tests: real PEFT adapters on the tiny model, and a model that is made to write
a given text (to test the tool-call parsing and its wire format, which a random tiny model never produces)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from waiting import wait_for

from metaclaw_plugin.devtools.lora import random_lora
from metaclaw_plugin.serving import ServedPolicy, Weights
from metaclaw_plugin.training.weights import WeightsRef

TOOL_TEXT = 'Let me check.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


def make_adapter(base: Path, out: Path, *, seed: int, step: int = 1) -> WeightsRef:
    """A real LoRA adapter with random (non-zero) weights, saved with ``save_pretrained`` as the trainer does."""
    return random_lora(base, out, seed=seed, step=step)


class ForcedModel(torch.nn.Module):
    """Wraps a causal LM and adds a large bonus to the logit of the next scripted token, so sampling writes
    ``ids`` exactly (then the inner model's own choice). Single request at a time."""

    def __init__(self, inner: Any, ids: list[int]) -> None:
        super().__init__()
        self.inner = inner
        self.ids = ids
        self.pos = 0

    def forward(self, input_ids: Any, **kw: Any) -> Any:
        if input_ids.shape[1] > 1:
            self.pos = 0  # a new prompt
        out = self.inner(input_ids=input_ids, **kw)
        if self.pos < len(self.ids):
            out.logits[0, -1, self.ids[self.pos]] += 1e4
        self.pos += 1
        return out


def force_output(policy: ServedPolicy, text: str) -> None:
    """Make ``policy`` answer ``text`` followed by its stop token (the test's stand-in for a tool-trained model)."""
    w = policy.wait_ready()
    tok = policy._tokenizer
    ids = tok.encode(text, add_special_tokens=False) + [tok.eos_token_id]
    policy._current = Weights(ForcedModel(w.model, ids), None, "forced")


class ServerThread:
    """The sidecar's real app (``create_app``) under uvicorn on a free loopback port, in a thread."""

    def __init__(self, app: Any, port: int) -> None:
        import threading

        import uvicorn

        self.url = f"http://127.0.0.1:{port}"
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> ServerThread:
        self.thread.start()
        wait_for(lambda: self.server.started, 30)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self.thread.join(15)


class _Done:
    def __init__(self, value: Any) -> None:
        self.value = value

    def result(self, timeout: float | None = None) -> Any:
        return self.value


class FakeSamplingClient:
    """The methods of ``tinker.SamplingClient`` the served policy calls (the service cannot be reached here). It
    checks that requests are valid SDK types and answers ``"answer from <weights>"`` with fixed logprobs."""

    def __init__(self, tokenizer: Any, weights: str, requests: list[tuple[str, Any, Any]]) -> None:
        self.tokenizer = tokenizer
        self.weights = weights
        self.requests = requests

    def sample(self, prompt: Any, num_samples: int, sampling_params: Any) -> _Done:
        import numpy as np
        from tinker import types

        assert isinstance(prompt, types.ModelInput) and isinstance(sampling_params, types.SamplingParams)
        assert num_samples == 1
        self.requests.append((self.weights, prompt.to_ints(), sampling_params))
        ids = self.tokenizer.encode(f"answer from {self.weights}", add_special_tokens=False)
        ids = ids[: sampling_params.max_tokens - 1] + [self.tokenizer.eos_token_id]
        seq = types.SampledSequence(
            stop_reason="stop",
            sequence_id="seq-1",
            tokens_np=np.array(ids, dtype=np.int64),
            logprobs_np=np.array([-0.25] * len(ids), dtype=np.float32),
        )
        return _Done(types.SampleResponse(sequences=[seq]))

    def get_tokenizer(self) -> Any:
        return self.tokenizer


class FakeSamplingService:
    """``tinker.ServiceClient.create_sampling_client``: a client per base model or sampler path."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.created: list[dict[str, str | None]] = []
        self.requests: list[tuple[str, Any, Any]] = []

    def create_sampling_client(self, model_path: str | None = None, base_model: str | None = None) -> _Done:
        assert (model_path is None) != (base_model is None)
        self.created.append({"model_path": model_path, "base_model": base_model})
        return _Done(FakeSamplingClient(self.tokenizer, model_path or f"base {base_model}", self.requests))
