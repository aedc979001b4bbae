"""Real LoRA weights, random (non-zero), saved with PEFT as the local trainer saves its sampler weights: for tests
and benchmarks of the served policy's hot swap, where the weights must change the answers."""

from __future__ import annotations

from pathlib import Path

from ..infra.mlimport import ML_IMPORT_LOCK
from ..training.models import load_base
from ..training.weights import WeightsRef


def random_lora(base: str | Path, out: str | Path, *, seed: int, step: int = 1, rank: int = 8) -> WeightsRef:
    """Write the LoRA weights to ``out`` and return its :class:`WeightsRef` (backend ``local``). ``base`` is anything
    ``training.base_model`` accepts (a folder, or a packaged model such as ``smollm2``)."""
    with ML_IMPORT_LOCK:
        import torch
        from peft import LoraConfig, get_peft_model

        torch.manual_seed(seed)
        model, _ = load_base(str(base))
        cfg = LoraConfig(r=rank, lora_alpha=2 * rank, target_modules="all-linear", init_lora_weights=False)
        get_peft_model(model, cfg).save_pretrained(str(out))
    return WeightsRef(step=step, backend="local", base_model=str(base), path=str(out))
