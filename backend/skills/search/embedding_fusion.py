"""How the dense stage merges BM25's ranking with its own.

Kept apart from :mod:`~backend.skills.search.embedding` (which owns the model, the
vectors and the threads that compute them): this is pure arithmetic on two ranked lists,
tuned on the even-numbered MetaTool queries (benchmarks/RESULTS.md, "Tool retrieval").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

Fusion = Literal["rrf", "blend"]


def fuse_rankings(
    bm25: Sequence[tuple[str, float]],
    dense: Sequence[tuple[str, float]],
    *,
    fusion: Fusion,
    lexical_weight: float,
    rrf_k: float,
) -> list[tuple[str, float]]:
    """Every document of either ranking with its fused score, best first.

    ``"rrf"``: lexical_weight / (rrf_k + lexical rank) + 1 / (rrf_k + dense rank).
    ``"blend"``: lexical_weight * bm25 / best bm25 + cosine similarity; a document below
    the dense cut gets the cut's similarity at most (it was not ranked, not dissimilar).
    """
    scores: dict[str, float] = {}
    if fusion == "rrf":
        for rank, (doc_id, _) in enumerate(bm25):
            scores[doc_id] = lexical_weight / (rrf_k + rank + 1)
        for rank, (doc_id, _) in enumerate(dense):
            scores[doc_id] = scores.get(doc_id, 0.0) + 1.0 / (rrf_k + rank + 1)
    else:
        best = bm25[0][1] if bm25 and bm25[0][1] > 0 else 1.0
        for doc_id, score in bm25:
            scores[doc_id] = lexical_weight * score / best
        floor = dense[-1][1] if dense else 0.0
        for doc_id, sim in dense:
            scores[doc_id] = scores.get(doc_id, 0.0) + sim
        for doc_id in scores.keys() - {d for d, _ in dense}:
            scores[doc_id] += floor
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


__all__ = ["Fusion", "fuse_rankings"]
