"""Helpers for the served-policy tests: real PEFT adapters on the tiny model, and a model that is made to write
a given text (to test the tool-call parsing and its wire format, which a random tiny model never produces)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import torch

from metaclaw_plugin.devtools.adapters import random_adapter
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
    return random_adapter(base, out, seed=seed, step=step)


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


def wait_for(cond: Any, timeout: float = 20.0, step: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(step)
    raise AssertionError("condition not met in time")


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
