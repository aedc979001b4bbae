"""The served policy's answers are the trainer's on-policy samples (issue 31): logprobs recorded with their sampling
temperature and recomputed at it (the ratio before any update is exactly 1), top_p sampled for real, records keyed
by prompt as well as answer, and each step of a multi-step tool turn trained once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

from training_support import capture  # noqa: E402

from metaclaw_plugin import Settings  # noqa: E402
from metaclaw_plugin.serving import ServedPolicy  # noqa: E402
from metaclaw_plugin.store import Database  # noqa: E402
from metaclaw_plugin.training import tokens  # noqa: E402
from metaclaw_plugin.training.runtime import build_trainer  # noqa: E402
from metaclaw_plugin.training.samples import tokenize_turn  # noqa: E402

MSGS = [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": "Deploy the app"}]


@pytest.fixture()
def served(policy_base: Path, tmp_path: Path) -> Any:
    db = Database(tmp_path / "metaclaw.db")
    p = ServedPolicy(str(policy_base), db=db, device="cpu", max_new_tokens=12, poll_interval=None)
    p.wait_ready(60)
    yield p
    p.close()


@pytest.mark.parametrize(("temperature", "top_p"), [(0.7, 1.0), (1.3, 0.9), (0.0, 1.0)])
def test_the_ratio_before_any_update_is_exactly_one(
    served: ServedPolicy, policy_base: Path, tmp_path: Path, temperature: float, top_p: float
) -> None:
    """The policy samples at T (and top_p), the trainer recomputes the logprobs at the recorded T with the same
    weights (a fresh LoRA changes nothing): every token's ratio is 1. At T=1 on main it was exp(+-0.3) and more."""
    gens = [served.generate(MSGS, temperature=temperature, top_p=top_p, seed=s) for s in (1, 2)]
    rec = tokens.lookup(served.db, tokens.response_key(gens[0].content), gens[0].prompt_ids)  # type: ignore[arg-type]
    assert rec is not None and rec.temperature == (temperature or 1.0) and rec.top_p == top_p
    capture(tmp_path / "metaclaw.db", [(MSGS, g.content, float(i)) for i, g in enumerate(gens)])
    settings = Settings(home=tmp_path, training={"base_model": str(policy_base), "device": "cpu", "batch_size": 2})
    trainer = build_trainer(settings)
    samples, unusable = trainer.build(trainer.buffer.drain(2))
    assert unusable == [] and all(s.logprobs is not None for s in samples)
    backend: Any = trainer.backend
    with torch.no_grad():
        logp, old, _, mask, known = backend.token_logprobs(samples)
    assert bool(known.all())
    ratio = ((logp - old) * mask).exp()
    assert float((ratio - 1).abs().max()) < 1e-4, ratio


def test_top_p_draws_from_the_nucleus(served: ServedPolicy) -> None:
    """A nucleus of almost no mass holds only the most likely token: sampling is greedy, whatever the seed."""
    greedy = served.generate(MSGS, temperature=0)
    for seed in (1, 2, 3):
        assert served.generate(MSGS, temperature=1.5, top_p=1e-6, seed=seed).response_ids == greedy.response_ids
    assert served.generate(MSGS, top_p=1.0, seed=1).response_ids != greedy.response_ids


def test_records_are_keyed_by_prompt_as_well_as_answer(tmp_path: Path) -> None:
    """Two prompts answered with the same text keep two records; each turn finds its own."""
    db = Database(tmp_path / "m.db")
    key = tokens.response_key("yes")
    tokens.record(db, key, tokens.TokenRecord([1, 2], [3], [-0.5], temperature=0.7))
    tokens.record(db, key, tokens.TokenRecord([1, 9], [3], [-0.9]))
    first, second = tokens.lookup(db, key, [1, 2]), tokens.lookup(db, key, [1, 9])
    assert first is not None and first.logprobs == [-0.5] and first.temperature == 0.7
    assert second is not None and second.logprobs == [-0.9] and second.temperature == 1.0
    assert tokens.lookup(db, key, [1, 3]) is None


def test_each_step_of_a_tool_turn_is_trained_once(policy_base: Path) -> None:
    """The final answer of a multi-step turn is its completion; the earlier steps are prompt (mask 0), since each
    was captured and trained as a turn of its own."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(policy_base)
    steps = [*MSGS, {"role": "assistant", "content": "checking"}, {"role": "tool", "content": "status: green"}]
    p, c, m = tokenize_turn(tok, steps, {"role": "assistant", "content": "done"})
    assert tok.decode(c) == "done<|im_end|>\n" and set(m) == {1}
    assert "checking" in tok.decode(p) and "status: green" in tok.decode(p)
