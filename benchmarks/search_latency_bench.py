"""Skill search latency at 200 and at 10,000 registered ops, against bm25s.

Ops. The first 199 are the MetaTool tools (``metatool.<id>``, their descriptions); the
rest are synthesised with a fixed seed: a domain from a list of ~40 services, an op
name from an object and a verb (``jira.issue_archive_1234``), a description that opens
with a generated sentence ("Archive issues in Jira, filtered by owner.") followed by a
MetaTool description picked at random, so the vocabulary and lengths stay realistic.
The 200-op point is the first 200 of the same sequence.

Queries: ``--queries`` MetaTool queries sampled with the same seed. For each size: the
time to register every op and build the gateway, then each query through
``Gateway.search`` (what an agent's ``search`` call runs: BM25F, the visibility check
per candidate, the hit envelope) and through the index alone
(``gateway.index.search``), one ``perf_counter_ns`` pair per call. "cold" is the first
pass after registration (the index computes a term's weights the first time a query
uses it, and drops them all on any registry change); "warm" is three more passes over
the same queries (the garbage collector runs between passes, and stays on). The
baseline is bm25s (defaults, op words + description) retrieving the top 10 for one
query at a time, three passes.

    .venv/bin/python benchmarks/search_latency_bench.py [--sizes 200 10000] [--queries 2000] \\
        [--param feedback_docs=0 --param fallback_weight=0]

``--param`` sets a ``BM25Config`` field (as in tool_retrieval_bench.py); the two above turn
query expansion off, which is BM25F as it was before expansion, for a same-machine
comparison.

Prints one JSON object; latencies in microseconds.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from retrieval_metrics import load_jsonl
from sylk_search import AGENT, NoParams, make_skills, noop, search_config
from tool_retrieval_bench import machine

from backend.skills.models import Skill, SkillContext, SkillTier

SEED = 20240611
LIMIT = 10
WARM_PASSES = 3

DOMAINS = (
    "github", "gitlab", "jira", "linear", "slack", "discord", "gmail", "outlook", "calendar",
    "drive", "dropbox", "notion", "confluence", "postgres", "mysql", "redis", "k8s", "docker",
    "aws", "gcp", "azure", "stripe", "shopify", "salesforce", "hubspot", "zendesk", "twilio",
    "figma", "sentry", "datadog", "pagerduty", "spotify", "youtube", "maps", "weather",
    "news", "finance", "travel", "recipes", "fitness",
)  # fmt: skip
OBJECTS = (
    "issue", "pull_request", "branch", "commit", "message", "channel", "thread", "email",
    "event", "file", "folder", "page", "database", "table", "row", "query", "pod",
    "deployment", "container", "bucket", "instance", "invoice", "payment", "customer",
    "order", "product", "ticket", "contact", "lead", "report", "dashboard", "alert",
    "incident", "playlist", "track", "video", "route", "forecast", "article", "flight",
    "hotel", "recipe", "workout", "comment", "label", "user", "team", "schedule", "backup",
)  # fmt: skip
VERBS = (
    "list", "get", "create", "update", "delete", "search", "archive", "export", "import",
    "summarize", "share", "assign", "close", "reopen", "move", "copy", "tag", "watch",
    "sync", "validate", "approve", "cancel", "schedule", "translate", "compare",
)  # fmt: skip
QUALIFIERS = (
    "filtered by owner", "by date range", "for the current user", "across all projects",
    "with pagination", "matching a keyword", "in bulk", "with a dry run first",
    "by status", "for a given region", "sorted by priority", "with attachments",
)  # fmt: skip


def synthesise(tools: Sequence[dict[str, Any]], count: int, seed: int = SEED) -> list[Skill]:
    """``count`` ops: the MetaTool tools first, then deterministic synthetic ones."""
    skills = make_skills(tools)[:count]
    rng = random.Random(seed)
    descriptions = [t["description"] for t in tools]
    i = len(skills)
    while len(skills) < count:
        domain, obj, verb = rng.choice(DOMAINS), rng.choice(OBJECTS), rng.choice(VERBS)
        noun = obj.replace("_", " ")
        sentence = (
            f"{verb.capitalize()} {noun}s in {domain.capitalize()}, {rng.choice(QUALIFIERS)}."
        )
        skills.append(
            Skill(
                op=f"{domain}.{obj}_{verb}_{i}",
                agent=AGENT,
                description=f"{sentence} {rng.choice(descriptions)}",
                params=NoParams,
                handler=noop,
                tier=SkillTier.SPECIALISED,
                tags=(domain, obj) if rng.random() < 0.5 else (),
            )
        )
        i += 1
    return skills


def percentiles(samples_ns: Sequence[int]) -> dict[str, float]:
    us = sorted(s / 1000 for s in samples_ns)
    cuts = statistics.quantiles(us, n=100, method="inclusive")
    return {
        "p50": round(cuts[49], 1),
        "p90": round(cuts[89], 1),
        "p99": round(cuts[98], 1),
        "mean": round(statistics.fmean(us), 1),
        "max": round(us[-1], 1),
    }


def timed(fn: Callable[[str], object], queries: Sequence[str]) -> list[int]:
    samples = []
    clock = time.perf_counter_ns
    for q in queries:
        start = clock()
        fn(q)
        samples.append(clock() - start)
    return samples


def bm25s_timing(skills: Sequence[Skill], queries: Sequence[str]) -> dict[str, Any]:
    import bm25s  # type: ignore[import-untyped,unused-ignore]

    texts = [f"{s.op.replace('.', ' ').replace('_', ' ')} {s.description}" for s in skills]
    start = time.perf_counter()
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, show_progress=False), show_progress=False)
    build_s = time.perf_counter() - start
    k = min(LIMIT, len(skills))

    def search(query: str) -> object:
        tokens = bm25s.tokenize([query], return_ids=False, show_progress=False)
        return retriever.retrieve(tokens, k=k, show_progress=False)

    timed(search, queries[:50])
    samples: list[int] = []
    for _ in range(WARM_PASSES):
        gc.collect()
        samples += timed(search, queries)
    return {"build_s": round(build_s, 3), "search_us": percentiles(samples)}


def measure_size(
    skills: Sequence[Skill], queries: Sequence[str], config: Any = None
) -> dict[str, Any]:
    from backend.skills.gateway.gateway import Gateway
    from backend.skills.registry import Registry

    gc.collect()
    start = time.perf_counter()
    registry = Registry()
    registry.register_all(list(skills))
    gateway = Gateway(registry, search_config=config)
    build_s = time.perf_counter() - start
    ctx = SkillContext(session_id="bench", agent=AGENT, workspace=Path(tempfile.gettempdir()))

    def via_gateway(query: str) -> object:
        return gateway.search(ctx, query, None, LIMIT)

    def via_index(query: str) -> object:
        return gateway.index.search(query, limit=LIMIT)

    gc.collect()
    cold = timed(via_gateway, queries)
    warm: list[int] = []
    index_warm: list[int] = []
    for _ in range(WARM_PASSES):
        gc.collect()
        warm += timed(via_gateway, queries)
        gc.collect()
        index_warm += timed(via_index, queries)
    hits = [len(gateway.index.search(q, limit=LIMIT)) for q in queries[:200]]
    return {
        "ops": len(skills),
        "register_and_build_s": round(build_s, 3),
        "gateway_search_cold_us": percentiles(cold),
        "gateway_search_warm_us": percentiles(warm),
        "index_search_warm_us": percentiles(index_warm),
        "mean_hits": round(statistics.fmean(hits), 2),
        "bm25s": bm25s_timing(skills, queries),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--metatool", type=Path, default=Path("/work/shared/bench/metatool"))
    parser.add_argument("--converted", type=Path, help="a folder metatool_convert.py wrote")
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 10_000])
    parser.add_argument("--queries", type=int, default=2000, help="queries per pass")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument(
        "--param", action="append", default=[], metavar="NAME=VALUE", help="a BM25Config field"
    )
    args = parser.parse_args(argv)
    config, config_record = search_config(None, None, [], args.param)

    with tempfile.TemporaryDirectory(prefix="metatool-") as scratch:
        folder = args.converted
        if folder is None:
            from metatool_convert import convert

            folder = Path(scratch)
            convert(args.metatool, folder)
        tools = load_jsonl(folder / "tools.jsonl")
        all_queries = [q["query"] for q in load_jsonl(folder / "queries.jsonl")]
    queries = random.Random(args.seed).sample(all_queries, min(args.queries, len(all_queries)))
    everything = synthesise(tools, max(args.sizes), args.seed)

    results = {str(size): measure_size(everything[:size], queries, config) for size in args.sizes}
    for result in results.values():
        base = result["bm25s"]["search_us"]
        result["gateway_warm_vs_bm25s"] = {
            k: round(result["gateway_search_warm_us"][k] / base[k], 3) for k in ("p50", "p99")
        }
    out = {
        "machine": machine(),
        "seed": args.seed,
        "queries_per_pass": len(queries),
        "limit": LIMIT,
        "search_config": config_record or "default",
        "sizes": results,
    }
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
