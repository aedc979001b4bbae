"""A tiny causal LM built in-process: the local policy for tests, benchmarks and the demo, with no download.

A Llama-shaped model with random weights (fixed seed) and a byte-level BPE tokenizer trained on a small
built-in corpus, saved with ``save_pretrained`` so that it loads exactly like a model from the Hub
(``AutoModelForCausalLM.from_pretrained(path)``). It carries a ChatML chat template that renders tools, tool
calls and tool results as Qwen2.5's does, so prompts are built the way a real instruct model's are. Needs the
``train-local`` extra (torch, transformers).
"""

from __future__ import annotations

import json
from pathlib import Path

from ..infra.mlimport import ML_IMPORT_LOCK
from ..training.chat import TOOLS_HEAD, TOOLS_TAIL


def _lit(text: str) -> str:
    """``text`` as a Jinja string literal."""
    return json.dumps(text)


# ChatML with tools as Qwen2.5's template renders them: the definitions in the system message, each call as a
# <tool_call> block in the assistant message, a run of tool results as one user message of <tool_response>s.
CHAT_TEMPLATE = (
    "{%- if tools %}"
    "{{- '<|im_start|>system\\n' }}"
    "{%- if messages[0]['role'] == 'system' %}{{- messages[0]['content'] + '\\n\\n' }}{%- endif %}"
    "{{- " + _lit(TOOLS_HEAD) + " }}"
    "{%- for tool in tools %}{{- '\\n' + (tool | tojson) }}{%- endfor %}"
    "{{- " + _lit(TOOLS_TAIL) + " + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- for message in messages %}"
    "{%- if tools and loop.first and message['role'] == 'system' %}"
    "{%- elif message['role'] == 'assistant' and message['tool_calls'] %}"
    "{{- '<|im_start|>assistant' }}{%- if message['content'] %}{{- '\\n' + message['content'] }}{%- endif %}"
    "{%- for call in message['tool_calls'] %}{%- set fn = call['function'] if call['function'] is defined else call %}"
    "{{- '\\n<tool_call>\\n{\"name\": \"' + fn['name'] + '\", \"arguments\": ' + (fn['arguments'] | tojson) }}"
    "{{- '}\\n</tool_call>' }}"
    "{%- endfor %}"
    "{{- '<|im_end|>\\n' }}"
    "{%- elif message['role'] == 'tool' %}"
    "{%- if loop.first or messages[loop.index0 - 1]['role'] != 'tool' %}{{- '<|im_start|>user' }}{%- endif %}"
    "{{- '\\n<tool_response>\\n' + (message['content'] or '') + '\\n</tool_response>' }}"
    "{%- if loop.last or messages[loop.index0 + 1]['role'] != 'tool' %}{{- '<|im_end|>\\n' }}{%- endif %}"
    "{%- else %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + (message['content'] or '') + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

_CORPUS = [
    "You are a helpful assistant. Answer the user's question clearly and briefly.",
    "Use ISO dates such as 2026-11-30 in every report. Name files in kebab-case.",
    "The deploy script runs the tests first, then builds the image and pushes it.",
    "Sorry, I cannot help with that. Here is the summary you asked for.",
    "def add(a, b): return a + b  # a small Python function with a docstring",
    "The meeting moved to Tuesday at 10:00. Please send the notes to the team.",
    "yes no maybe done ok error retry success failure result answer question",
    "Skills: always cite the ticket id, keep the changelog current, and never log secrets.",
]


def build_tiny_model(
    path: Path | str, *, seed: int = 0, vocab_size: int = 512, hidden: int = 64, layers: int = 2, context: int = 1024
) -> Path:
    """Write a tiny model and its tokenizer to ``path`` (created) and return it. Deterministic for a seed.
    ``context`` is its window in tokens (an agent's prompts, with tools and skills, need a few thousand)."""
    with ML_IMPORT_LOCK:  # transformers resolves names lazily: one thread at a time
        import torch
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
        from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

        out = Path(path)
        out.mkdir(parents=True, exist_ok=True)
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
        )
        tok.train_from_iterator(_CORPUS * 4, trainer=trainer)
        fast = PreTrainedTokenizerFast(
            tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>", bos_token=None, unk_token=None
        )
        fast.chat_template = CHAT_TEMPLATE
        fast.save_pretrained(out)

        eos, pad = (fast.convert_tokens_to_ids(t) for t in ("<|im_end|>", "<|endoftext|>"))
        assert isinstance(eos, int) and isinstance(pad, int)
        torch.manual_seed(seed)
        config = LlamaConfig(
            vocab_size=len(fast),
            hidden_size=hidden,
            intermediate_size=hidden * 2,
            num_hidden_layers=layers,
            num_attention_heads=4,
            num_key_value_heads=4,
            max_position_embeddings=context,
            eos_token_id=eos,
            pad_token_id=pad,
            bos_token_id=None,
            tie_word_embeddings=False,
        )
        model = LlamaForCausalLM(config)
        model.save_pretrained(out)
    return out
