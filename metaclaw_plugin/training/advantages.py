"""GRPO-style advantages: each reward relative to its batch or its group, ``(r - mean) / (std + eps)``.

The standard deviation is the population one (``ddof=0``), as in the reference. A batch (or group)
whose rewards are all equal, within a tolerance relative to the reward scale (:func:`tied`, ``training.group_tolerance``,
default :data:`TIE`), has zero advantages (nothing to learn from it), never a division by zero: three rewards of 0.7
have a mean with float residue, whose ~1e-8 advantages would otherwise count as a signal, move Adam's moments and
publish a step.
Per group (:func:`group_advantages`) compares answers to the same prompt, as GRPO does; a group of one
answer has nothing to compare with, so its advantage is 0.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

TIE = 1e-6  # rewards closer than this, relative to their scale, are equal


def tied(rewards: Sequence[float], tolerance: float = TIE) -> bool:
    """All equal within ``tolerance`` times the rewards' scale (their largest magnitude, at least 1: rewards in
    [-1, 1] compare absolutely, larger ones relatively); an empty or one-element list too."""
    if not rewards:
        return True
    scale = max(1.0, *(abs(r) for r in rewards))
    return max(rewards) - min(rewards) <= tolerance * scale


def grpo_advantages(rewards: Sequence[float], eps: float = 1e-8, tolerance: float = TIE) -> list[float]:
    n = len(rewards)
    if tied(rewards, tolerance):
        return [0.0] * n
    mean = sum(rewards) / n
    std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / n)
    return [(r - mean) / (std + eps) for r in rewards]


def group_advantages(
    rewards: Sequence[float], groups: Sequence[Hashable], eps: float = 1e-8, tolerance: float = TIE
) -> list[float]:
    """:func:`grpo_advantages` within each group (``groups[i]`` is sample i's key, e.g. its prompt)."""
    if len(rewards) != len(groups):
        raise ValueError("one group key per reward")
    members: dict[Hashable, list[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(g, []).append(i)
    out = [0.0] * len(rewards)
    for idx in members.values():
        for i, a in zip(idx, grpo_advantages([rewards[i] for i in idx], eps, tolerance)):
            out[i] = a
    return out
