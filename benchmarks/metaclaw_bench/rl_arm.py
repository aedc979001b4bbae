"""The slow loop in ``bench workday``'s ``skills+rl`` arm: the agent's model is the served trainable policy
(``metaclaw/policy``), its turns are judged, and in the user's away time between two days the trainer runs
on that day's fresh samples and hot-swaps the policy, so day *n+1* is answered by the new LoRA weights.

The away time is the bench's to play: the arm runs in ``auto`` mode with no away signal (no sleep window, no
idle detector), so the plugin's own scheduler never opens a window, and :meth:`SlowLoop.away` trains instead.
It judges and reviews the day's turns and trains on the samples *before* the day's evolution runs: a new skill
bumps the skill generation, which (by design) makes the samples gathered under the old skills stale.

Offline the policy is a tiny random model built in-process and the judge is scripted, so the arm's accuracy is
meaningless: such a run measures the slow loop's plumbing (samples, steps, the swap), never a model's score.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .scripted_evolver import ScriptedEvolver

if TYPE_CHECKING:
    from metaclaw_plugin.plugin import MetaClawPlugin

TINY = "tiny"
TINY_CONTEXT = 8192  # tokens: the agent's prompt (tools, skills, the day's conversation) in the tiny BPE
RL_NOTE = (
    "NOT A MODEL'S SCORE: the skills+rl agent is a tiny random model built in-process, judged by a scripted "
    "judge; its accuracy is meaningless. This arm measures the slow loop's plumbing (captured turns become "
    "samples, a training step between days, the hot swap to the new LoRA weights), not a model's score."
)
JUDGE_RULE = (
    "the scripted judge scores a reply 1 when it repeats a word (4+ letters) of the instruction, else 0 "
    "(a fixed rule, never a model)"
)
_WORD = re.compile(r"[a-z]{4,}")


def scripted_judge(body: dict[str, Any]) -> str:
    """The judge's verdict by :data:`JUDGE_RULE`, from the turn document in the judge prompt."""
    user = str(body["messages"][-1].get("content", ""))
    try:
        doc = json.loads(user.split("```json\n", 1)[1].rsplit("\n```", 1)[0])
    except (IndexError, ValueError):
        return "Score: 0"
    asked = set(_WORD.findall(str(doc.get("instruction", "")).lower()))
    said = set(_WORD.findall(str(doc.get("response", "")).lower()))
    return f"(scripted judge) Score: {1 if asked & said else 0}"


class ScriptedLearners(ScriptedEvolver):
    """The offline upstream's script: the scripted evolver, and the scripted judge for judge prompts."""

    def __call__(self, body: dict[str, Any]) -> Any:
        if "strict reviewer" in str(body["messages"][0].get("content", "")):
            return scripted_judge(body)
        return super().__call__(body)


def base_model(spec: str | None, work: Path) -> str:
    """The policy's base model: a local folder or a packaged name as given, else (``None``/``tiny``) the tiny
    random model, built once under ``work``."""
    if spec not in (None, TINY):
        return str(spec)
    folder = work / "tiny-policy"
    if not (folder / "config.json").is_file():
        from metaclaw_plugin.devtools.tinymodel import build_tiny_model

        build_tiny_model(folder, seed=0, context=TINY_CONTEXT)
    return str(folder)


def rl_settings(base: str, judge: dict[str, Any]) -> dict[str, Any]:
    """The plugin settings the arm adds to the skills arm's: the policy, the trainer, no away signal."""
    out: dict[str, Any] = {
        "mode": "auto",
        "scheduler": {"sleep_enabled": False, "idle_sources": [], "calendar_enabled": False},
        # A full checkpoint after each day's step, so that --resume continues the trainer where the served LoRA weights
        # are.
        # The day is one batch of the day's requests, each answered once, and the trainer has no scorer wired to
        # resample groups (training.group_size): its advantages are over the day (batch).
        "training": {
            "base_model": base,
            "backend": "local",
            "micro_batch_size": 2,
            "checkpoint_every": 1,
            "advantage": "batch",
        },
        "serving": {"poll_interval": 60},
        "reward": {"enabled": True, "votes": 1, "retries": 0, **judge},
    }
    return out


class SlowLoop:
    """The served policy of one plugin home, as a LangChain chat model, and the trainer of its away time."""

    def __init__(self, plugin: MetaClawPlugin, *, max_tokens: int, seed: int = 0):
        from metaclaw_langchain import PolicyChatModel
        from metaclaw_plugin.serving import from_settings

        self.plugin = plugin
        self.policy = from_settings(plugin.settings)
        self.policy.start()
        self.policy.wait_ready(600)
        self.model = PolicyChatModel(policy=self.policy, max_tokens=max_tokens, seed=seed)
        self._trainer: Any = None
        self._swaps: list[Future[Any]] = []
        self.weights_seen: list[str] = []  # the weights label of each model reply, in order

    def note(self, message: Any) -> None:
        w = (getattr(message, "response_metadata", None) or {}).get("metaclaw_weights")
        if w:
            self.weights_seen.append(str(w))

    def take_weights(self) -> list[str]:
        """The distinct weights that answered since the last call, in order of first use."""
        out = list(dict.fromkeys(self.weights_seen))
        self.weights_seen.clear()
        return out

    def _judged(self, fl: Any, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.plugin.flush(10)
            fl.tick(force=True, only=("judge",))
            if not fl.status()["queues"]["judge"].get("pending"):
                break
        fl.tick(force=True, only=("reviews",))

    def away(self, end_session: Callable[[], None]) -> dict[str, Any]:
        """The user's away time after a day: end its session, judge and review its turns, train on the fresh
        samples, and wait for the policy to answer from the new LoRA weights. No background tick runs meanwhile
        (it would evolve first and make the samples stale); evolution runs after, as the caller drains."""
        from metaclaw_plugin.training.runtime import build_trainer
        from metaclaw_plugin.training.trainer import last_steps

        fl = self.plugin.learning
        assert fl is not None, "the skills+rl arm needs the plugin's learning loop"
        t0 = time.perf_counter()
        with fl.held():
            end_session()
            self._judged(fl)
            if self._trainer is None:
                publish = lambda ref: self._swaps.append(self.policy.swap(ref))  # noqa: E731
                self._trainer = build_trainer(self.plugin.settings, publish=publish)
            fresh = self._trainer.buffer.fresh_count()
            # One step on all of the day's fresh samples (the batch is the day), before evolution makes them stale.
            self._trainer.options = replace(self._trainer.options, batch_size=max(1, fresh))
            report = self._trainer.run(lambda: True, max_steps=1)
            steps = [r for r in last_steps(self._trainer.db) if r["step"] == report.step] if report.steps else []
        for f in self._swaps:
            f.result(300)
        self._swaps.clear()
        cur = self.policy.current
        return {
            "fresh_samples": fresh,
            "steps": report.steps,
            "skipped_batches": report.skipped_batches,  # no signal (one reward for every sample): not applied
            "trainer_step": report.step,
            "samples_used": report.samples_used,
            "samples_dropped": report.samples_dropped,
            "samples_left": self._trainer.buffer.fresh_count(),
            "stop_reason": report.reason,
            "loss": report.results[-1].loss if report.results else None,
            "mean_reward": steps[0]["mean_reward"] if steps else None,
            "weights_after": cur.label if cur is not None else None,
            "seconds": round(time.perf_counter() - t0, 2),
        }

    def close(self) -> None:
        self.policy.close()
