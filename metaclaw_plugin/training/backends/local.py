"""The ``local`` backend: LoRA on a Hugging Face causal LM with torch and PEFT, on CPU or CUDA.

Sampler weights are PEFT adapter folders (``save_pretrained``) under ``<out>/adapters/step-NNNNNN``; full
states add the optimiser under ``<out>/checkpoints/step-NNNNNN``. Both are written to a temporary folder
and renamed into place, so a process killed at any moment leaves either the whole folder or none.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..._mlimport import ML_IMPORT_LOCK
from ..losses import behaviour_logprobs, policy_loss
from ..models import load_base
from ..samples import TrainSample

KEEP_ADAPTERS = 3  # older adapter folders are removed (a served policy loads the latest)
KEEP_STATES = 2


def pick_device(device: str = "auto") -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


class LocalBackend:
    name = "local"

    def __init__(
        self,
        base_model: str,
        out_dir: Path | str,
        *,
        lora_rank: int = 32,
        learning_rate: float = 1e-4,
        device: str = "auto",
        seed: int = 0,
    ):
        with ML_IMPORT_LOCK:
            import torch
            from peft import LoraConfig, get_peft_model

            self.base_model = base_model
            self.out = Path(out_dir).expanduser()
            self.device = pick_device(device)
            torch.manual_seed(seed)
            base, self.tokenizer = load_base(base_model, self.device)
            config = LoraConfig(
                r=lora_rank, lora_alpha=lora_rank, lora_dropout=0.0, target_modules="all-linear", task_type="CAUSAL_LM"
            )
            self.model: Any = get_peft_model(base, config)
        self.model.train()
        self.optimizer = torch.optim.Adam([p for p in self.model.parameters() if p.requires_grad], lr=learning_rate)

    # Gradients -----------------------------------------------------------------------------------
    def token_logprobs(self, samples: Sequence[TrainSample]) -> tuple[Any, Any, Any, Any, Any]:
        """Per completion position: the policy's logprobs (with grad), behaviour logprobs, advantages, mask,
        and whether behaviour logprobs are known, as [batch, longest-1] tensors."""
        import torch

        pad = self.tokenizer.pad_token_id or 0
        width = max(len(s.tokens) for s in samples)
        shape = (len(samples), width - 1)
        ids = torch.full((len(samples), width), pad, dtype=torch.long)
        attention = torch.zeros((len(samples), width), dtype=torch.long)
        old, adv, mask = torch.zeros(shape), torch.zeros(shape), torch.zeros(shape)
        for b, s in enumerate(samples):
            ids[b, : len(s.tokens)] = torch.tensor(s.tokens)
            attention[b, : len(s.tokens)] = 1
            start, n = len(s.prompt_ids) - 1, len(s.completion_ids)  # logits at p-1 predict token p
            mask[b, start : start + n] = torch.tensor(s.mask, dtype=torch.float)
            adv[b, start : start + n] = torch.tensor(s.advantages())
            if s.logprobs is not None:
                old[b, start : start + n] = torch.tensor(s.logprobs)
        ids, attention = ids.to(self.device), attention.to(self.device)
        logits = self.model(input_ids=ids, attention_mask=attention).logits[:, :-1].float()
        # at the temperature the behaviour logprobs were sampled at, so the ratio before any update is exactly 1
        temps = torch.tensor([s.temperature if s.temperature > 0 else 1.0 for s in samples], device=self.device)
        logits = logits / temps[:, None, None]
        logp = -torch.nn.functional.cross_entropy(logits.transpose(1, 2), ids[:, 1:], reduction="none")
        known = torch.tensor([s.logprobs is not None for s in samples], device=self.device)
        return logp, old.to(self.device), adv.to(self.device), mask.to(self.device), known

    def forward_backward(self, samples: Sequence[TrainSample], loss_fn: str, norm: float) -> float:
        logp, old, adv, mask, known = self.token_logprobs(samples)
        loss = policy_loss(loss_fn, logp, behaviour_logprobs(logp, old, known), adv, mask, norm)
        loss.backward()
        return float(loss.detach())

    def discard(self) -> None:
        self.optimizer.zero_grad(set_to_none=True)

    def optim_step(self) -> float | None:
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        return None  # the loss is known from forward_backward

    # Weights ---------------------------------------------------------------------------------------
    def _write(self, kind: str, step: int, with_state: bool) -> str:
        import torch

        final = self.out / kind / f"step-{step:06d}"
        tmp = self.out / kind / f".tmp-{step:06d}-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        self.model.save_pretrained(tmp)
        if with_state:
            torch.save(self.optimizer.state_dict(), tmp / "optimizer.pt")
            (tmp / "trainer.json").write_text(json.dumps({"step": step, "base_model": self.base_model}))
        shutil.rmtree(final, ignore_errors=True)
        os.replace(tmp, final)
        keep = KEEP_STATES if with_state else KEEP_ADAPTERS
        for old in sorted((self.out / kind).glob("step-*"))[:-keep]:
            shutil.rmtree(old, ignore_errors=True)
        return str(final)

    def save_sampler(self, step: int) -> str:
        return self._write("adapters", step, with_state=False)

    def save_state(self, step: int) -> str:
        return self._write("checkpoints", step, with_state=True)

    def load_state(self, path: str) -> None:
        import torch
        from peft import set_peft_model_state_dict
        from safetensors.torch import load_file

        folder = Path(path)
        set_peft_model_state_dict(self.model, load_file(str(folder / "adapter_model.safetensors"), device=self.device))
        self.optimizer.load_state_dict(torch.load(folder / "optimizer.pt", map_location=self.device))

    def adapter_weights(self) -> dict[str, Any]:
        """The trainable LoRA weights by name (what a checkpoint holds), detached."""
        from peft import get_peft_model_state_dict

        return {k: v.detach().cpu().clone() for k, v in get_peft_model_state_dict(self.model).items()}
