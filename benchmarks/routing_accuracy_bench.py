"""The Guide's pattern tier: accuracy on the labelled routing sets and classify() latency.

Accuracy is measured on ``tests/data/routing_set.jsonl`` (the development set:
the patterns were tuned while looking at its errors) and on every
``tests/data/routing_holdout*.jsonl`` (written before the pattern changes they
test and never used for tuning), each reported under its own name
(``holdout``, ``holdout2``, ...). For each: overall target accuracy, target+intent accuracy,
per target and per intent, confusion counts (expected -> got), clear vs
ambiguous items, the share at or above CONFIDENT and the accuracy within it,
subject exact-match (where labelled) and time-scope match (Archivalist items).

Latency: every text of every set classified ``--repeat`` times after a warm-up,
one ``perf_counter_ns`` pair per call; p50/p99/mean/max in microseconds.

    .venv/bin/python benchmarks/routing_accuracy_bench.py [--repeat 50]

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import machine_info  # benchmarks/machine_info.py, beside this script

from backend.guide.routing.decision import CONFIDENT, Classification
from backend.guide.routing.patterns import classify

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"


def sets() -> dict[str, Path]:
    """The dev set, then each holdout set by name: routing_holdout2.jsonl -> "holdout2"."""
    found = {"dev": DATA / "routing_set.jsonl"}
    for path in sorted(DATA.glob("routing_holdout*.jsonl")):
        found[path.stem.removeprefix("routing_")] = path
    return found


def machine() -> dict[str, Any]:
    return machine_info.machine()


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def share(right: int, total: int) -> float | None:
    return round(right / total, 4) if total else None


def score(items: list[dict[str, Any]]) -> dict[str, Any]:
    results: list[tuple[dict[str, Any], Classification]] = [(i, classify(i["text"])) for i in items]
    target_ok = [got.target.value == item["target"] for item, got in results]
    full_ok = [
        ok and (item["intent"] is None or got.intent == item["intent"])
        for ok, (item, got) in zip(target_ok, results, strict=True)
    ]

    per_target: dict[str, Counter[str]] = {}
    per_intent: dict[str, Counter[str]] = {}
    confusion: Counter[str] = Counter()
    buckets: dict[str, Counter[str]] = {k: Counter() for k in ("clear", "ambiguous")}
    confident: Counter[str] = Counter()
    subject: Counter[str] = Counter()
    scope: Counter[str] = Counter()
    for ok, full, (item, got) in zip(target_ok, full_ok, results, strict=True):
        per_target.setdefault(item["target"], Counter()).update(n=1, right=ok)
        per_target.setdefault(got.target.value, Counter()).update(predicted=1)
        if item["intent"] is not None:
            key = f"{item['target']}.{item['intent']}"
            per_intent.setdefault(key, Counter()).update(n=1, right=full)
        if not ok:
            confusion[f"{item['target']} -> {got.target.value}"] += 1
        buckets["ambiguous" if item["ambiguous"] else "clear"].update(n=1, right=ok)
        if got.confidence >= CONFIDENT:
            confident.update(n=1, right=ok)
        else:
            confident.update(below_n=1, below_right=ok)
        if ok and item["subject"] is not None:
            subject.update(n=1, right=got.subject == item["subject"])
        if ok and item["target"] == "archivalist":
            scope.update(n=1, right=got.time_scope == item["time_scope"])

    return {
        "n": len(items),
        "accuracy": share(sum(target_ok), len(items)),
        "accuracy_target_and_intent": share(sum(full_ok), len(items)),
        "clear": {"n": buckets["clear"]["n"], "accuracy": share(*_rn(buckets["clear"]))},
        "ambiguous": {
            "n": buckets["ambiguous"]["n"],
            "accuracy": share(*_rn(buckets["ambiguous"])),
        },
        "confident": {
            "threshold": CONFIDENT,
            "share": share(confident["n"], len(items)),
            "accuracy": share(*_rn(confident)),
            "accuracy_below": share(confident["below_right"], confident["below_n"]),
        },
        "per_target": {
            t: {
                "n": c["n"],
                "recall": share(c["right"], c["n"]),
                "precision": share(c["right"], c["predicted"]),
            }
            for t, c in sorted(per_target.items())
        },
        "per_intent": {
            k: {"n": c["n"], "accuracy": share(*_rn(c))} for k, c in sorted(per_intent.items())
        },
        "confusion": dict(confusion.most_common()),
        "subject_exact": {"n": subject["n"], "accuracy": share(*_rn(subject))},
        "time_scope": {"n": scope["n"], "accuracy": share(*_rn(scope))},
    }


def _rn(counter: Counter[str]) -> tuple[int, int]:
    return counter["right"], counter["n"]


def latency(texts: list[str], repeat: int) -> dict[str, Any]:
    for text in texts:  # warm-up: regex caches, pydantic validators
        classify(text)
    samples: list[float] = []
    clock = time.perf_counter_ns
    for _ in range(repeat):
        for text in texts:
            start = clock()
            classify(text)
            samples.append((clock() - start) / 1000)
    samples.sort()
    return {
        "calls": len(samples),
        "p50_us": round(samples[len(samples) // 2], 1),
        "p90_us": round(samples[int(len(samples) * 0.9)], 1),
        "p99_us": round(samples[int(len(samples) * 0.99)], 1),
        "mean_us": round(statistics.fmean(samples), 1),
        "max_us": round(samples[-1], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=50, help="latency passes over the texts")
    args = parser.parse_args()
    data = {name: load(path) for name, path in sets().items()}
    texts = [item["text"] for items in data.values() for item in items]
    report = {
        "benchmark": "routing_accuracy",
        "machine": machine(),
        "sets": {name: score(items) for name, items in data.items()},
        "latency": latency(texts, args.repeat),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
