"""A step's passes are grouped by length within a token budget, and the local backend's output head runs on the
completion positions only: both bound a step's memory, and neither may change what the step computes."""

from __future__ import annotations

import random
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

from metaclaw_plugin.devtools.tinymodel import build_tiny_model  # noqa: E402
from metaclaw_plugin.training.backends import Hyper  # noqa: E402
from metaclaw_plugin.training.backends.local import LocalBackend  # noqa: E402
from metaclaw_plugin.training.samples import TrainSample, tokenize_turn  # noqa: E402
from metaclaw_plugin.training.trainer import micro_batches  # noqa: E402


def _sample(n_prompt: int, n_answer: int, i: int = 0) -> TrainSample:
    return TrainSample(str(i), [1] * n_prompt, [2] * n_answer, [1] * n_answer, None, 0.0, 0)


@pytest.mark.parametrize("seed", range(20))
def test_passes_hold_every_sample_once_within_both_bounds(seed: int) -> None:
    rng = random.Random(seed)
    samples = [_sample(rng.randrange(1, 900), rng.randrange(1, 64), i) for i in range(rng.randrange(1, 30))]
    size, budget = rng.randrange(1, 6), rng.randrange(16, 1500)
    passes = micro_batches(samples, size, budget)
    assert sorted(s.turn_id for p in passes for s in p) == sorted(s.turn_id for s in samples)
    for p in passes:
        assert 1 <= len(p) <= size
        width = max(len(s.tokens) for s in p)
        assert len(p) == 1 or len(p) * width <= budget  # only a lone sample may exceed the budget


def test_a_long_sample_goes_alone_and_short_ones_share_a_pass() -> None:
    short = [_sample(60, 30, i) for i in range(3)]
    long = _sample(821, 32, 9)
    passes = micro_batches([short[0], long, short[1], short[2]], 4, 2048)
    assert [[s.turn_id for s in p] for p in passes] == [["0", "1", "2"], ["9"]]


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> LocalBackend:
    tiny = build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", seed=0)
    return LocalBackend(str(tiny), tmp_path_factory.mktemp("out"), device="cpu", hyper=Hyper(kl_coef=0.05, seed=0))


def _varied(backend: LocalBackend) -> list[TrainSample]:
    """Turns whose prompts and answers differ in length, rewarded both ways, one at another temperature."""
    out = []
    for i, (words, answer, reward) in enumerate(
        [(3, "yes", 1.0), (40, "no it is not", -1.0), (12, "maybe so", 1.0), (80, "yes", -1.0)]
    ):
        prompt = [{"role": "user", "content": " ".join(f"word{j}" for j in range(words))}]
        p, c, m = tokenize_turn(backend.tokenizer, prompt, {"role": "assistant", "content": answer})
        out.append(
            TrainSample(str(i), p, c, m, [-1.5] * len(c), reward, 0, advantage=reward, temperature=0.7 if i else 1)
        )
    return out


def test_completion_logprobs_equal_the_whole_sequences(backend: LocalBackend) -> None:
    samples = _varied(backend)
    assert len({len(s.prompt_ids) for s in samples}) == len(samples)
    with torch.no_grad():
        logp, _, _, mask, _ = backend.token_logprobs(samples)
        for b, s in enumerate(samples):
            logits = backend.model(input_ids=torch.tensor([s.tokens])).logits[0, :-1].float() / s.temperature
            full = torch.log_softmax(logits, -1).gather(1, torch.tensor(s.tokens[1:])[:, None])[:, 0]
            start, n = len(s.prompt_ids) - 1, len(s.completion_ids)
            assert torch.allclose(logp[b, :n], full[start : start + n], atol=1e-4)
            assert float(mask[b, :n].sum()) == sum(s.mask) and float(mask[b, n:].sum()) == 0


def _grads(backend: LocalBackend, passes: list[list[TrainSample]], norm: float) -> list[Any]:
    backend.discard()
    for p in passes:
        backend.forward_backward(p, "ppo", norm)
    grads = [p.grad.clone() for p in backend.params]
    backend.discard()
    return grads


def test_grouping_by_length_leaves_the_gradient_as_it_was(backend: LocalBackend) -> None:
    """One padded pass in arrival order and passes by length within a small budget: the same gradient."""
    samples = _varied(backend)
    norm = float(sum(sum(s.mask) for s in samples))
    # a fresh LoRA's B matrices are 0, so most gradients are too: one step first gives every tensor a gradient
    backend.forward_backward(samples, "ppo", norm)
    backend.optim_step()
    passes = micro_batches(samples, 4, 2 * max(len(s.tokens) for s in samples))
    assert len(passes) > 1 and [s.turn_id for p in passes for s in p] != [s.turn_id for s in samples]
    together, grouped = _grads(backend, [samples], norm), _grads(backend, passes, norm)
    assert any(float(g.abs().max()) > 0 for g in together)
    for a, b in zip(together, grouped):
        assert torch.allclose(a, b, rtol=1e-4, atol=1e-7)
