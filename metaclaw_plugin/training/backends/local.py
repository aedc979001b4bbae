"""The ``local`` backend: LoRA on a Hugging Face causal LM with torch and PEFT, on CPU or CUDA.

Sampler weights are LoRA weights folders (PEFT's ``save_pretrained``) under ``<out>/adapters/step-NNNNNN``; full
states add the optimiser under ``<out>/checkpoints/step-NNNNNN``. A tenant's own weights (``training.scope: tenant``)
go one folder down, ``<out>/adapters/<tenant folder>/step-NNNNNN`` (:attr:`LocalBackend.subdir`, set by the trainer
when it puts that tenant's weights in), and ``keep_adapters`` counts per tenant. Both are written to a temporary folder
and renamed into place, so a process killed at any moment leaves either the whole folder or none.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...infra import heap
from ...infra.mlimport import ML_IMPORT_LOCK
from .. import chat
from ..gate import Draw
from ..losses import behaviour_logprobs, kl_to_reference, policy_loss
from ..models import load_base
from ..samples import TrainSample
from . import Hyper

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
        lora_rank: int | None = None,
        learning_rate: float | None = None,
        device: str = "auto",
        seed: int | None = None,
        hyper: Hyper | None = None,
    ):
        h = hyper or Hyper()
        overrides: dict[str, Any] = {"lora_rank": lora_rank, "learning_rate": learning_rate, "seed": seed}
        h = replace(h, **{k: v for k, v in overrides.items() if v is not None})
        self.hyper = h
        with ML_IMPORT_LOCK:
            import torch
            from peft import LoraConfig, get_peft_model

            self.base_model = base_model
            self.out = Path(out_dir).expanduser()
            self.device = pick_device(device)
            torch.manual_seed(h.seed)
            base, self.tokenizer = load_base(base_model, self.device, dtype=None if h.dtype == "auto" else h.dtype)
            if h.gradient_checkpointing:
                base.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
            config = LoraConfig(
                r=h.lora_rank,
                lora_alpha=h.lora_alpha or h.lora_rank,
                lora_dropout=h.lora_dropout,
                target_modules=h.target_modules,
                task_type="CAUSAL_LM",
            )
            self.model: Any = get_peft_model(base, config)
        self.model.train()
        self.params = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(
            self.params,
            lr=h.learning_rate,
            betas=(h.adam_beta1, h.adam_beta2),
            eps=h.adam_eps,
            weight_decay=h.weight_decay,
        )
        self._kl = [0.0, 0.0]  # this step's KL to the base: sum over trained tokens, and their count
        self.subdir = ""  # whose weights these are: a tenant's folder (training.scope tenant), "" for every tenant's
        self.metrics: dict[str, float | None] = {}

    # Gradients -----------------------------------------------------------------------------------
    def token_logprobs(
        self, samples: Sequence[TrainSample], *, reference: bool = False
    ) -> tuple[Any, Any, Any, Any, Any]:
        """Per completion token: the policy's logprobs (with grad), behaviour logprobs, advantages, mask, and
        whether behaviour logprobs are known, as [batch, longest completion] tensors (column j is completion
        token j). ``reference``: the base model's logprobs instead (the LoRA disabled, no gradient), for the KL
        anchor.

        The output head runs on the completion positions only. Over the whole sequence its float logits are
        [batch, width, vocab]: for four samples padded to 853 tokens (one prompt held a skill block) and SmolLM2's
        49,152 columns, 671 MB a copy, where their 32-token answers need 25 MB. That pass went past 11.3 GB of
        resident memory with them and peaked at 9.8 GB without (the rest is the padded activations: see
        :func:`~metaclaw_plugin.training.trainer.micro_batches`)."""
        import torch

        pad = self.tokenizer.pad_token_id or 0
        width = max(len(s.tokens) for s in samples)
        shape = (len(samples), max(len(s.completion_ids) for s in samples))
        ids = torch.full((len(samples), width), pad, dtype=torch.long)
        attention = torch.zeros((len(samples), width), dtype=torch.long)
        at = torch.zeros(shape, dtype=torch.long)  # the position whose output predicts completion token j
        old, adv, mask = torch.zeros(shape), torch.zeros(shape), torch.zeros(shape)
        for b, s in enumerate(samples):
            ids[b, : len(s.tokens)] = torch.tensor(s.tokens)
            attention[b, : len(s.tokens)] = 1
            start, n = len(s.prompt_ids) - 1, len(s.completion_ids)  # the output at p-1 predicts token p
            at[b, :n] = torch.arange(start, start + n)
            at[b, n:] = start  # padding columns: any real position, masked out
            mask[b, :n] = torch.tensor(s.mask, dtype=torch.float)
            adv[b, :n] = torch.tensor(s.advantages())
            if s.logprobs is not None:
                old[b, :n] = torch.tensor(s.logprobs)
        ids, attention, at = ids.to(self.device), attention.to(self.device), at.to(self.device)
        model = self.model.get_base_model()  # LoRA layers sit inside it; disable_adapter reaches them there
        if reference:
            with torch.no_grad(), self.model.disable_adapter():
                hidden = model.get_decoder()(input_ids=ids, attention_mask=attention).last_hidden_state
        else:
            hidden = model.get_decoder()(input_ids=ids, attention_mask=attention).last_hidden_state
        hidden = hidden.gather(1, at[:, :, None].expand(-1, -1, hidden.size(-1)))
        logits = model.get_output_embeddings()(hidden).float()
        # at the temperature the behaviour logprobs were sampled at, so the ratio before any update is exactly 1
        temps = torch.tensor([s.temperature if s.temperature > 0 else 1.0 for s in samples], device=self.device)
        logits = logits / temps[:, None, None]
        logp = -torch.nn.functional.cross_entropy(logits.transpose(1, 2), ids.gather(1, at + 1), reduction="none")
        known = torch.tensor([s.logprobs is not None for s in samples], device=self.device)
        return logp, old.to(self.device), adv.to(self.device), mask.to(self.device), known

    def forward_backward(self, samples: Sequence[TrainSample], loss_fn: str, norm: float) -> float:
        h = self.hyper
        logp, old, adv, mask, known = self.token_logprobs(samples)
        loss = policy_loss(
            loss_fn, logp, behaviour_logprobs(logp, old, known), adv, mask, norm, h.clip_low, h.clip_high
        )
        if h.kl_coef > 0:  # the anchor: a cheap second pass with the LoRA disabled is the base policy
            ref = self.token_logprobs(samples, reference=True)[0]
            kl = kl_to_reference(logp, ref) * mask
            loss = loss + h.kl_coef * kl.sum() / max(norm, 1.0)
            self._kl[0] += float(kl.detach().sum())
            self._kl[1] += float(mask.sum())
        loss.backward()
        return float(loss.detach())

    def discard(self) -> None:
        """Drop every accumulated gradient: on each LoRA parameter (the optimiser's list is the same tensors)."""
        for p in self.params:
            p.grad = None
        self._kl = [0.0, 0.0]

    def optim_step(self) -> float | None:
        import torch

        limit = self.hyper.max_grad_norm if self.hyper.max_grad_norm > 0 else float("inf")
        grad_norm = float(torch.nn.utils.clip_grad_norm_(self.params, limit))
        self.optimizer.step()
        kl_sum, kl_n = self._kl
        self.metrics = {"grad_norm": grad_norm, "kl": kl_sum / kl_n if kl_n else None}
        self.discard()
        heap.trim()  # the step's activations: freed, but kept by the allocator unless given back
        return None  # the loss is known from forward_backward

    def step_metrics(self) -> dict[str, Any]:
        return dict(self.metrics)

    def reset_optimizer(self) -> None:
        """Forget Adam's moments (after a rollback: they belong to the abandoned steps)."""
        self.optimizer.state.clear()

    # The validation gate -------------------------------------------------------------------------
    def snapshot(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The LoRA weights and the optimiser state, copied: what :meth:`restore` puts back (an undone step)."""
        import copy

        weights = {n: p.detach().clone() for n, p in self.model.named_parameters() if p.requires_grad}
        return weights, copy.deepcopy(self.optimizer.state_dict())

    def restore(self, snap: tuple[dict[str, Any], dict[str, Any]]) -> None:
        import torch

        weights, state = snap
        with torch.no_grad():
            for n, p in self.model.named_parameters():
                if n in weights:
                    p.copy_(weights[n])
        self.optimizer.load_state_dict(state)

    def answer_logprobs(self, samples: Sequence[TrainSample]) -> list[float]:
        """Each sample's mean logprob of its trained tokens under the current weights (no gradient)."""
        import torch

        out: list[float] = []
        with torch.no_grad():
            for s in samples:
                logp, _, _, mask, _ = self.token_logprobs([s])
                out.append(float((logp * mask).sum() / mask.sum().clamp(min=1)))
        return out

    def gate_policy(self) -> _GatePolicy:
        """The current weights as the behaviour gate drives them (:mod:`..gate`): live, so the same object answers
        with the serving weights before the step and the new ones after it."""
        return _GatePolicy(self)

    # Weights ---------------------------------------------------------------------------------------
    def _write(self, kind: str, step: int, with_state: bool) -> str:
        import torch

        where = self.out / kind / self.subdir if self.subdir else self.out / kind
        final = where / f"step-{step:06d}"
        tmp = where / f".tmp-{step:06d}-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        self.model.save_pretrained(tmp)
        if with_state:
            torch.save(self.optimizer.state_dict(), tmp / "optimizer.pt")
            (tmp / "trainer.json").write_text(json.dumps({"step": step, "base_model": self.base_model}))
        shutil.rmtree(final, ignore_errors=True)
        os.replace(tmp, final)
        keep = KEEP_STATES if with_state else self.hyper.keep_adapters
        for old in sorted(where.glob("step-*"))[:-keep]:
            shutil.rmtree(old, ignore_errors=True)
        return str(final)

    def save_sampler(self, step: int) -> str:
        return self._write("adapters", step, with_state=False)

    def save_state(self, step: int) -> str:
        return self._write("checkpoints", step, with_state=True)

    def load_state(self, path: str) -> None:
        import torch

        self.load_weights(path)
        self.optimizer.load_state_dict(torch.load(Path(path) / "optimizer.pt", map_location=self.device))

    def load_weights(self, path: str) -> None:
        """The LoRA weights of a folder (a published step, or a full state), the optimiser untouched."""
        from peft import set_peft_model_state_dict
        from safetensors.torch import load_file

        weights = load_file(str(Path(path) / "adapter_model.safetensors"), device=self.device)
        set_peft_model_state_dict(self.model, weights)

    def lora_weights(self) -> dict[str, Any]:
        """The trainable LoRA weights by name (what a checkpoint holds), detached."""
        from peft import get_peft_model_state_dict

        return {k: v.detach().cpu().clone() for k, v in get_peft_model_state_dict(self.model).items()}


class _GatePolicy:
    """The trained model answering and scoring for the behaviour gate, without gradient and outside training mode
    (LoRA dropout off), on a forked random state so training's own draws are untouched."""

    def __init__(self, backend: LocalBackend):
        self.backend = backend

    def generate(self, prompts: list[list[int]], draw: Draw, go_on: Callable[[], bool]) -> list[list[int]]:
        """All prompts in one batch (left-padded): on CPU a token's cost is mostly per call, not per row."""
        import torch
        from transformers import StoppingCriteria, StoppingCriteriaList

        class Paused(StoppingCriteria):  # a pause lands between tokens, not at the end of the answers
            def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
                return torch.full((input_ids.shape[0],), not go_on(), dtype=torch.bool, device=input_ids.device)

        b = self.backend
        model, tok = b.model, b.tokenizer
        stop = chat.stop_ids(tok)
        pad = tok.pad_token_id if tok.pad_token_id is not None else min(stop)
        width = max(len(p) for p in prompts)
        ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts], device=b.device)
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=b.device)
        devices = [torch.cuda.current_device()] if b.device == "cuda" else []
        temperature, sampled = draw.temperature, draw.temperature > 0
        model.eval()
        try:
            with torch.no_grad(), torch.random.fork_rng(devices=devices):
                torch.manual_seed(draw.seed)
                out = model.generate(
                    input_ids=ids,
                    attention_mask=mask,
                    max_new_tokens=draw.max_new_tokens,
                    do_sample=sampled,
                    temperature=temperature if sampled else None,
                    top_k=0 if sampled else None,
                    top_p=1.0 if sampled else None,
                    eos_token_id=sorted(stop),
                    pad_token_id=pad,
                    stopping_criteria=StoppingCriteriaList([Paused()]),
                )
        finally:
            model.train()
        answers = []
        for row in out[:, width:].tolist():
            cut = next((i + 1 for i, t in enumerate(row) if t in stop), len(row))
            answers.append([int(t) for t in row[:cut]])
        return answers

    def logprobs(self, prompt: list[int], completion: list[int]) -> list[float]:
        import torch

        sample = TrainSample("gate", prompt, completion, [1] * len(completion), None, 0.0, 0)
        with torch.no_grad():
            logp = self.backend.token_logprobs([sample])[0]
        return [float(x) for x in logp[0, : len(completion)].tolist()]
