"""``policy_chat_model``: the chat model for rl/auto modes (not available yet).

In ``rl`` and ``auto`` modes the model the agent talks to is the trainable policy that the plugin
serves (a LiteLLM custom provider ``metaclaw/<name>`` that samples from the current weights and
returns token ids and logprobs for training). That server arrives with the training issue; until
then this function raises :class:`PolicyNotAvailableError` instead of returning something that
would silently talk to the wrong model. In ``skills_only`` mode (the default) there is no policy:
keep your own chat model and add :class:`MetaClawMiddleware`.
"""

from __future__ import annotations

from typing import Any

from metaclaw_plugin.integration import MetaClawPlugin


class PolicyNotAvailableError(NotImplementedError):
    """The plugin-served policy model does not exist in this version."""


def policy_chat_model(plugin: MetaClawPlugin | None = None, *, name: str | None = None, **kwargs: Any) -> Any:
    """Return a LangChain chat model that reaches the plugin-served policy (rl/auto modes).

    Not available yet: it always raises :class:`PolicyNotAvailableError` (a ``NotImplementedError``),
    naming the mode in use. The rl/auto policy server arrives with the training issue.
    """
    mode = None
    try:
        mode = plugin.settings.mode if plugin is not None else None
    except Exception:
        pass
    where = f" (configured mode: {mode})" if mode else ""
    raise PolicyNotAvailableError(
        "metaclaw_langchain.policy_chat_model: the plugin-served policy for rl/auto modes is not "
        f"available in this version{where}; it arrives with the training issue. In skills_only mode "
        "use your own chat model with MetaClawMiddleware (create_agent) or with_skills (LCEL)."
    )
