"""The slow loop's data side: the support/query sample buffer and advantages (the trainer builds on them)."""

from .advantages import grpo_advantages
from .buffer import BufferStats, SampleBuffer

__all__ = ["BufferStats", "SampleBuffer", "grpo_advantages"]
