"""The policy-gradient losses, per token, in the forms Tinker names them (``importance_sampling``, ``ppo``, ``cispo``).

Every loss takes, for each completion token: the trained policy's log-probability ``logp`` (with a
gradient), the behaviour policy's ``old_logp`` (the logprob the served policy had when it sampled the
token), the token's advantage and a loss mask, and returns one scalar: the masked per-token losses summed
and divided by ``norm`` (the batch's count of trained tokens, so micro-batches add up to the batch mean).

* ``importance_sampling`` (default): ``-ratio * A`` with ``ratio = exp(logp - old_logp)``; the gradient
  is ``-ratio * A * grad logp``, REINFORCE corrected for the policy having moved since it sampled.
* ``ppo``: the clipped surrogate ``-min(ratio * A, clip(ratio, low, high) * A)``.
* ``cispo``: ``-sg(clip(ratio, low, high)) * A * logp``; the weight is clipped and detached, so every
  token keeps a gradient (CISPO, MiniMax-M1).

Samples without behaviour logprobs (the policy did not sample them, so no ratio is valid) are trained in
the on-policy REINFORCE form: :func:`behaviour_logprobs` puts the trained policy's own detached logprobs in
their place, the ratio is exactly 1 with no gradient through it, and all three losses reduce to
``-A * logp``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

LossName = Literal["importance_sampling", "ppo", "cispo"]
LOSSES: tuple[LossName, ...] = ("importance_sampling", "ppo", "cispo")
CLIP_LOW = 0.8  # ratio bounds for ppo and cispo (Tinker's clip_low_threshold / clip_high_threshold)
CLIP_HIGH = 1.2


def behaviour_logprobs(logp: Any, old_logp: Any, known: Any) -> Any:
    """``old_logp`` where the behaviour logprob is known (``known``: bool per sample), else ``logp`` detached."""
    return old_logp.where(known[:, None], logp.detach())


def importance_sampling(logp: Any, old_logp: Any, advantages: Any) -> Any:
    ratio = (logp - old_logp).exp()
    return -ratio * advantages


def ppo(logp: Any, old_logp: Any, advantages: Any, low: float = CLIP_LOW, high: float = CLIP_HIGH) -> Any:
    ratio = (logp - old_logp).exp()
    unclipped = ratio * advantages
    clipped = ratio.clamp(low, high) * advantages
    return -unclipped.minimum(clipped)


def cispo(logp: Any, old_logp: Any, advantages: Any, low: float = CLIP_LOW, high: float = CLIP_HIGH) -> Any:
    weight = (logp - old_logp).exp().clamp(low, high).detach()
    return -weight * advantages * logp


PER_TOKEN: dict[str, Callable[..., Any]] = {"importance_sampling": importance_sampling, "ppo": ppo, "cispo": cispo}


def policy_loss(
    name: str,
    logp: Any,
    old_logp: Any,
    advantages: Any,
    mask: Any,
    norm: float,
    low: float = CLIP_LOW,
    high: float = CLIP_HIGH,
) -> Any:
    """The scalar loss of ``name``: per-token losses, masked, summed, divided by ``norm``."""
    try:
        fn = PER_TOKEN[name]
    except KeyError:
        raise ValueError(f"unknown loss {name!r}; choose one of {', '.join(LOSSES)}") from None
    per_token = (
        fn(logp, old_logp, advantages) if name == "importance_sampling" else fn(logp, old_logp, advantages, low, high)
    )
    return (per_token * mask).sum() / max(norm, 1.0)


def kl_to_reference(logp: Any, ref_logp: Any) -> Any:
    """Per token, the k3 estimator of KL(policy || reference) on the policy's own tokens:
    ``exp(ref - logp) - (ref - logp) - 1``; never negative, 0 where the two agree, with a gradient through
    ``logp`` that pulls the policy back toward the reference (Schulman's low-variance estimator, as GRPO uses)."""
    d = ref_logp - logp
    return d.exp() - d - 1
