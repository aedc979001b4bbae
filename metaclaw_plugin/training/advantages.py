"""GRPO-style advantages: each reward relative to its batch, ``(r - mean) / (std + eps)``.

The standard deviation is the population one (``ddof=0``), as in the reference. A batch whose
rewards are all equal has zero advantages (nothing to learn from it), never a division by zero.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def grpo_advantages(rewards: Sequence[float], eps: float = 1e-8) -> list[float]:
    n = len(rewards)
    if n == 0:
        return []
    mean = sum(rewards) / n
    std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / n)
    return [(r - mean) / (std + eps) for r in rewards]
