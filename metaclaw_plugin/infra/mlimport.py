"""One lock for loading the ML stack (torch, transformers, peft, sentence-transformers) in this process.

transformers resolves its names lazily, on first use, and two threads that do that at once get
``ImportError: cannot import name 'AutoModelForCausalLM' from 'transformers'`` (reproduced here with a served
policy loading while the trainer sets up its LoRA model). Every first import and model load of that stack
holds this lock; it is re-entrant, so a load may call another."""

from __future__ import annotations

import threading

ML_IMPORT_LOCK = threading.RLock()


# Third-party noise on the CLI's stderr (progress bars, advisory and deprecation warnings of the ML stack) buries
# our own messages. The CLI process is ours, so it quiets them; a host that embeds the plugin keeps its settings.
_QUIET_ENV = {
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",  # huggingface_hub's bars, and transformers' ("Loading weights")
    "TRANSFORMERS_VERBOSITY": "error",
    "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
    "TOKENIZERS_PARALLELISM": "false",  # the fork warning of the tokenizers library
    "TQDM_DISABLE": "1",
}
_THIRD_PARTY = (
    r"(?:transformers|torch|peft|accelerate|huggingface_hub|sentence_transformers|tokenizers|safetensors|chromadb|"
    r"onnxruntime|tqdm|gguf|litellm|tinker|posthog|opentelemetry)(?:\.|$)"
)


def quiet_third_party() -> None:
    """Keep third-party progress bars and warnings off this process's stderr (and its children's, by the
    environment); our own warnings and log lines stay."""
    import os
    import sys
    import warnings

    for key, value in _QUIET_ENV.items():
        os.environ.setdefault(key, value)
    for category in (FutureWarning, DeprecationWarning, PendingDeprecationWarning, UserWarning, RuntimeWarning):
        warnings.filterwarnings("ignore", category=category, module=_THIRD_PARTY)
    if "transformers" in sys.modules:  # imported before the environment said so
        try:
            from transformers.utils import logging as hf_logging

            hf_logging.set_verbosity_error()
            hf_logging.disable_progress_bar()
        except Exception:  # an old or partial transformers: its noise is not worth a failure
            pass
    if "huggingface_hub" in sys.modules:
        try:
            from huggingface_hub.utils import disable_progress_bars

            disable_progress_bars()
        except Exception:
            pass
