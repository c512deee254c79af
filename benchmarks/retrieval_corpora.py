"""Tool retrieval over several corpora: Sylk's search against plain bm25s on each.

A corpus is a folder with ``tools.jsonl`` and ``queries.jsonl`` (the builders in
``benchmarks/corpora/`` write them; a converted MetaTool folder is one too). Each is
indexed on its own, every query goes through the gateway's ``search`` (limit 10), and
the baseline is bm25s with its defaults over ``name + description``. Per corpus: R@1,
R@5, R@10 and nDCG@10 for both, ours / bm25s, and the corpus's role (``tuning`` or
``held-out``, from ``--tuned NAME``; a role is stated before tuning, not after).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from retrieval_metrics import SearchFn, bm25s_search, evaluate, load_jsonl, op_name, ratios

KEYS = ("recall@1", "recall@5", "recall@10", "ndcg@10")

OurSearch = Callable[[Sequence[dict[str, Any]]], SearchFn]


def corpus_result(
    folder: Path, ours: OurSearch, role: str, split: Callable[[list[Any]], list[Any]]
) -> dict[str, Any]:
    tools = load_jsonl(folder / "tools.jsonl")
    queries = split(load_jsonl(folder / "queries.jsonl"))
    ids = [op_name(t["id"]) for t in tools]
    base = bm25s_search([f"{t['name']} {t['description']}" for t in tools], ids)
    start = time.perf_counter()
    search = ours(tools)
    index_s = time.perf_counter() - start
    theirs, _ = evaluate(base, queries, multi=False)
    mine, _ = evaluate(search, queries, multi=False)
    return {
        "role": role,
        "n_tools": len(tools),
        "n_queries": len(queries),
        "ours": {k: mine[k] for k in (*KEYS, "p50_ms")},
        "bm25s_name_description": {k: theirs[k] for k in (*KEYS, "p50_ms")},
        "ours_vs_bm25s": {k: v for k, v in ratios(mine, theirs).items() if k in KEYS},
        "ours_index_s": round(index_s, 3),
    }


def run_corpora(
    folders: Sequence[Path],
    ours: OurSearch,
    tuned: Sequence[str],
    split: Callable[[list[Any]], list[Any]],
) -> dict[str, Any]:
    """``{corpus name: result}``; a corpus is named by its folder's name."""
    return {
        folder.name: corpus_result(
            folder, ours, "tuning" if folder.name in tuned else "held-out", split
        )
        for folder in folders
    }


def table(results: dict[str, Any]) -> str:
    """A Markdown table of the results, for RESULTS.md."""
    lines = [
        "| corpus | role | tools | queries | R@1 ours / bm25s | R@5 | R@10 | nDCG@10 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, r in results.items():
        cells = [f"{r['ours'][k]:.3f} / {r['bm25s_name_description'][k]:.3f}" for k in KEYS]
        lines.append(
            f"| {name} | {r['role']} | {r['n_tools']} | {r['n_queries']} | "
            + " | ".join(cells)
            + " |"
        )
    return "\n".join(lines)
