"""The slow loop end to end on the tiny model: requests answered by the served policy -> captured turns ->
judged (a scripted local judge) -> query samples in the buffer -> one Trainer step (real PEFT) -> the trainer
publishes -> the next answer is sampled from the new adapter. The samples carry the served policy's own
behaviour logprobs (its token records matched the captured answers)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from waiting import wait_for

from metaclaw_plugin import MetaClawPlugin, Settings, TurnContext
from metaclaw_plugin.devtools.upstream import Upstream
from metaclaw_plugin.serving import from_settings
from metaclaw_plugin.training.runtime import build_trainer
from metaclaw_plugin.training.trainer import last_steps
from metaclaw_plugin.training.weights import latest


def judge(body: dict[str, Any]) -> str:
    if "strict reviewer" in body["messages"][0]["content"]:
        return "Score: 1" if "GOOD-" in json.dumps(body) else "Score: -1"
    return "not a judge call"


def test_requests_to_the_policy_train_it_and_the_next_answer_uses_the_new_adapter(
    home: Path, policy_base: Path
) -> None:
    with Upstream(script=judge) as up:
        s = Settings(
            home=home,
            mode="rl",
            # the scripted judge scores the request, not the answer (GOOD-n +1, BAD-n -1): per request the rewards
            # are equal, so the plumbing is trained on the batch's baseline
            training={
                "base_model": str(policy_base),
                "batch_size": 4,
                "micro_batch_size": 2,
                "learning_rate": 2e-3,
                "advantage": "batch",
            },
            serving={"max_new_tokens": 8, "poll_interval": 60},
            reward={"model": "openai/judge", "api_base": up.url, "api_key": "x", "votes": 1, "retries": 0},
            evolution={"enabled": False},  # failed turns stay query samples: the batch has both rewards
            injection={"max_injected_tokens": 120, "convention_tokens": 0},  # the tiny model's context is short
        )
        plugin = MetaClawPlugin(s).start()
        policy = from_settings(s)
        try:
            policy.wait_ready(60)
            for i, tag in enumerate(["GOOD-1", "BAD-1", "GOOD-2", "BAD-2"]):
                ctx = TurnContext(f"rl-{i}", host="test")
                messages = plugin.on_request(ctx, [{"role": "user", "content": f"Report the deploy status ({tag})"}])
                g = policy.generate(messages, seed=i)
                assert g.weights == "base"
                plugin.on_response(ctx, g.message())
                plugin.on_session_end(ctx)
            buffer = plugin.learning.buffer

            def four_fresh() -> bool:
                if buffer.fresh_count() >= 4:
                    return True
                plugin.flush(5)
                plugin.learning.wake()
                return False

            wait_for(four_fresh, 90, "four fresh samples", 0.1)
            assert buffer.fresh_count() == 4

            trainer = build_trainer(s, publish=policy.swap)
            report = trainer.run(lambda: True, max_steps=1)
            assert report.steps == 1 and report.samples_used == 4, report
            step = last_steps(trainer.db)[0]
            assert step["detail"]["behaviour_logprobs"] == 4  # every sample found the policy's token record
            assert step["mean_reward"] == 0.0 and step["success_rate"] == 0.5
            ref = latest(trainer.db)
            assert ref is not None and ref.step == 1 and step["weights"] == ref.path

            wait_for(lambda: policy.current.ref == ref, 60, "the policy on the new weights")
            nxt = policy.generate([{"role": "user", "content": "Report the deploy status (GOOD-3)"}], seed=0)
            assert nxt.weights == ref.path and nxt.step == 1
        finally:
            policy.close()
            plugin.stop()
