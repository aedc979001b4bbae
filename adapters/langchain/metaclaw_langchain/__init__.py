"""MetaClaw for LangChain: learned skills in, trajectories out.

- :class:`MetaClawMiddleware`: for ``langchain.agents.create_agent`` (injects and captures).
- :class:`MetaClawCallbackHandler`: capture only, for chains and agents that cannot take middleware.
- :func:`with_skills`: wraps a chat model so that LCEL chains get the skills injected.
- :func:`policy_chat_model`: the plugin-served policy for rl/auto modes (not available yet; raises).

Both classes work with no arguments (the default config: ``$METACLAW_CONFIG``,
``$METACLAW_HOME/config.yaml``, ``METACLAW_*``) or with an existing ``MetaClawPlugin``.
"""

from .callbacks import MetaClawCallbackHandler
from .middleware import MetaClawMiddleware, MetaClawState
from .policy import PolicyNotAvailableError, policy_chat_model
from .runnable import SkillInjectingRunnable, with_skills

__all__ = [
    "MetaClawCallbackHandler",
    "MetaClawMiddleware",
    "MetaClawState",
    "PolicyNotAvailableError",
    "SkillInjectingRunnable",
    "policy_chat_model",
    "with_skills",
]
