"""A clear error for a model name the proxy does not map, listing the names it does.

``metaclaw-plugin proxy`` puts ``metaclaw_litellm.models.check`` beside the metaclaw callback and the names clients
may ask for (wildcards such as ``claude-*`` included) in ``$METACLAW_PROXY_MODELS``. LiteLLM's own answer for an
unknown name points at ``/v1/models``; an agent CLI shows only the message, so the message names the mapped models
and the flag that adds one. Without the variable (a proxy config of the user's own) the check does nothing.
"""

from __future__ import annotations

import fnmatch
import json
import logging
import os
from typing import Any

from litellm.integrations.custom_logger import CustomLogger

MODELS_ENV = "METACLAW_PROXY_MODELS"
log = logging.getLogger("metaclaw_litellm.models")


def mapped_names(raw: str | None) -> list[str] | None:
    """The names in ``$METACLAW_PROXY_MODELS`` (a JSON list of strings), or None when unset or unreadable."""
    if not raw:
        return None
    try:
        names = json.loads(raw)
    except ValueError:
        log.warning("$%s is not a JSON list; unmapped model names are left to LiteLLM", MODELS_ENV)
        return None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return None
    return names


def unmapped_reason(model: Any, names: list[str]) -> str | None:
    """Why ``model`` cannot be served (None when a name or a wildcard maps it)."""
    if not isinstance(model, str) or not model:
        return None  # LiteLLM answers a request without a model itself
    if model in names or any("*" in n and fnmatch.fnmatchcase(model, n) for n in names):
        return None
    return (
        f"model {model!r} is not mapped by this metaclaw-plugin proxy; mapped: {', '.join(names)}. "
        f"Ask for one of those, or restart the proxy with --model {model}=PROVIDER/MODEL (a wildcard such as "
        f"'{model.split('-')[0]}-*=...' maps a family)."
    )


class ModelCheck(CustomLogger):
    def __init__(self, names: list[str] | None = None) -> None:
        super().__init__()
        self.names = names if names is not None else mapped_names(os.environ.get(MODELS_ENV))

    async def async_pre_call_hook(self, user_api_key_dict: Any, cache: Any, data: dict, call_type: Any) -> Any:
        if self.names is None or not isinstance(data, dict):
            return data
        why = unmapped_reason(data.get("model"), self.names)
        if why is not None:
            from fastapi import HTTPException

            raise HTTPException(status_code=400, detail={"error": why})
        return data


check = ModelCheck()
