"""Tool retrieval over several corpora: Sylk's search against plain bm25s on each.

A corpus is a folder with ``tools.jsonl`` and ``queries.jsonl`` (the builders in
``benchmarks/corpora/`` write them; a converted MetaTool folder is one too). Each is
indexed on its own, every query goes through the gateway's ``search`` (limit 10), and
the baseline is bm25s with its defaults over ``name + description``. Per corpus: R@1,
R@5, R@10 and nDCG@10 for each of our searches (``ours``: lexical; ``hybrid``: with the
semantic stage, when asked) and bm25s, and the corpus's role (``tuning`` or
``held-out``, from ``--tuned NAME``; a role is stated before tuning, not after).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from retrieval_metrics import (
    SearchFn,
    bm25s_search,
    evaluate,
    halves,
    load_jsonl,
    op_name,
    ratios,
)

KEYS = ("recall@1", "recall@5", "recall@10", "ndcg@10")
BASELINE = "bm25s_name_description"

# (tools, the query texts it will be asked) -> a search; the texts let a semantic stage
# embed them beforehand, in batches.
OurSearch = Callable[[Sequence[dict[str, Any]], Sequence[str]], SearchFn]


def corpus_result(
    folder: Path,
    searches: Mapping[str, OurSearch],
    role: str,
    split: Callable[[list[Any]], list[Any]],
) -> dict[str, Any]:
    tools = load_jsonl(folder / "tools.jsonl")
    queries = split(load_jsonl(folder / "queries.jsonl"))
    ids = [op_name(t["id"]) for t in tools]
    base = bm25s_search([f"{t['name']} {t['description']}" for t in tools], ids)
    theirs, base_rankings = evaluate(base, queries, multi=False)
    out: dict[str, Any] = {"role": role, "n_tools": len(tools), "n_queries": len(queries)}
    for name, make in searches.items():
        start = time.perf_counter()
        search = make(tools, [q["query"] for q in queries])
        out[f"{name}_index_s"] = round(time.perf_counter() - start, 3)
        mine, rankings = evaluate(search, queries, multi=False)
        out[name] = {k: mine[k] for k in (*KEYS, "p50_ms")}
        # Even- and odd-numbered queries (MetaTool's tuning and held-out halves).
        out[f"{name}_by_half"] = {
            half: {k: v[k] for k in KEYS} for half, v in halves(queries, rankings, False).items()
        }
        out[f"{name}_vs_bm25s"] = {k: v for k, v in ratios(mine, theirs).items() if k in KEYS}
    out[BASELINE] = {k: theirs[k] for k in (*KEYS, "p50_ms")}
    out[f"{BASELINE}_by_half"] = {
        half: {k: v[k] for k in KEYS} for half, v in halves(queries, base_rankings, False).items()
    }
    return out


def run_corpora(
    folders: Sequence[Path],
    searches: Mapping[str, OurSearch],
    tuned: Sequence[str],
    split: Callable[[list[Any]], list[Any]],
) -> dict[str, Any]:
    """``{corpus name: result}``; a corpus is named by its folder's name."""
    return {
        folder.name: corpus_result(
            folder, searches, "tuning" if folder.name in tuned else "held-out", split
        )
        for folder in folders
    }


def table(results: dict[str, Any]) -> str:
    """A Markdown table of the results, for RESULTS.md: each metric as ours / bm25s, or
    lexical / hybrid / bm25s when the hybrid ran."""
    first = next(iter(results.values()), {})
    names = [n for n in ("ours", "hybrid") if n in first] + [BASELINE]
    heads = " / ".join("lexical" if n == "ours" else n.split("_")[0] for n in names)
    lines = [
        f"| corpus | role | tools | queries | R@1 {heads} | R@5 | R@10 | nDCG@10 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for corpus, r in results.items():
        cells = [" / ".join(f"{r[n][k]:.3f}" for n in names) for k in KEYS]
        lines.append(
            f"| {corpus} | {r['role']} | {r['n_tools']} | {r['n_queries']} | "
            + " | ".join(cells)
            + " |"
        )
    return "\n".join(lines)
