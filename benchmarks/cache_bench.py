"""The knowledge caches: hit rate on paraphrased questions, and invalidation latency.

Hit rate: every query of ``tests/data/cache_paraphrases.jsonl`` (groups of paraphrases
of one question) is routed by the real :class:`~backend.guide.routing.router.Router`, then
looked up the way the knowledge desk does it. Librarian: LOCATE -> ``locate(subject,
text)``, PATTERN -> ``patterns(subject)``, EXPLAIN -> ``explain(subject)``, anything else
-> ``general(text)``, on a :class:`~backend.knowledge.code.live.CodeKnowledge` over a
temp copy of this repository's ``backend/`` tree. Archivalist: the key and look-up of
``answer_history`` on a
:class:`~backend.knowledge.chronicle.history_cache.HistoryCache` (no chronicle behind it:
only the keying is measured). A query routed to another agent never reaches the cache and
counts as a miss. The baseline is the ideal: each group's first query misses and the rest hit.
Groups whose paraphrases land on several cache keys are listed with their keys.

Invalidation latency: ``--entries`` LOCATE answers are cached, then ``--trials`` times a
file defining one of them is rewritten (write + close) and, separately, saved atomically
(temp file + ``os.replace``); the time from the start of the write to the entry being
dropped (the cache's invalidation listener, then ``peek`` is None). Baseline, in the same
run on the same files: a bare watchdog ``Observer`` whose handler sets a
``threading.Event`` on the first event for the file. The difference is what the
watcher's debounce (100 ms by design), re-hash and the index update add.

    .venv/bin/python benchmarks/cache_bench.py [--entries 200] [--trials 40]

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import machine_info  # benchmarks/machine_info.py, beside this script
from watchdog.events import (
    EVENT_TYPE_CLOSED,
    EVENT_TYPE_CREATED,
    EVENT_TYPE_DELETED,
    EVENT_TYPE_MODIFIED,
    EVENT_TYPE_MOVED,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer

from backend.guide.routing.decision import RouteDecision, Target
from backend.guide.routing.router import Router
from backend.knowledge.chronicle.history_cache import HistoryCache, cache_key, parse_intent
from backend.knowledge.chronicle.text import search_terms
from backend.knowledge.code.evidence import Evidence
from backend.knowledge.code.intent_cache import Intent, entity_key, query_key
from backend.knowledge.code.live import CodeKnowledge

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "cache_paraphrases.jsonl"
SESSION = "sess_bench"
SETTLE_S = 0.3  # between trials, so one trial's trailing events don't join the next batch


def load(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def copy_backend(dest: Path) -> Path:
    root = dest / "ws"
    shutil.copytree(
        ROOT / "backend", root / "backend", ignore=shutil.ignore_patterns("__pycache__")
    )
    return root


# -- hit rate -------------------------------------------------------------------------


async def librarian_lookup(k: CodeKnowledge, d: RouteDecision) -> tuple[str, bool]:
    """(cache key, hit) for one routed question, by the knowledge desk's path."""
    intent = (d.intent or "GENERAL").upper()
    subject = d.subject or d.text
    found: Evidence
    if intent == "LOCATE" and d.subject:
        key = f"LOCATE:{entity_key(d.subject)}"
        found = await k.locate(d.subject, d.text)
    elif intent == "PATTERN":
        key = f"PATTERN:{entity_key(subject)}"
        found = await k.patterns(subject)
    elif intent == "EXPLAIN":
        key = f"EXPLAIN:{entity_key(subject)}"
        found = await k.explain(subject)
    else:
        key = f"GENERAL:{query_key(d.text)}"
        found = await k.general(d.text)
    return key, found.cached


def archivalist_lookup(cache: HistoryCache, d: RouteDecision) -> tuple[str, bool]:
    """(cache key, hit), keyed and stored as ``chronicle_answer.answer_history`` does."""
    kind = parse_intent(d.intent)
    about = d.subject.replace("_", " ") if d.subject else d.text
    key = cache_key(kind, session_id=SESSION, subject=d.subject, text=d.text,
                    time_scope=d.time_scope)  # fmt: skip
    if cache.get(kind, key, text=about) is not None:
        return f"{kind.value}:{key}", True
    cache.put(kind, key, "answer", session_id=SESSION, about=search_terms(about))
    return f"{kind.value}:{key}", False


async def hit_rates(k: CodeKnowledge, items: list[dict[str, str]]) -> dict[str, Any]:
    router = Router()
    history = HistoryCache()
    counts = ("queries", "routed_agent", "routed_agent_intent", "hits", "misses", "ideal_hits")
    per: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(counts, 0))
    keys: dict[str, list[str]] = defaultdict(list)
    first_in_group: set[str] = set()
    cross_group_hits = 0
    for item in items:
        row = per[f"{item['agent']}/{item['intent']}"]
        d = await router.route(item["query"])
        first = item["group"] not in first_in_group
        first_in_group.add(item["group"])
        row["queries"] += 1
        row["ideal_hits"] += 0 if first else 1
        right_agent = d.target.value == item["agent"]
        row["routed_agent"] += right_agent
        row["routed_agent_intent"] += right_agent and d.intent == item["intent"]
        if d.target is Target.LIBRARIAN:
            key, hit = await librarian_lookup(k, d)
        elif d.target is Target.ARCHIVALIST:
            key, hit = archivalist_lookup(history, d)
        else:
            key, hit = f"not cached: routed to {d.target.value}", False
        keys[item["group"]].append(key)
        row["hits" if hit else "misses"] += 1
        cross_group_hits += hit and first
    intents = {}
    for name, row in sorted(per.items()):
        intents[name] = {
            **row,
            "hit_rate": round(row["hits"] / row["queries"], 4),
            "ideal_hit_rate": round(row["ideal_hits"] / row["queries"], 4),
            "share_of_ideal": round(row["hits"] / row["ideal_hits"], 4)
            if row["ideal_hits"]
            else None,
        }
    totals = {
        agent: _total([r for n, r in per.items() if n.startswith(agent)])
        for agent in ("librarian", "archivalist")
    }
    split = {g: _distinct(ks) for g, ks in keys.items() if len(set(ks)) > 1}
    return {
        "queries": len(items),
        "groups": len(keys),
        "per_intent": intents,
        "totals": totals,
        "cross_group_hits": cross_group_hits,
        "split_groups": len(split),
        "split": split,
    }


def _total(rows: list[dict[str, int]]) -> dict[str, float | int]:
    q = sum(r["queries"] for r in rows)
    hits = sum(r["hits"] for r in rows)
    ideal = sum(r["ideal_hits"] for r in rows)
    return {
        "queries": q,
        "hits": hits,
        "hit_rate": round(hits / q, 4) if q else 0.0,
        "ideal_hit_rate": round(ideal / q, 4) if q else 0.0,
        "share_of_ideal": round(hits / ideal, 4) if ideal else 0.0,
    }


def _distinct(keys: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for key in keys:
        out[key] = out.get(key, 0) + 1
    return out


# -- invalidation latency ---------------------------------------------------------------


def pick_targets(k: CodeKnowledge, n: int, seed: int) -> list[tuple[str, str]]:
    """``n`` (name, path) of top-level Python definitions whose name is defined once."""
    rows = (
        k.index.reader()
        .execute(
            "SELECT name, min(path) FROM symbols WHERE parent IS NULL AND path LIKE '%.py' "
            "GROUP BY name COLLATE NOCASE HAVING count(*) = 1 ORDER BY name"
        )
        .fetchall()
    )
    return random.Random(seed).sample([(r[0], r[1]) for r in rows], n)


def edited(path: Path, k: int) -> bytes:
    """The file's bytes with one comment line more (read before the clock starts: a read
    is an "opened" event of its own)."""
    return path.read_bytes() + f"\n# cache bench edit {k}\n".encode()


def save(path: Path, body: bytes, k: int, *, atomic: bool) -> None:
    if atomic:
        tmp = path.with_name(f".{path.name}.{k}.tmp")
        tmp.write_bytes(body)
        os.replace(tmp, path)
    else:
        with path.open("wb") as f:
            f.write(body)


async def cache_latency(
    k: CodeKnowledge,
    dropped: dict[str, float],
    targets: list[tuple[str, str]],
    trials: int,
    *,
    atomic: bool,
) -> list[float]:
    """ms from the start of each edit to the invalidation listener dropping the entry."""
    out = []
    for i in range(trials):
        name, rel = targets[i % len(targets)]
        key = entity_key(name)
        await k.locate(name)  # cached again if an earlier trial dropped it
        assert k.cache.peek(Intent.LOCATE, key) is not None
        body = edited(k.root / rel, i)
        dropped.clear()
        started = time.perf_counter()
        save(k.root / rel, body, i, atomic=atomic)
        deadline = started + 10
        while key not in dropped:
            if time.perf_counter() > deadline:
                raise RuntimeError(f"{name} was not invalidated within 10 s")
            await asyncio.sleep(0.001)
        assert k.cache.peek(Intent.LOCATE, key) is None
        out.append((dropped[key] - started) * 1000)
        await asyncio.sleep(SETTLE_S)
    return out


# The events the FileWatcher acts on (an "opened" or a read-only close changes nothing).
_CONTENT_EVENTS = frozenset(
    {
        EVENT_TYPE_CREATED,
        EVENT_TYPE_MODIFIED,
        EVENT_TYPE_MOVED,
        EVENT_TYPE_DELETED,
        EVENT_TYPE_CLOSED,
    }
)


class _FirstEvent(FileSystemEventHandler):
    def __init__(self) -> None:
        self.target = ""
        self.at = 0.0
        self.kind = ""
        self.seen = threading.Event()

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type not in _CONTENT_EVENTS:
            return
        path = os.fsdecode(event.dest_path or event.src_path)
        if path == self.target and not self.seen.is_set():
            self.at, self.kind = time.perf_counter(), event.event_type
            self.seen.set()


def watchdog_latency(
    root: Path, targets: list[tuple[str, str]], trials: int, *, atomic: bool
) -> tuple[list[float], dict[str, int]]:
    handler = _FirstEvent()
    observer = Observer()
    observer.schedule(handler, str(root), recursive=True)
    observer.start()
    out: list[float] = []
    kinds: dict[str, int] = defaultdict(int)
    try:
        time.sleep(0.2)
        for i in range(trials):
            path = root / targets[i % len(targets)][1]
            body = edited(path, 1000 + i)
            time.sleep(0.01)  # let the read's own events pass
            handler.target, handler.seen = str(path), threading.Event()
            started = time.perf_counter()
            save(path, body, 1000 + i, atomic=atomic)
            if not handler.seen.wait(10):
                raise RuntimeError(f"no watchdog event for {path} within 10 s")
            out.append((handler.at - started) * 1000)
            kinds[handler.kind] += 1
            time.sleep(0.05)
    finally:
        observer.stop()
        observer.join()
    return out, dict(kinds)


def summary(ms: list[float]) -> dict[str, float | int]:
    q = statistics.quantiles(ms, n=100, method="inclusive")
    return {
        "n": len(ms),
        "p50_ms": round(statistics.median(ms), 2),
        "p99_ms": round(q[98], 2),
        "max_ms": round(max(ms), 2),
    }


async def invalidation(k: CodeKnowledge, entries: int, trials: int) -> dict[str, Any]:
    targets = pick_targets(k, entries, seed=20240611)
    for name, _ in targets:
        await k.locate(name)
    cached = k.cache.stats()["LOCATE"]["entries"]
    files = len({rel for _, rel in targets})
    out: dict[str, Any] = {"entries_cached": cached, "target_files": files}
    dropped: dict[str, float] = {}  # entity key -> when the cache dropped it

    def note(_intent: Intent, key: str) -> None:
        dropped.setdefault(key, time.perf_counter())

    k.cache.on_invalidate(note)
    for mode, atomic in (("write_close", False), ("atomic_replace", True)):
        raw, kinds = await asyncio.to_thread(
            watchdog_latency, k.root, targets, trials, atomic=atomic
        )
        await asyncio.sleep(SETTLE_S * 2)  # the knowledge watcher saw those edits too
        ours = await cache_latency(k, dropped, targets, trials, atomic=atomic)
        base, mine = summary(raw), summary(ours)
        out[mode] = {
            "cache_entry_dropped": mine,
            "watchdog_first_event": {**base, "event_kinds": kinds},
            "added_p50_ms": round(mine["p50_ms"] - base["p50_ms"], 2),
            "added_p99_ms": round(mine["p99_ms"] - base["p99_ms"], 2),
            "ratio_p50": round(mine["p50_ms"] / base["p50_ms"], 1) if base["p50_ms"] else None,
        }
    return out


async def run(args: argparse.Namespace) -> dict[str, Any]:
    items = load(Path(args.data))
    with tempfile.TemporaryDirectory() as tmp:
        root = copy_backend(Path(tmp))
        k = CodeKnowledge(root, Path(tmp) / "index.db", debounce_s=0.1)
        started = time.perf_counter()
        await k.start()
        await asyncio.wait_for(k.wait_ready(), 120)
        build_s = time.perf_counter() - started
        try:
            rates = await hit_rates(k, items)
            k.cache.clear()
            files = k.index.file_count()
            latency = await invalidation(k, args.entries, args.trials)
        finally:
            await k.aclose()
    return {
        "data": str(Path(args.data).relative_to(ROOT)),
        "tree": f"copy of backend/ ({files} files indexed)",
        "index_build_s": round(build_s, 2),
        "watcher_debounce_s": 0.1,
        "hit_rate": rates,
        "invalidation": latency,
        "machine": machine_info.machine(),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--entries", type=int, default=200)
    parser.add_argument("--trials", type=int, default=40)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args)), indent=2))


if __name__ == "__main__":
    main()
