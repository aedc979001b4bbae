"""Advantages and the three policy losses against hand-computed values on a 3-token example; with every
ratio 1, the importance-sampling gradient is the REINFORCE gradient (torch autograd)."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from metaclaw_plugin.training.advantages import group_advantages, grpo_advantages  # noqa: E402
from metaclaw_plugin.training.losses import behaviour_logprobs, policy_loss  # noqa: E402

# The example: the trained policy's logprobs, the behaviour policy's, and per-token advantages.
LOGP = [-1.0, -0.5, -2.0]
OLD = [-1.2, -0.5, -1.0]
ADV = [2.0, -1.0, 0.5]
# ratios exp(logp - old) = exp(0.2), exp(0), exp(-1) = 1.2214028, 1, 0.3678794


def _t(values: list[float], grad: bool = False):
    return torch.tensor([values], dtype=torch.float64, requires_grad=grad)


def _loss(name: str, mask: list[float] = (1.0, 1.0, 1.0), norm: float = 3.0) -> float:  # type: ignore[assignment]
    return float(policy_loss(name, _t(LOGP), _t(OLD), _t(ADV), _t(list(mask)), norm))


def test_importance_sampling_by_hand():
    # -(1.2214028 * 2) - (1 * -1) - (0.3678794 * 0.5) = -2.4428055 + 1 - 0.1839397 = -1.6267452; / 3 tokens
    assert _loss("importance_sampling") == pytest.approx(-0.5422484, abs=1e-6)
    # the third token masked out, two trained tokens: (-2.4428055 + 1) / 2
    assert _loss("importance_sampling", (1.0, 1.0, 0.0), 2.0) == pytest.approx(-0.7214028, abs=1e-6)


def test_ppo_by_hand():
    # clip(r, 0.8, 1.2) = 1.2, 1, 0.8; min(r*A, clip*A) = min(2.4428, 2.4) = 2.4, min(-1, -1) = -1,
    # min(0.1839, 0.4) = 0.1839397; loss = -(2.4 - 1 + 0.1839397) / 3
    assert _loss("ppo") == pytest.approx(-0.5279799, abs=1e-6)


def test_cispo_by_hand():
    # weight clip(r, 0.8, 1.2) = 1.2, 1, 0.8 (no gradient); -w * A * logp = -(1.2*2*-1) - (1*-1*-0.5) - (0.8*0.5*-2)
    # = 2.4 - 0.5 + 0.8 = 2.7; / 3
    assert _loss("cispo") == pytest.approx(0.9, abs=1e-9)


def test_gradients_by_hand():
    logp = _t(LOGP, grad=True)
    policy_loss("importance_sampling", logp, _t(OLD), _t(ADV), _t([1.0, 1.0, 1.0]), 3.0).backward()
    # d/dlogp of -r*A/3 is -r*A/3
    want = [-math.exp(0.2) * 2 / 3, 1 / 3, -math.exp(-1.0) * 0.5 / 3]
    assert logp.grad[0].tolist() == pytest.approx(want, abs=1e-9)
    logp = _t(LOGP, grad=True)
    policy_loss("ppo", logp, _t(OLD), _t(ADV), _t([1.0, 1.0, 1.0]), 3.0).backward()
    # token 1 is clipped (constant 2.4): no gradient; tokens 2 and 3 take the unclipped branch
    assert logp.grad[0].tolist() == pytest.approx([0.0, 1 / 3, -math.exp(-1.0) * 0.5 / 3], abs=1e-9)
    logp = _t(LOGP, grad=True)
    policy_loss("cispo", logp, _t(OLD), _t(ADV), _t([1.0, 1.0, 1.0]), 3.0).backward()
    assert logp.grad[0].tolist() == pytest.approx([-1.2 * 2 / 3, 1 / 3, -0.8 * 0.5 / 3], abs=1e-9)


def test_unknown_loss_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown loss 'grpo'"):
        _loss("grpo")


@pytest.mark.parametrize("name", ["importance_sampling", "ppo", "cispo"])
def test_all_ratios_one_give_the_reinforce_gradient(name: str):
    """A tiny softmax policy: with the behaviour logprobs equal to the policy's own (ratio 1), every loss's
    gradient equals REINFORCE's, -sum(A * grad logp) / n; and so do samples whose logprobs are missing."""
    torch.manual_seed(0)
    weights = torch.randn(4, 6, dtype=torch.float64, requires_grad=True)
    features = torch.randn(2, 3, 4, dtype=torch.float64)
    targets = torch.tensor([[1, 4, 2], [0, 5, 3]])
    adv = torch.tensor([[1.5, 1.5, 1.5], [-0.7, -0.7, -0.7]], dtype=torch.float64)
    mask = torch.tensor([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]], dtype=torch.float64)

    def logp():
        return (features @ weights).log_softmax(-1).gather(-1, targets[..., None]).squeeze(-1)

    lp = logp()
    policy_loss(name, lp, lp.detach(), adv, mask, 5.0).backward()
    ours = weights.grad.clone()
    weights.grad = None
    (-(adv * logp() * mask).sum() / 5.0).backward()
    reinforce = weights.grad.clone()
    assert torch.allclose(ours, reinforce, atol=1e-12) and reinforce.abs().sum() > 0
    weights.grad = None
    lp = logp()
    unknown = torch.tensor([False, False])  # no behaviour logprobs: the on-policy form
    policy_loss(name, lp, behaviour_logprobs(lp, torch.full_like(lp, -9.0), unknown), adv, mask, 5.0).backward()
    assert torch.allclose(weights.grad, reinforce, atol=1e-12)


def test_advantages_per_batch_and_per_group():
    assert grpo_advantages([1.0, -1.0, 1.0, -1.0]) == pytest.approx([1.0, -1.0, 1.0, -1.0])
    assert grpo_advantages([0.5, 0.5]) == [0.0, 0.0]
    # groups a: rewards 1, 0 -> +1, -1; b: 3, 3 -> 0, 0; c: one answer, nothing to compare -> 0
    got = group_advantages([1.0, 3.0, 0.0, 3.0, 7.0], ["a", "b", "a", "b", "c"])
    assert got == pytest.approx([1.0, 0.0, -1.0, 0.0, 0.0])
    with pytest.raises(ValueError):
        group_advantages([1.0], [])
