"""Fusion grid for the hybrid search: capture each query's two rankings once, then score
fusion rules offline (seconds per rule instead of minutes per corpus run).

    .venv/bin/python benchmarks/fusion_grid.py capture --corpus DIR [--split even] --out F.pkl
    .venv/bin/python benchmarks/fusion_grid.py grid F.pkl [F.pkl ...]

``capture`` runs every query through ``Gateway.search`` with the semantic stage (its
defaults) and records, per query, the lexical top ``depth`` (id, BM25 score) and the
dense top ``depth`` (id, cosine) the stage fused. ``grid`` re-fuses them under each rule
in :func:`rules` and prints R@1 / R@5 per corpus as JSON. Tuning corpora only: a held-out
corpus is evaluated once, by ``tool_retrieval_bench.py --corpus``, after the choice.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from retrieval_metrics import LIMIT, load_jsonl, op_name, take_split
from sylk_search import PrimedModel, make_skills, our_search

Lists = tuple[list[tuple[str, float]], list[tuple[str, float]]]


def capture(folder: Path, split: str, out: Path) -> None:
    from backend.skills.search.embedding import EmbeddingStage

    tools = load_jsonl(folder / "tools.jsonl")
    queries = load_jsonl(folder / "queries.jsonl")
    if split != "all":
        queries = take_split(queries, split)
    seen: dict[str, Lists] = {}

    class Recording(EmbeddingStage):
        def search(self, query: str, lexical: Any, **kw: Any) -> list[tuple[str, float]]:
            depth = max(self.depth, kw.get("limit", 10))
            bm25 = lexical.search(query, domain=kw.get("domain"), limit=depth)
            dense = self.dense(query, domain=kw.get("domain"), limit=depth)
            seen[query] = (bm25, dense)
            return super().search(query, lexical, **kw)

    model = PrimedModel(EmbeddingStage().model)
    model.prime([q["query"] for q in queries])
    stage = Recording(model, query_cache=8)
    _, search = our_search(make_skills(tools), embedding=stage)
    rows = []
    for q in queries:
        search(q["query"], LIMIT)
        bm25, dense = seen[q["query"]]
        rows.append(
            {
                "query": q["query"],
                "gold": [op_name(g) for g in q["gold"]],
                "bm25": bm25,
                "dense": dense,
            }
        )
    out.write_bytes(pickle.dumps({"corpus": folder.name, "split": split, "rows": rows}))


Ranked = list[tuple[str, float]]
Rule = Callable[[str, Ranked, Ranked], list[str]]
Condition = Callable[[str, Ranked, Ranked], bool]


def fuse(
    bm25: Ranked, dense: Ranked, weight: float, k: float = 10.0, floor: float = -1.0
) -> list[str]:
    """``EmbeddingStage``'s RRF; ``floor``: a dense-only candidate below this cosine is dropped."""
    scores: dict[str, float] = {}
    for rank, (doc, _) in enumerate(bm25):
        scores[doc] = weight / (k + rank + 1)
    for rank, (doc, cos) in enumerate(dense):
        if cos < floor and doc not in scores:
            continue
        scores[doc] = scores.get(doc, 0.0) + 1.0 / (k + rank + 1)
    return [d for d, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))]


def margin(bm25: Ranked) -> float:
    """How far BM25's best hit leads its second, as a share of its score (1: only hit)."""
    if not bm25 or bm25[0][1] <= 0:
        return 0.0
    return 1.0 - (bm25[1][1] if len(bm25) > 1 else 0.0) / bm25[0][1]


def name_hit(query: str, bm25: Ranked) -> float:
    """The share of the query's words that are words of BM25's best hit's name."""
    from backend.terms import tokenize, tokenize_query

    terms = tokenize_query(query)
    if not bm25 or not terms:
        return 0.0
    name = set(tokenize(bm25[0][0].split(".", 1)[-1].replace("_", " ")))
    return sum(t in name for t in terms) / len(terms)


_DOC_TERMS: dict[str, frozenset[str]] = {}
"""Op id -> the terms of its name and description (filled by :func:`grid` per corpus)."""


def coverage(query: str, bm25: Ranked, top: int = 1) -> float:
    """The share of the query's terms found in one of BM25's best ``top`` hits' texts."""
    from backend.terms import tokenize_query

    terms = set(tokenize_query(query))
    if not bm25 or not terms:
        return 0.0
    return max(len(terms & _DOC_TERMS.get(doc, frozenset())) / len(terms) for doc, _ in bm25[:top])


def dense_rank(doc: str, dense: Ranked) -> int:
    return next((i for i, (d, _) in enumerate(dense) if d == doc), len(dense))


def switched(weight: float, boost: float, when: Condition) -> Rule:
    """Lexical weight ``boost`` for a query meeting ``when``, else ``weight``."""
    return lambda q, b, d: fuse(b, d, boost if when(q, b, d) else weight)


def rules() -> dict[str, Rule]:
    out: dict[str, Rule] = {"lexical": lambda q, b, d: [x for x, _ in b]}
    for w in (0.5, 0.75, 1.0):
        for k in (10.0, 30.0, 60.0):
            out[f"w{w} k{k:g}"] = lambda q, b, d, w=w, k=k: fuse(b, d, w, k)
    for floor in (0.2, 0.3, 0.4):
        out[f"floor {floor}"] = lambda q, b, d, f=floor: fuse(b, d, 0.5, floor=f)
    conditions: dict[str, Condition] = {}
    for m in (0.1, 0.2, 0.3, 0.5):
        conditions[f"margin>={m}"] = lambda q, b, d, m=m: margin(b) >= m
    for n in (0.5, 0.75, 1.0):
        conditions[f"name>={n}"] = lambda q, b, d, n=n: name_hit(q, b) >= n
    for r in (0, 1, 2, 4):
        conditions[f"agree<={r}"] = lambda q, b, d, r=r: bool(b) and dense_rank(b[0][0], d) <= r
    for c in (0.6, 0.7, 0.8, 0.9, 1.0):
        conditions[f"cover>={c}"] = lambda q, b, d, c=c: coverage(q, b) >= c
    for c in (0.3, 0.4, 0.5):
        conditions[f"dense<{c}"] = lambda q, b, d, c=c: bool(d) and d[0][1] < c
    for c in (0.02, 0.05):
        conditions[f"denseflat<{c}"] = lambda q, b, d, c=c: len(d) > 1 and d[0][1] - d[1][1] < c
    for m in (0.2, 0.4):
        for r in (0, 1, 2):
            conditions[f"margin>={m}&agree<={r}"] = lambda q, b, d, m=m, r=r: (
                margin(b) >= m and bool(b) and dense_rank(b[0][0], d) <= r
            )
    for name, when in conditions.items():
        for boost in (1.0, 2.0, 4.0, 100.0):
            out[f"{name} -> {boost}"] = switched(0.5, boost, when)
    return out


def evaluate(rows: Sequence[dict[str, Any]], rule: Rule) -> dict[str, float]:
    r1 = r5 = 0.0
    for row in rows:
        ranked = rule(row["query"], row["bm25"], row["dense"])
        gold = set(row["gold"])
        r1 += len(gold & set(ranked[:1])) / len(gold)
        r5 += len(gold & set(ranked[:5])) / len(gold)
    n = len(rows) or 1
    return {"r1": round(r1 / n, 4), "r5": round(r5 / n, 4)}


def _index_texts(root: Path, corpus: str) -> None:
    from backend.terms import tokenize

    for tool in load_jsonl(root / corpus / "tools.jsonl"):
        text = f"{tool['name']} {tool['id']} {tool.get('description', '')}"
        _DOC_TERMS[op_name(tool["id"])] = frozenset(tokenize(text))


def grid(files: Sequence[Path], root: Path | None = None) -> dict[str, Any]:
    loaded = [pickle.loads(f.read_bytes()) for f in files]
    for d in loaded:
        if root is not None:
            _index_texts(root, d["corpus"])
    names = [f"{d['corpus']}-{d['split']}" for d in loaded]
    return {
        label: {n: evaluate(d["rows"], rule) for n, d in zip(names, loaded, strict=True)}
        for label, rule in rules().items()
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd", required=True)
    cap = sub.add_parser("capture")
    cap.add_argument("--corpus", type=Path, required=True)
    cap.add_argument("--split", default="all")
    cap.add_argument("--out", type=Path, required=True)
    runs = sub.add_parser("grid")
    runs.add_argument("files", type=Path, nargs="+")
    runs.add_argument("--corpora", type=Path, help="folder of the corpora (for coverage)")
    args = parser.parse_args(argv)
    if args.cmd == "capture":
        capture(args.corpus, args.split, args.out)
    else:
        json.dump(grid(args.files, args.corpora), sys.stdout, indent=1)
        sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
