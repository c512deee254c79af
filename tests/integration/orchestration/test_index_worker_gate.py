"""The code index's builds take background workers from the engine's pool without
deadlock: a build queued behind a user job runs once that job ends, and a build a user
job awaits while holding the only worker goes on without one."""

from __future__ import annotations

import asyncio
from pathlib import Path

from backend.engine.build import EngineParts
from backend.engine.worker_lanes import INDEX_OWNER, index_gate
from backend.knowledge.code.live import CodeKnowledge
from backend.orchestration import Lane, WorkerPool
from tests.support.polling import until


def a_tree(root: Path) -> Path:
    root.mkdir()
    for i in range(5):
        (root / f"mod{i}.py").write_text(f"def work_{i}(x):\n    return x + {i}\n")
    return root


async def test_a_build_queued_behind_a_user_job_runs_after_it(tmp_path: Path) -> None:
    pool = WorkerPool(1)
    user = await pool.acquire("s1", Lane.USER)
    index = CodeKnowledge(
        a_tree(tmp_path / "ws"), tmp_path / "i.db", watch=False, gate=index_gate(pool)
    )
    try:
        await index.start()
        await until(lambda: pool.waiting == 1, what="the build queued for a worker")
        assert not index.ready
        assert pool.snapshot().waiting_background == 1
        user.release()
        await until(lambda: index.ready, what="the build ran")
        assert (await index.locate("work_3")).definitions
        assert (pool.busy, pool.waiting) == (0, 0)  # its worker given back
    finally:
        await index.aclose()


async def test_a_user_job_holding_the_only_worker_can_await_the_build(tmp_path: Path) -> None:
    pool = WorkerPool(1)
    index = CodeKnowledge(
        a_tree(tmp_path / "ws"), tmp_path / "i.db", watch=False, gate=index_gate(pool)
    )
    try:
        async with pool.hold("s1", Lane.USER):  # a user's request, which needs the index
            await index.start()
            await until(lambda: pool.waiting == 1, what="the build queued for a worker")
            await asyncio.wait_for(index.wait_ready(), 30)  # a hang guard, not a deadline
            assert index.ready
            assert pool.waiting == 0  # the build left the queue when it went on without
        assert (pool.busy, pool.waiting) == (0, 0)
    finally:
        await index.aclose()


async def test_an_index_closed_while_its_build_queues_leaves_the_queue(tmp_path: Path) -> None:
    pool = WorkerPool(1)
    user = await pool.acquire("s1", Lane.USER)
    index = CodeKnowledge(
        a_tree(tmp_path / "ws"), tmp_path / "i.db", watch=False, gate=index_gate(pool)
    )
    await index.start()
    await until(lambda: pool.waiting == 1, what="the build queued for a worker")
    await index.aclose()
    assert (pool.busy, pool.waiting) == (1, 0)
    assert INDEX_OWNER not in pool.snapshot().sessions
    user.release()
    assert (pool.busy, pool.waiting) == (0, 0)


def test_the_engine_gives_its_code_index_the_pools_background_lane(
    engine_parts: EngineParts,
) -> None:
    assert engine_parts.knowledge.code.gate is not None
