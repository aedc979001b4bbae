"""The learning side: rewards, skill evolution, shadow trials and the sample buffer, run in the
background from explicit parts (see :class:`Parts`). The request path never imports this package;
``MetaClawPlugin`` attaches it lazily when a judge, an evolver or a verifier is configured."""

from .loop import LearningLoop
from .parts import Parts

__all__ = ["LearningLoop", "Parts"]
