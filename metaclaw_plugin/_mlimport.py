"""One lock for loading the ML stack (torch, transformers, peft, sentence-transformers) in this process.

transformers resolves its names lazily, on first use, and two threads that do that at once get
``ImportError: cannot import name 'AutoModelForCausalLM' from 'transformers'`` (reproduced here with a served
policy loading while the trainer sets up its LoRA model). Every first import and model load of that stack
holds this lock; it is re-entrant, so a load may call another."""

from __future__ import annotations

import threading

ML_IMPORT_LOCK = threading.RLock()
