"""The trainable policy, served: samples from the current weights with per-token logprobs, and hot-swaps them.

- **Sampling.** A token-by-token loop with a KV cache under ``torch.no_grad``: each step samples from
  ``softmax(logits / temperature)`` with a per-request ``torch.Generator`` (a ``seed`` makes it repeatable) and
  keeps that distribution's logprob of the token it drew, the behaviour policy's logprob that importance ratios
  need. ``temperature=0`` is greedy and records the model's own (temperature 1) logprobs. ``top_p`` < 1 draws
  from the smallest set of tokens whose probability reaches ``top_p`` (renormalised); the logprob kept is the
  untruncated tempered one, the one the trainer recomputes (the record says T and top_p). The stop token is part
  of the response ids, so the trainer teaches the model when to stop.
- **Tinker.** With ``backend="tinker"`` the policy samples through Tinker's sampling client instead: the base
  model first, then each published sampler path (``create_sampling_client(model_path=...)``), swapped the same
  way. One request per answer (the text arrives at once, not token by token), with Tinker's logprobs.
- **Records.** Every answer's prompt ids, response ids and logprobs go to ``policy_tokens`` (training/tokens.py),
  keyed by the answer as a host stores it, with the weights that sampled it.
- **Hot swap.** :class:`Weights` is one loaded version: a model object that nothing changes once it is served.
  :meth:`ServedPolicy.swap` builds the next one (a copy of the base with the LoRA weights merged in, in float32 when
  the base is 16-bit, so small updates are not rounded away) on a loader thread, then rebinds one attribute. A request reads that attribute once, at its start, and holds the object
  to its end: requests in flight finish on the weights they started with, and none waits for a load. The old
  version is freed when its last request ends.
- **By tenant.** With ``scope="tenant"`` (``training.scope``) each tenant that has published weights has its own
  loaded version, swapped on its own; a request of tenant T reads T's version once at its start (the base model
  when T has none), so no request is ever answered with another tenant's weights. Each tenant's version is a
  model object of its own, as a swap's is: safe under the worker pool without a lock (PEFT's per-request adapter
  selection works through hooks on shared modules, which two threads would see at once), at the memory of one
  merged copy of the model per tenant with weights.
- **Threads.** Generation runs on a worker pool (``agenerate``/``astream`` never block an event loop); the fast
  tokenizer is not safe to call from two threads at once, so tokenising and decoding take a small lock.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import logging
import secrets
import threading
from collections import Counter
from collections.abc import AsyncGenerator, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..infra import heap
from ..infra.mlimport import ML_IMPORT_LOCK
from ..store import AnyDatabase
from ..training import chat, tokens
from ..training.models import load_base
from ..training.weights import WeightsRef, by_tenant, latest
from ..types import DEFAULT_TENANT
from .toolcalls import parse_tool_calls, safe_prefix

log = logging.getLogger("metaclaw_plugin.serving")

BASE = "base"


class PolicyInputError(ValueError):
    """A request the policy cannot answer as sent (a prompt longer than the model's context, bad messages)."""


@dataclass(frozen=True)
class Weights:
    """One loaded version of the policy. ``label`` is what token records name (the LoRA weights path, or "base")."""

    model: Any
    ref: WeightsRef | None
    label: str


@dataclass(frozen=True)
class Generation:
    content: str  # the text without tool-call blocks
    tool_calls: list[dict[str, Any]]
    finish_reason: str  # "stop" | "length" | "tool_calls"
    prompt_ids: list[int]
    response_ids: list[int]
    logprobs: list[float]
    model: str  # "metaclaw/<name>"
    weights: str  # Weights.label of the version that answered
    step: int | None  # the trainer step of those weights (None: the base model)
    temperature: float = 1.0  # the logprobs are of softmax(logits / temperature) (1.0 for a greedy answer)
    top_p: float = 1.0

    def message(self) -> dict[str, Any]:
        """The OpenAI assistant message."""
        msg: dict[str, Any] = {"role": "assistant", "content": self.content or None}
        if self.tool_calls:
            msg["tool_calls"] = self.tool_calls
        elif msg["content"] is None:
            msg["content"] = ""
        return msg

    def usage(self) -> dict[str, int]:
        p, c = len(self.prompt_ids), len(self.response_ids)
        return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


def _same_model(a: str, b: str) -> bool:
    try:
        return Path(a).expanduser().resolve() == Path(b).expanduser().resolve()
    except OSError:
        return a == b


class ServedPolicy:
    """The policy that ``metaclaw/<name>`` and ``POST /v1/chat/completions`` answer with.

    ``start()`` loads the base (and the latest published LoRA weights when ``db`` has them) on the loader thread and,
    with ``db`` and ``poll_interval``, starts a :class:`~metaclaw_plugin.serving.watch.WeightsWatcher` that swaps
    in what another process's trainer publishes. ``db`` also receives the token records (None: not recorded).
    """

    def __init__(
        self,
        base_model: str,
        *,
        name: str = "policy",
        device: str = "auto",
        db: AnyDatabase | None = None,
        max_new_tokens: int = 256,
        workers: int = 4,
        poll_interval: float | None = 2.0,
        backend: str = "local",
        service: Any = None,
        scope: str = "global",
    ) -> None:
        if backend not in ("local", "tinker"):
            raise ValueError(f"backend must be local or tinker, not {backend!r}")
        self.backend = backend
        self.scope = scope  # "tenant": each tenant's own weights (training.scope); "global": one set for all
        self._service = service  # tinker: a tinker.ServiceClient (made on first load when None)
        self.name = name
        self.model_name = f"metaclaw/{name}"
        self.base_model = base_model
        self.device = device
        self.db = db
        self.max_new_tokens = max_new_tokens
        self.poll_interval = poll_interval
        self.counters: Counter[str] = Counter()
        self.load_error: str | None = None
        self._current: Weights | None = None  # scope global: what every request gets; scope tenant: the base
        self._tenants: dict[str, Weights] = {}  # scope tenant: each tenant's loaded version
        self._base: Any = None
        self._tokenizer: Any = None
        self._tok_lock = threading.Lock()
        self._stop_ids: frozenset[int] = frozenset()
        self._max_positions: int | None = None
        self._wanted: dict[str | None, WeightsRef] = {}  # whose -> the newest swap asked for
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="metaclaw-policy")
        self._loader = ThreadPoolExecutor(1, thread_name_prefix="metaclaw-policy-load")
        self._watcher: Any = None
        self._started = False
        self._start_lock = threading.Lock()

    # -- lifecycle ------------------------------------------------------------------------------------------
    def start(self) -> Future[Weights]:
        """Load in the background (idempotent); the future resolves to the first version served."""
        with self._start_lock:
            if not self._started:
                self._started = True
                self._first: Future[Weights] = self._loader.submit(self._load_first)
            return self._first

    def _load_first(self) -> Weights:
        try:
            self._current = self._load_tinker() if self.backend == "tinker" else self._load_local()
            for ref in self._latest_refs():
                try:
                    self._put(ref.tenant, self._build(ref))
                except Exception as e:
                    self.counters["swap_errors"] += 1
                    log.error("the published weights %s could not be loaded (%s); serving the base model", ref.path, e)
        except Exception as e:
            self.load_error = f"{type(e).__name__}: {e}"
            log.error("the served policy could not load %s: %s", self.base_model, self.load_error)
            raise
        if self.db is not None and self.poll_interval:
            from .watch import WeightsWatcher

            loaded = [w.ref for w in [self._current, *self._tenants.values()] if w.ref is not None]
            self._watcher = WeightsWatcher(
                self.db, [self.swap], interval=self.poll_interval, seen=loaded, name="policy"
            )
            self._watcher.start()
        log.info("served policy %s ready on %s (%s)", self.model_name, self.device, self._current.label)
        return self._current

    def _set_tokenizer(self, tok: Any, extra_stop: Any = None) -> None:
        self._tokenizer = tok
        stop = {tok.eos_token_id, *_as_list(extra_stop)}
        im_end = tok.convert_tokens_to_ids("<|im_end|>") if "<|im_end|>" in tok.get_vocab() else None
        self._stop_ids = frozenset(i for i in (*stop, im_end) if isinstance(i, int))

    def _load_local(self) -> Weights:
        with ML_IMPORT_LOCK:
            import torch

        if self.device == "auto":
            self.device = "cuda" if torch.cuda.is_available() else "cpu"
        model, tok = load_base(self.base_model, self.device)
        model.eval()
        self._base = model
        self._set_tokenizer(tok, getattr(model.generation_config, "eos_token_id", None))
        self._max_positions = getattr(model.config, "max_position_embeddings", None)
        # transformers 5 renamed the KV cache argument and output field (past_key_values -> cache)
        self._cache_kw = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
        self._torch = torch
        return Weights(model, None, BASE)

    def _load_tinker(self) -> Weights:
        if self._service is None:
            import tinker

            self._service = tinker.ServiceClient()
        client = self._service.create_sampling_client(base_model=self.base_model).result()
        self._set_tokenizer(client.get_tokenizer())
        self.device = "tinker"
        return Weights(client, None, BASE)

    def wait_ready(self, timeout: float | None = None) -> Weights:
        """The current version, after the first load (raises the load's error, or TimeoutError)."""
        return self.start().result(timeout)

    def close(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()
        self._loader.shutdown(wait=False, cancel_futures=True)
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _serves(self, ref: WeightsRef) -> bool:
        """Whether this policy serves ``ref``: a tenant's own weights under scope tenant, else those of every
        tenant (a tenant's weights never answer everyone, nor weights of everyone a tenant with its own)."""
        return (ref.tenant is not None) == (self.scope == "tenant")

    def _latest_refs(self) -> list[WeightsRef]:
        if self.db is None:
            return []
        refs = list(by_tenant(self.db).values()) if self.scope == "tenant" else [latest(self.db)]
        return [r for r in refs if r is not None and r.backend == self.backend and self._serves(r)]

    def _latest_ref(self, whose: str | None) -> WeightsRef | None:
        if self.db is None:
            return None
        ref = latest(self.db, whose)
        ok = ref is not None and ref.tenant == whose and ref.backend == self.backend and self._serves(ref)
        return ref if ok else None

    def _slot(self, whose: str | None) -> Weights:
        cur = self._current if whose is None else self._tenants.get(whose, self._current)
        assert cur is not None
        return cur

    def _put(self, whose: str | None, w: Weights) -> None:
        """The switch: one reference (or one dict entry), atomic under the GIL."""
        if whose is None:
            self._current = w
        else:
            self._tenants[whose] = w

    def weights_for(self, tenant: str | None = None) -> Weights | None:
        """The version a request of ``tenant`` starting now gets: under scope tenant its own (the base model when
        it has none; no tenant named is the default tenant), else the one for every tenant."""
        if self.scope == "tenant":
            return self._tenants.get(tenant or DEFAULT_TENANT, self._current)
        return self._current

    # -- hot swap -------------------------------------------------------------------------------------------
    @property
    def current(self) -> Weights | None:
        """The version a request naming no tenant starts on now (:meth:`weights_for`). Hold the object to keep using
        it."""
        return self.weights_for(None)

    def swap(self, ref: WeightsRef) -> Future[Weights]:
        """Load ``ref`` into a new model object on the loader thread, then switch to it. Never blocks.

        A swap that a newer one overtakes (while it waits or loads) is skipped, even when its load failed: the
        trainer prunes older LoRA weights folders. A failed load of the newest keeps the current weights (the future
        carries the error; it is logged and counted)."""
        self._wanted[ref.tenant] = ref
        return self._loader.submit(self._swap, ref)

    def _swap(self, ref: WeightsRef) -> Weights:
        self.wait_ready()
        whose = ref.tenant
        cur = self._slot(whose)
        if not self._serves(ref):
            self.counters["swaps_other_scope"] += 1
            log.info("weights %s are not served here (scope %s, tenant %r)", ref.path, self.scope, whose)
            return cur
        if ref is not self._wanted.get(whose) or (cur.ref is not None and cur.ref == ref):
            return cur  # overtaken while it waited (a loaded one is served even if newer ones follow: no livelock)
        try:
            new = self._build(ref)
        except Exception:
            # The trainer prunes older LoRA weights folders: a load that fails after a newer one was published
            # gives way to it (asked for already, or read from the store now) instead of counting as an error.
            newer = self._latest_ref(whose) if ref is self._wanted.get(whose) else None
            if ref is not self._wanted.get(whose) or (newer is not None and newer.step > ref.step):
                self.counters["swaps_superseded"] += 1
                log.info("hot swap to %s gave way to a newer one (it failed while loading)", ref.path)
                if newer is not None:
                    self.swap(newer)
                return cur
            self.counters["swap_errors"] += 1
            log.exception("hot swap to %s failed; still serving %s", ref.path, cur.label)
            raise
        self.counters["swaps"] += 1  # counted before the new weights show: whoever sees them sees the count too
        self._put(whose, new)
        del cur
        heap.trim()  # the replaced model's memory, once its last request has finished with it
        whom = f" for tenant {whose!r}" if whose is not None else ""
        log.info("served policy %s now answers%s with step %d (%s)", self.model_name, whom, ref.step, ref.path)
        return new

    def _build(self, ref: WeightsRef) -> Weights:
        if ref.backend != self.backend:
            raise ValueError(
                f"weights of the {ref.backend!r} backend ({ref.path}) cannot be served by this {self.backend} policy"
            )
        if self.backend == "tinker":
            if ref.base_model != self.base_model:
                raise ValueError(f"the weights {ref.path} were trained on {ref.base_model}, not on {self.base_model}")
            return Weights(self._service.create_sampling_client(model_path=ref.path).result(), ref, ref.path)
        if not _same_model(ref.base_model, self.base_model):
            raise ValueError(f"the LoRA weights {ref.path} were trained on {ref.base_model}, not on {self.base_model}")
        if not (Path(ref.path) / "adapter_config.json").is_file():
            raise ValueError(f"{ref.path} is not a folder of PEFT LoRA weights (no adapter_config.json)")
        with ML_IMPORT_LOCK:
            from peft import PeftModel

            model = copy.deepcopy(self._base)  # the base stays pristine: every version starts from it
            if model.dtype in (self._torch.float16, self._torch.bfloat16):
                # merged into 16-bit weights, a small early update rounds away (most of a 2e-5 step in bf16):
                # merge and serve in float32
                model = model.float()
            model = PeftModel.from_pretrained(model, ref.path, is_trainable=False).merge_and_unload()
        model.eval()
        return Weights(model, ref, ref.path)

    # -- sampling -------------------------------------------------------------------------------------------
    def prompt_ids(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> list[int]:
        """The policy's chat template applied to ``messages`` and ``tools``, with the generation prompt: the
        trainer's own rendering (:func:`~metaclaw_plugin.training.chat.prompt_ids`), so the ids recorded here are
        the ids it rebuilds from the captured turn, and the answer trains with these logprobs."""
        self.wait_ready()
        if not messages:
            raise PolicyInputError("messages must not be empty")
        with self._tok_lock:
            return chat.prompt_ids(self._tokenizer, messages, tools)

    def generate(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        max_tokens: int | None = None,
        temperature: float = 1.0,
        top_p: float = 1.0,
        seed: int | None = None,
        tenant: str | None = None,
    ) -> Generation:
        """Sample one answer from ``tenant``'s current weights (blocking; see :meth:`agenerate`)."""
        for item in self.stream(
            messages, tools, max_tokens=max_tokens, temperature=temperature, top_p=top_p, seed=seed, tenant=tenant
        ):
            if isinstance(item, Generation):
                return item
        raise AssertionError("stream ended without a generation")  # pragma: no cover

    def stream(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        max_tokens: int | None = None,
        temperature: float = 1.0,
        top_p: float = 1.0,
        seed: int | None = None,
        cancel: threading.Event | None = None,
        tenant: str | None = None,
    ) -> Iterator[str | Generation]:
        """Text chunks as they are sampled (tool-call blocks held back), then the :class:`Generation`; sampled
        from the weights of ``tenant`` (:meth:`weights_for`)."""
        if temperature < 0:
            raise PolicyInputError("temperature must be >= 0")
        if not 0 < top_p <= 1:
            raise PolicyInputError("top_p must be in (0, 1]")
        n = self.max_new_tokens if max_tokens is None else int(max_tokens)
        if n < 1:
            raise PolicyInputError("max_tokens must be at least 1")
        prompt = self.prompt_ids(messages, tools)
        if self._max_positions and len(prompt) + n > self._max_positions:
            n = self._max_positions - len(prompt)
            if n < 1:
                raise PolicyInputError(
                    f"the prompt is {len(prompt)} tokens; the model's context is {self._max_positions}"
                )
        w = self.weights_for(tenant)  # read once: this request finishes on these weights whatever swaps meanwhile
        assert w is not None
        self.counters["requests"] += 1
        seed = seed if seed is not None else secrets.randbits(63)
        sample = self._sample_tinker if self.backend == "tinker" else self._sample_local
        out: list[int] = []
        lps: list[float] = []
        finish = "length"
        sent = 0
        text = ""
        for tok, lp in sample(w, prompt, n, temperature, top_p, seed):
            out.append(tok)
            lps.append(lp)
            if tok in self._stop_ids:
                finish = "stop"
                break
            with self._tok_lock:
                text = self._tokenizer.decode(out, skip_special_tokens=True)
            if not text.endswith("\ufffd"):  # a multi-byte character is complete
                upto = safe_prefix(text)
                if upto > sent:
                    yield text[sent:upto]
                    sent = upto
            if cancel is not None and cancel.is_set():
                finish = "cancelled"
                break
        with self._tok_lock:
            text = self._tokenizer.decode(out, skip_special_tokens=True)
        content, calls = parse_tool_calls(text)
        if not calls and len(text) > sent:
            yield text[sent:]  # held back as a possible tool call that was not one
        if calls:
            finish = "tool_calls"
        g = Generation(
            content,
            calls,
            finish,
            prompt,
            out,
            lps,
            self.model_name,
            w.label,
            w.ref.step if w.ref else None,
            temperature if temperature > 0 else 1.0,
            top_p,
        )
        if finish != "cancelled":  # nobody received it: nothing to learn from
            self._record(g)
        yield g

    def _sample_local(
        self, w: Weights, prompt: list[int], n: int, temperature: float, top_p: float, seed: int
    ) -> Iterator[tuple[int, float]]:
        """Token by token with a KV cache: (token, its logprob under the sampling distribution)."""
        torch = self._torch
        gen = torch.Generator(device=self.device)
        gen.manual_seed(seed)
        past = None
        ids = torch.tensor([prompt], device=self.device)
        for _ in range(n):
            with torch.no_grad():
                o = w.model(input_ids=ids, use_cache=True, **{self._cache_kw: past})
                past = getattr(o, self._cache_kw)
                logits = o.logits[0, -1].float()
                if temperature > 0:
                    logp = torch.log_softmax(logits / temperature, dim=-1)
                    probs = logp.exp()
                    if top_p < 1.0:  # the nucleus: the most likely tokens until their mass reaches top_p
                        sorted_p, order = probs.sort(descending=True)
                        outside = sorted_p.cumsum(0) - sorted_p >= top_p
                        probs = probs.scatter(0, order, sorted_p.masked_fill(outside, 0.0))
                    tok = int(torch.multinomial(probs, 1, generator=gen).item())
                else:
                    logp = torch.log_softmax(logits, dim=-1)
                    tok = int(logits.argmax().item())
            yield tok, float(logp[tok].item())
            ids = torch.tensor([[tok]], device=self.device)

    def _sample_tinker(
        self, w: Weights, prompt: list[int], n: int, temperature: float, top_p: float, seed: int
    ) -> Iterator[tuple[int, float]]:
        """One request to Tinker's sampling client (no token streaming): the tokens and their logprobs."""
        from tinker import types

        params = types.SamplingParams(
            max_tokens=n, temperature=temperature, top_p=top_p, seed=seed % 2**31, stop=sorted(self._stop_ids)
        )
        resp = w.model.sample(prompt=types.ModelInput.from_ints(prompt), num_samples=1, sampling_params=params)
        seq = resp.result().sequences[0]
        lps = seq.logprobs
        if lps is None or len(lps) != len(seq.tokens):
            raise RuntimeError("Tinker returned no logprobs for the sampled tokens")
        yield from zip((int(t) for t in seq.tokens), (float(x) for x in lps))

    def _record(self, g: Generation) -> None:
        if self.db is None:
            return
        try:
            key = tokens.response_key(g.content, g.tool_calls)
            rec = tokens.TokenRecord(
                g.prompt_ids,
                g.response_ids,
                g.logprobs,
                model=g.model,
                weights=g.weights,
                temperature=g.temperature,
                top_p=g.top_p,
                step=g.step,
            )
            tokens.record(self.db, key, rec)
        except Exception:
            self.counters["record_errors"] += 1
            log.exception("the served policy could not record the tokens of an answer; the answer is sent anyway")

    # -- async ----------------------------------------------------------------------------------------------
    async def agenerate(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None, **kw: Any
    ) -> Generation:
        """:meth:`generate` on the worker pool."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, lambda: self.generate(messages, tools, **kw))

    async def astream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None, **kw: Any
    ) -> AsyncGenerator[str | Generation, None]:
        """:meth:`stream` on the worker pool; a consumer that stops early cancels the sampling."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Any] = asyncio.Queue()
        cancel = threading.Event()
        done = object()

        def put(item: Any) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, item)

        def run() -> None:
            try:
                for item in self.stream(messages, tools, cancel=cancel, **kw):
                    put(item)
            except BaseException as e:
                put(e)
            put(done)

        self._pool.submit(run)
        try:
            while True:
                item = await queue.get()
                if item is done:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            cancel.set()

    def status(self) -> dict[str, Any]:
        w = self.weights_for(None)  # what a request naming no tenant gets
        return {
            "model": self.model_name,
            "base_model": self.base_model,
            "device": self.device,
            "ready": w is not None,
            "load_error": self.load_error,
            "weights": w.label if w else None,
            "step": w.ref.step if w and w.ref else None,
            "scope": self.scope,
            "tenants": {t: v.ref.step if v.ref else None for t, v in sorted(self._tenants.items())},
            **{
                k: self.counters[k]
                for k in ("requests", "swaps", "swaps_superseded", "swap_errors", "swaps_other_scope", "record_errors")
            },
        }


def _as_list(x: Any) -> list[Any]:
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple, set)) else [x]
