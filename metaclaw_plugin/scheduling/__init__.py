"""OMLS: the slow loop trains only while the user is away. Signals (``sleep``, ``idle``, ``calendar``) behind one
small interface (``signals``), the state machine on APScheduler (``omls``), the mode in effect (``modes``), one
trainer per home (``lock``). Nothing on the request path imports this package."""

from .modes import MODES, ModeInEffect, mode_in_effect, store_mode
from .omls import Omls, State, Trainer
from .signals import Decision, Gate, Reading, Signal

__all__ = [
    "MODES",
    "Decision",
    "Gate",
    "ModeInEffect",
    "Omls",
    "Reading",
    "Signal",
    "State",
    "Trainer",
    "mode_in_effect",
    "store_mode",
]
