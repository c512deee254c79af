"""Archive throughput against raw sqlite3, and transcript load latency.

Prints one JSON object. Every figure is the median over ``--reps`` repetitions
(each on a fresh database); archive and raw runs alternate within a repetition
so drift on a shared machine hits both alike. The ratios (archive/raw) are the
figures that matter; absolute rates are noisy.

    .venv/bin/python benchmarks/archive_bench.py [--reps 5] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import functools
import io
import json
import pstats
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import machine_info  # benchmarks/machine_info.py, beside this script
from sqlalchemy import event

from backend.archive.store import DB_NAME, Archive
from backend.messages import Message, MessageType, message_text

Msg = Message[dict[str, Any]]
Row = tuple[str, str, str, str, str, str, str]
INSERT_SQL = (
    "INSERT INTO transcript (id, session_id, type, source, timestamp, text, envelope) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)


# -- data -------------------------------------------------------------------------


def make_messages(n: int, sessions: int, rng: random.Random) -> list[Msg]:
    """Realistic-looking transcript entries: a line or a paragraph of text."""
    words = ["the", "parser", "lexer", "token", "retry", "fetch", "cache", "session", "agent"]
    out = []
    for k in range(n):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(5, 80)))
        out.append(
            Msg(
                session_id=f"session-{k % sessions:04d}",
                source=rng.choice(("user", "architect", "sylk")),
                target="guide",
                type=rng.choice((MessageType.USER_INPUT, MessageType.AGENT_REPLY)),
                payload={"text": text, "n": k},
            )
        )
    return out


def row_of(m: Msg) -> Row:
    """The transcript row the archive writes for ``m`` (same columns, same values)."""
    return (
        m.id,
        m.session_id,
        m.type.value,
        m.source,
        m.timestamp.isoformat(),
        message_text(m),
        m.model_dump_json(),
    )


def chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


# -- databases --------------------------------------------------------------------


@contextmanager
def fresh_dir(root: Path, name: str) -> Iterator[Path]:
    path = root / name
    path.mkdir()
    try:
        yield path
    finally:
        shutil.rmtree(path)


def raw_connection(data_dir: Path) -> sqlite3.Connection:
    """A plain sqlite3 connection on the archive's own schema, with its pragmas."""
    Archive(data_dir).close()  # the very same tables and indexes
    conn = sqlite3.connect(data_dir / DB_NAME, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA busy_timeout=10000")
    return conn


def count_rows(data_dir: Path) -> int:
    conn = sqlite3.connect(data_dir / DB_NAME)
    try:
        return int(conn.execute("SELECT count(*) FROM transcript").fetchone()[0])
    finally:
        conn.close()


def timed(fn: Callable[[], None]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


# -- the runs: each returns rows per second ----------------------------------------


def raw_single(data_dir: Path, rows: list[Row]) -> float:
    conn = raw_connection(data_dir)

    def run() -> None:
        for row in rows:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(INSERT_SQL, row)
            conn.execute("COMMIT")

    elapsed = timed(run)
    conn.close()
    assert count_rows(data_dir) == len(rows)
    return len(rows) / elapsed


def raw_batched(data_dir: Path, rows: list[Row], batch: int) -> float:
    conn = raw_connection(data_dir)

    def run() -> None:
        for part in chunks(rows, batch):
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(INSERT_SQL, part)
            conn.execute("COMMIT")

    elapsed = timed(run)
    conn.close()
    assert count_rows(data_dir) == len(rows)
    return len(rows) / elapsed


def archive_single(data_dir: Path, messages: list[Msg]) -> float:
    archive = Archive(data_dir)

    def run() -> None:
        for m in messages:
            archive.append_messages([m])

    elapsed = timed(run)
    archive.close()
    assert count_rows(data_dir) == len(messages)
    return len(messages) / elapsed


def archive_batched(data_dir: Path, messages: list[Msg], batch: int) -> float:
    archive = Archive(data_dir)

    def run() -> None:
        for part in chunks(messages, batch):
            archive.append_messages(part)

    elapsed = timed(run)
    archive.close()
    assert count_rows(data_dir) == len(messages)
    return len(messages) / elapsed


def archive_concurrent(data_dir: Path, messages: list[Msg], tasks: int) -> tuple[float, float]:
    """Rows/s and mean jobs per commit, ``tasks`` asyncio tasks each appending one by one."""
    archive = Archive(data_dir)
    commits = 0

    def on_commit(_conn: Any) -> None:
        nonlocal commits
        commits += 1

    # Peek at the writer's engine only to count transactions (group size).
    event.listen(archive._writer_engine, "commit", on_commit)
    shares = [messages[i::tasks] for i in range(tasks)]

    async def writer(share: list[Msg]) -> None:
        for m in share:
            await archive.aappend_messages([m])

    async def main() -> float:
        start = time.perf_counter()
        await asyncio.gather(*(writer(s) for s in shares))
        return time.perf_counter() - start

    elapsed = asyncio.run(main())
    archive.close()
    assert count_rows(data_dir) == len(messages)
    return len(messages) / elapsed, len(messages) / max(commits, 1)


# -- transcript loads --------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[k]


def load_latency(
    root: Path, sessions: int, per_session: int, loads: int, rng: random.Random
) -> dict[str, Any]:
    data_dir = root / "load"
    data_dir.mkdir()
    archive = Archive(data_dir)
    total = sessions * per_session
    fill_start = time.perf_counter()
    # Interleaved across sessions, as real traffic is: a session's rows are spread out.
    for part in chunks(make_messages(total, sessions, rng), 2000):
        archive.append_messages(part)
    fill_s = time.perf_counter() - fill_start
    ids = [f"session-{k:04d}" for k in range(sessions)]
    assert len(archive.load_transcript(ids[0])) == per_session

    def measure(fn: Callable[[str], Any]) -> dict[str, float]:
        times = []
        for _ in range(loads):
            sid = rng.choice(ids)
            start = time.perf_counter()
            fn(sid)
            times.append((time.perf_counter() - start) * 1000)
        return {
            "p50_ms": round(percentile(times, 0.50), 3),
            "p95_ms": round(percentile(times, 0.95), 3),
        }

    raw = sqlite3.connect(data_dir / DB_NAME)

    def raw_full(sid: str) -> None:  # the SQL alone, no model validation
        raw.execute(
            "SELECT envelope FROM transcript WHERE session_id=? ORDER BY seq", (sid,)
        ).fetchall()

    def raw_tail(sid: str) -> None:
        raw.execute(
            "SELECT envelope FROM transcript WHERE session_id=? ORDER BY seq DESC LIMIT 200",
            (sid,),
        ).fetchall()

    result = {
        "rows": total,
        "sessions": sessions,
        "rows_per_session": per_session,
        "loads": loads,
        "fill_s": round(fill_s, 2),
        "load_transcript_full": measure(archive.load_transcript),
        "load_transcript_limit_200": measure(lambda s: archive.load_transcript(s, limit=200)),
        "raw_sql_full": measure(raw_full),
        "raw_sql_limit_200": measure(raw_tail),
    }
    raw.close()
    archive.close()
    shutil.rmtree(data_dir)
    return result


# -- profile -----------------------------------------------------------------------


def _stats(prof: cProfile.Profile, title: str, top: int) -> str:
    out = io.StringIO()
    out.write(f"\n==== {title} ====\n")
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def profile_modes(root: Path, messages: list[Msg], batch: int, tasks: int, top: int = 20) -> str:
    """cProfile each archive mode: the caller's thread and the writer thread.

    cProfile follows one thread; the writer thread's profiler is switched on and
    off by jobs that run on it.
    """
    report = []
    singles = messages[: max(1, len(messages) // 10)]

    def single(a: Archive) -> None:
        for m in singles:
            a.append_messages([m])

    def batched(a: Archive) -> None:
        for part in chunks(messages, batch):
            a.append_messages(part)

    def concurrent(a: Archive) -> None:
        shares = [singles[i::tasks] for i in range(tasks)]

        async def writer(share: list[Msg]) -> None:
            for m in share:
                await a.aappend_messages([m])

        async def run() -> None:
            await asyncio.gather(*(writer(s) for s in shares))

        asyncio.run(run())

    modes: dict[str, Callable[[Archive], None]] = {
        "single": single,
        "batched": batched,
        "concurrent": concurrent,
    }
    for name, run in modes.items():
        with fresh_dir(root, f"profile-{name}") as data_dir:
            archive = Archive(data_dir)
            caller, writer = cProfile.Profile(), cProfile.Profile()

            def on_writer(_conn: Any, switch: Callable[[], None]) -> None:
                switch()

            archive.write(functools.partial(on_writer, switch=writer.enable))
            caller.enable()
            run(archive)
            caller.disable()
            archive.write(functools.partial(on_writer, switch=writer.disable))
            archive.close()
        report.append(_stats(caller, f"{name}: calling thread", top))
        report.append(_stats(writer, f"{name}: writer thread", top))
    return "".join(report)


# -- main --------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    return machine_info.machine(sqlite=sqlite3.sqlite_version)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--single", type=int, default=1500, help="rows, one per transaction")
    parser.add_argument("--batched", type=int, default=20_000, help="rows, batched")
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--concurrent", type=int, default=6000, help="rows, from many tasks")
    parser.add_argument("--tasks", type=int, default=100, help="asyncio tasks writing at once")
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--per-session", type=int, default=500)
    parser.add_argument("--loads", type=int, default=100, help="timed loads per latency figure")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dir", type=Path, default=None, help="where the databases go")
    parser.add_argument("--profile", action="store_true", help="cProfile to stderr")
    return parser.parse_args(argv)


def throughput(
    args: argparse.Namespace, root: Path, rng: random.Random
) -> tuple[dict[str, Any], list[Msg]]:
    """Rows/s of every mode, median over the repetitions, and the ratios."""
    single_msgs = make_messages(args.single, 20, rng)
    batched_msgs = make_messages(args.batched, 20, rng)
    conc_msgs = make_messages(args.concurrent, 20, rng)
    serialize_start = time.perf_counter()
    batched_rows = [row_of(m) for m in batched_msgs]
    serialize_rate = len(batched_msgs) / (time.perf_counter() - serialize_start)
    single_rows = [row_of(m) for m in single_msgs]
    conc_rows = [row_of(m) for m in conc_msgs]

    runs: dict[str, list[float]] = defaultdict(list)
    for rep in range(args.reps):  # archive and raw alternate: drift hits both alike
        with fresh_dir(root, f"rs{rep}") as d:
            runs["raw_single"].append(raw_single(d, single_rows))
        with fresh_dir(root, f"as{rep}") as d:
            runs["archive_single"].append(archive_single(d, single_msgs))
        with fresh_dir(root, f"rb{rep}") as d:
            runs["raw_batched"].append(raw_batched(d, batched_rows, args.batch_size))
        with fresh_dir(root, f"ab{rep}") as d:
            runs["archive_batched"].append(archive_batched(d, batched_msgs, args.batch_size))
        with fresh_dir(root, f"rc{rep}") as d:
            runs["raw_single_conc_rows"].append(raw_single(d, conc_rows))
        with fresh_dir(root, f"ac{rep}") as d:
            rate, group = archive_concurrent(d, conc_msgs, args.tasks)
            runs["archive_concurrent"].append(rate)
            runs["group_size"].append(group)
    med = {k: statistics.median(v) for k, v in runs.items()}
    ratio = med["archive_batched"] / med["raw_batched"]
    figures = {
        "rows_per_s": {
            "raw_single_txn": round(med["raw_single"]),
            "archive_single_txn": round(med["archive_single"]),
            "raw_batched": round(med["raw_batched"]),
            "archive_batched": round(med["archive_batched"]),
            "archive_concurrent": round(med["archive_concurrent"]),
            "message_to_row_serialisation": round(serialize_rate),
        },
        "ratios_archive_over_raw": {
            "single_txn": round(med["archive_single"] / med["raw_single"], 3),
            "batched": round(ratio, 3),
            "concurrent_vs_raw_single_txn": round(
                med["archive_concurrent"] / med["raw_single_conc_rows"], 3
            ),
            "concurrent_vs_raw_batched": round(med["archive_concurrent"] / med["raw_batched"], 3),
        },
        "concurrent_mean_jobs_per_commit": round(med["group_size"], 1),
        "batched_target_0_25x_met": ratio >= 0.25,
        "runs": {k: [round(x, 1) for x in v] for k, v in runs.items()},
    }
    return figures, batched_msgs


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rng = random.Random(args.seed)
    started = time.perf_counter()
    root = Path(tempfile.mkdtemp(prefix="sylk-bench-", dir=args.dir))
    try:
        figures, batched_msgs = throughput(args, root, rng)
        latency = load_latency(root, args.sessions, args.per_session, args.loads, rng)
        profile = (
            profile_modes(root, batched_msgs, args.batch_size, args.tasks) if args.profile else None
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    runs = figures.pop("runs")
    result = {
        "benchmark": "archive",
        "machine": machine(),
        "params": {
            "reps": args.reps,
            "single_rows": args.single,
            "batched_rows": args.batched,
            "batch_size": args.batch_size,
            "concurrent_rows": args.concurrent,
            "tasks": args.tasks,
            "seed": args.seed,
            "pragmas": "journal_mode=WAL synchronous=FULL busy_timeout=10000",
        },
        **figures,
        "load_latency": latency,
        "runs": runs,
        "wall_s": round(time.perf_counter() - started, 1),
    }
    print(json.dumps(result, indent=2))
    if profile:
        print(profile, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
