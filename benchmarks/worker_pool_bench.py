"""The worker pool's cost per job against a bare ``asyncio.Semaphore``, and its fairness.

1,000 jobs over 50 sessions (20 each; a fifth of them background jobs, a tenth engineer
jobs) all queued at once against ``max_workers`` workers; each job takes a worker, yields
once (``asyncio.sleep(0)``) and gives it back. The same jobs run under a plain
``asyncio.Semaphore(max_workers)`` as the baseline, sides alternating round by round.
Reported: medians over rounds of wall and CPU time per job for each side, the pool's
overhead per acquire/release (pool minus semaphore), and fairness: for each session, the
position (0..1) at which its last job was granted; a fair pool finishes every session
near the end together (small spread), a FIFO semaphore finishes sessions in the order
they queued.

    .venv/bin/python benchmarks/worker_pool_bench.py [--sessions 50] [--jobs 1000] [--rounds 7]

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Callable, Coroutine
from typing import Any

from backend.orchestration import Lane, SessionLimits, WorkerPool


def _jobs(sessions: int, jobs: int) -> list[tuple[str, Lane, bool]]:
    """Session by session, as a DAG would queue them (all of s0's, then s1's, ...)."""
    per = jobs // sessions
    return [
        (f"s{s}", Lane.BACKGROUND if j % 5 == 4 else Lane.USER, j % 10 == 9)
        for s in range(sessions)
        for j in range(per)
    ]


async def _pool_side(jobs: list[tuple[str, Lane, bool]], workers: int) -> list[str]:
    pool = WorkerPool(workers, limits=lambda _sid: SessionLimits(max_tasks=4, max_engineers=2))
    order: list[str] = []

    async def job(sid: str, lane: Lane, engineer: bool) -> None:
        lease = await pool.acquire(sid, lane, engineer=engineer)
        order.append(sid)
        await asyncio.sleep(0)
        lease.release()

    await asyncio.gather(*(job(*j) for j in jobs))
    return order


async def _semaphore_side(jobs: list[tuple[str, Lane, bool]], workers: int) -> list[str]:
    bound = asyncio.Semaphore(workers)
    order: list[str] = []

    async def job(sid: str) -> None:
        async with bound:
            order.append(sid)
            await asyncio.sleep(0)

    await asyncio.gather(*(job(sid) for sid, _lane, _eng in jobs))
    return order


def _timed(side: Callable[[], Coroutine[Any, Any, list[str]]]) -> tuple[float, float, list[str]]:
    wall, cpu = time.perf_counter(), time.process_time()
    order = asyncio.run(side())
    return time.perf_counter() - wall, time.process_time() - cpu, order


def _finish_spread(order: list[str]) -> dict[str, float]:
    last = {sid: i / (len(order) - 1) for i, sid in enumerate(order)}
    values = sorted(last.values())
    return {
        "first_session_done_at": round(values[0], 3),
        "spread": round(values[-1] - values[0], 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    jobs = _jobs(args.sessions, args.jobs)
    n = len(jobs)
    sides: dict[str, list[tuple[float, float]]] = {"pool": [], "semaphore": []}
    orders: dict[str, list[str]] = {}
    for _ in range(args.rounds):
        for name, run in (("pool", _pool_side), ("semaphore", _semaphore_side)):
            wall, cpu, order = _timed(lambda run=run: run(jobs, args.workers))  # type: ignore[misc]
            sides[name].append((wall, cpu))
            orders[name] = order
    per_job = {
        name: {
            "wall_us": round(statistics.median(w for w, _ in runs) / n * 1e6, 2),
            "cpu_us": round(statistics.median(c for _, c in runs) / n * 1e6, 2),
        }
        for name, runs in sides.items()
    }
    print(
        json.dumps(
            {
                "bench": "worker_pool",
                "sessions": args.sessions,
                "jobs": n,
                "workers": args.workers,
                "rounds": args.rounds,
                "per_job": per_job,
                "pool_overhead_per_job_us": {
                    "wall": round(per_job["pool"]["wall_us"] - per_job["semaphore"]["wall_us"], 2),
                    "cpu": round(per_job["pool"]["cpu_us"] - per_job["semaphore"]["cpu_us"], 2),
                },
                "fairness": {name: _finish_spread(order) for name, order in orders.items()},
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
