"""The explicit parts the learning side is built from (never the plugin object)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..config import Settings
from ..hostmodel import HostModels
from ..privacy import Redactor
from ..requestpath.events import Events, SessionState
from ..skillbank.bank import SkillBank
from ..store.election import LearnerElection
from ..store.trajectories import TrajectoryStore


@dataclass
class Parts:
    settings: Settings
    trajectories: TrajectoryStore  # turns, sessions and the reward record
    skills: SkillBank  # the library (store) and the served snapshot
    events: Events  # what the request path publishes
    redactor: Redactor | None = None  # outbound payloads are always redacted: built from settings when None
    live_sessions: Callable[[], Sequence[SessionState]] = tuple  # sessions the host still has open
    election: LearnerElection | None = None  # the host's one election (shared with memory); else the loop's own
    host_models: HostModels | None = None  # the host's own model (learning.model: host), as its adapter offers it
