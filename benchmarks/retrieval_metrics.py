"""Retrieval metrics and the bm25s baseline, shared by the tool-retrieval benchmarks.

Metrics, averaged over queries: recall@k = |gold in top k| / |gold| (for one gold tool,
the hit rate), nDCG@10 with binary relevance, and for multi-tool queries also all@k = the
share of queries with every gold tool in the top k. Rankings are lists of op names
(``<domain>.<tool id>``); gold ids are turned into op names with :func:`op_name`.
"""

from __future__ import annotations

import json
import math
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

DOMAIN = "metatool"
LIMIT = 10
KS = (1, 5, 10)

SearchFn = Callable[[str, int], list[str]]


def op_name(tool_id: str) -> str:
    return f"{DOMAIN}.{tool_id}"


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def bm25s_search(texts: Sequence[str], ids: Sequence[str]) -> SearchFn:
    import bm25s  # type: ignore[import-untyped,unused-ignore]

    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(list(texts), show_progress=False), show_progress=False)

    def search(query: str, limit: int) -> list[str]:
        tokens = bm25s.tokenize([query], return_ids=False, show_progress=False)
        if not any(t in retriever.vocab_dict for t in tokens[0]):
            return []
        docs, scores = retriever.retrieve(tokens, k=min(limit, len(ids)), show_progress=False)
        # bm25s fills the top k with arbitrary documents at score 0: they are no match.
        return [ids[i] for i, s in zip(docs[0], scores[0], strict=True) if s > 0]

    return search


def ndcg(ranked: Sequence[str], gold: set[str], k: int) -> float:
    dcg = sum(1.0 / math.log2(i + 2) for i, op in enumerate(ranked[:k]) if op in gold)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(gold), k)))
    return dcg / ideal if ideal else 0.0


def evaluate(
    search: SearchFn, queries: Sequence[dict[str, Any]], multi: bool
) -> tuple[dict[str, Any], list[list[str]]]:
    rankings: list[list[str]] = []
    latencies: list[float] = []
    start = time.perf_counter()
    for item in queries:
        began = time.perf_counter()
        rankings.append(search(item["query"], LIMIT)[:LIMIT])
        latencies.append(time.perf_counter() - began)
    elapsed = time.perf_counter() - start
    metrics = score(queries, rankings, multi)
    n = len(queries)
    metrics["mean_ms"] = round(elapsed * 1000 / n, 3) if n else None
    if latencies:
        latencies.sort()
        for q in (50, 99):
            at = min(len(latencies) - 1, math.ceil(q / 100 * len(latencies)) - 1)
            metrics[f"p{q}_ms"] = round(latencies[at] * 1000, 3)
    return metrics, rankings


def score(
    queries: Sequence[dict[str, Any]], rankings: Sequence[list[str]], multi: bool
) -> dict[str, Any]:
    """Recall@k, nDCG@10 (and all@k for multi-tool queries) of rankings already made."""
    sums: dict[str, float] = defaultdict(float)
    for item, ranked in zip(queries, rankings, strict=True):
        gold = {op_name(g) for g in item["gold"]}
        for k in KS:
            found = len(gold.intersection(ranked[:k]))
            sums[f"recall@{k}"] += found / len(gold)
            if multi:
                sums[f"all@{k}"] += float(found == len(gold))
        sums["ndcg@10"] += ndcg(ranked, gold, 10)
        sums["empty"] += float(not ranked)
    n = len(queries)
    metrics: dict[str, Any] = {key: round(value / n, 4) for key, value in sums.items()} if n else {}
    metrics["empty"] = int(sums["empty"])
    metrics["n"] = n
    return metrics


def halves(
    queries: Sequence[dict[str, Any]], rankings: Sequence[list[str]], multi: bool
) -> dict[str, dict[str, Any]]:
    """Metrics on even- (tuning) and odd-numbered (held-out) queries."""
    return {
        name: score(queries[parity::2], rankings[parity::2], multi)
        for name, parity in (("even", 0), ("odd", 1))
    }


def analyse(
    queries: Sequence[dict[str, Any]],
    rankings: Sequence[list[str]],
    failures: int,
    worst_tools: int,
) -> dict[str, Any]:
    """Per-tool recall@5 (worst first), the commonest wrong top-1 per tool, sample misses."""
    per_tool: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    wrong_top1: dict[str, Counter[str]] = defaultdict(Counter)
    misses: list[dict[str, Any]] = []
    for item, ranked in zip(queries, rankings, strict=True):
        gold = [op_name(g) for g in item["gold"]]
        for g in gold:
            per_tool[g][0] += 1
            per_tool[g][1] += g in ranked[:5]
            if ranked and ranked[0] not in gold:
                wrong_top1[g][ranked[0]] += 1
        if not set(gold).intersection(ranked[:5]) and len(misses) < failures:
            misses.append({"query": item["query"], "gold": gold, "top5": ranked[:5]})
    worst = sorted(per_tool.items(), key=lambda kv: (kv[1][1] / kv[1][0], -kv[1][0], kv[0]))
    return {
        "worst_tools_recall@5": [
            {
                "op": op,
                "n": n,
                "recall@5": round(hit / n, 3),
                "top1_instead": wrong_top1[op].most_common(2),
            }
            for op, (n, hit) in worst[:worst_tools]
        ],
        "sample_misses@5": misses,
    }


def ratios(ours: dict[str, Any], base: dict[str, Any]) -> dict[str, float | None]:
    keys = [k for k in ours if k.startswith(("recall@", "ndcg@", "all@"))]
    return {k: round(ours[k] / base[k], 3) if base.get(k) else None for k in keys}


def take_split(queries: Sequence[dict[str, Any]], split: str) -> list[dict[str, Any]]:
    """The even-numbered (tuning) or odd-numbered (held-out) queries of a file."""
    return list(queries[{"even": 0, "odd": 1}[split] :: 2])
