"""Loading the base causal LM that the local backend trains and the served policy samples from.

``spec`` is a local folder in Hugging Face layout (``config.json``, weights, tokenizer). Loading never
downloads: ``local_files_only`` is set, so a Hub name that is not cached fails with a clear error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class ModelNotFound(ValueError):
    pass


def resolve(spec: str) -> Path:
    p = Path(spec).expanduser()
    if (p / "config.json").is_file():
        return p
    raise ModelNotFound(f"training.base_model {spec!r} is not a folder with config.json (nothing is downloaded)")


def load_base(spec: str, device: str = "cpu") -> tuple[Any, Any]:
    """(model, tokenizer) for ``spec`` on ``device``, in float32 on CPU."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = resolve(spec)
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model: Any = AutoModelForCausalLM.from_pretrained(path, local_files_only=True)
    return model.to(device), tokenizer
