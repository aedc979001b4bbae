"""MetaClaw for LangChain: learned skills in, trajectories out.

- :class:`MetaClawMiddleware`: for ``langchain.agents.create_agent`` (injects and captures).
- :class:`MetaClawCallbackHandler`: capture only, for chains and agents that cannot take middleware.
- :func:`with_skills`: wraps a chat model so that LCEL chains get the skills injected.
- :func:`memory_tools`: ``memory_search`` / ``memory_store`` / ``memory_forget`` tools on the user's memory.
- :func:`policy_chat_model`: the plugin-served trainable policy as a chat model, for rl/auto modes.

Both classes work with no arguments (the default config: ``$METACLAW_CONFIG``,
``$METACLAW_HOME/config.yaml``, ``METACLAW_*``) or with an existing ``MetaClawPlugin``.

Importing this package checks, once, that ``langchain`` and ``langchain-core`` are installed within the supported
ranges (``SUPPORTED_LANGCHAIN``, ``SUPPORTED_LANGCHAIN_CORE``, the same as the ``langchain`` extra in
``pyproject.toml``): a missing one, or one outside its range, raises :class:`metaclaw_plugin.DidNotEnable` (an
``ImportError``) that says what was found and how to fix it. ``METACLAW_ALLOW_UNSUPPORTED_HOST=1`` turns an
out-of-range version into a warning.
"""

from metaclaw_plugin.integration import require_host

# [lowest supported, first unsupported): both ends are tested (see the README). Keep in step with pyproject.toml.
SUPPORTED_LANGCHAIN = ("1.3", "1.6")
SUPPORTED_LANGCHAIN_CORE = ("1.4", "1.9")

LANGCHAIN_VERSION = require_host(
    "langchain",
    "langchain",
    *SUPPORTED_LANGCHAIN,
    adapter="metaclaw_langchain",
    install="'metaclaw-plugin[langchain]'",
)
LANGCHAIN_CORE_VERSION = require_host(
    "langchain-core",
    "langchain_core",
    *SUPPORTED_LANGCHAIN_CORE,
    adapter="metaclaw_langchain",
    install="'metaclaw-plugin[langchain]'",
)

from .callbacks import MetaClawCallbackHandler  # noqa: E402 - after the host checks, which must come first
from .memory import memory_tools  # noqa: E402
from .middleware import MetaClawMiddleware, MetaClawState  # noqa: E402
from .policy import PolicyChatModel, PolicyNotAvailableError, policy_chat_model  # noqa: E402
from .runnable import SkillInjectingRunnable, with_skills  # noqa: E402

__all__ = [
    "MetaClawCallbackHandler",
    "MetaClawMiddleware",
    "MetaClawState",
    "PolicyChatModel",
    "PolicyNotAvailableError",
    "SkillInjectingRunnable",
    "memory_tools",
    "policy_chat_model",
    "with_skills",
]
