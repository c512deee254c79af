"""The one worker pool: fair between sessions, per-session limits, user before background,
background never starved, and no worker ever lost to a cancel."""

from __future__ import annotations

import asyncio

import pytest

from backend.orchestration import Lane, Lease, SessionLimits, WorkerPool
from tests.support.polling import until

USER, BACKGROUND = Lane.USER, Lane.BACKGROUND


class Jobs:
    """Queued jobs as tasks; ``order`` is the order the pool granted them in."""

    def __init__(self, pool: WorkerPool) -> None:
        self.pool = pool
        self.order: list[str] = []
        self.leases: dict[str, Lease] = {}
        self.tasks: dict[str, asyncio.Task[None]] = {}

    def queue(self, name: str, sid: str, lane: Lane = USER, *, engineer: bool = False) -> None:
        async def job() -> None:
            lease = await self.pool.acquire(sid, lane, engineer=engineer)
            self.order.append(name)
            self.leases[name] = lease

        self.tasks[name] = asyncio.create_task(job())

    async def waiting(self, count: int) -> None:
        await until(lambda: self.pool.waiting == count, what=f"{count} waiting")

    async def granted(self, count: int) -> None:
        await until(lambda: len(self.order) == count, what=f"{count} granted")

    def release(self, name: str) -> None:
        self.leases[name].release()


async def test_freed_workers_go_round_the_sessions_in_turn() -> None:
    pool = WorkerPool(1)
    first = await pool.acquire("busy")
    jobs = Jobs(pool)
    for i, sid in enumerate("aaaaaabb"):
        jobs.queue(f"{sid}{i}", sid)
    await jobs.waiting(8)
    first.release()
    for n in range(1, 9):
        await jobs.granted(n)
        jobs.release(jobs.order[-1])
    assert [name[0] for name in jobs.order] == list("ababaaaa")
    assert (pool.busy, pool.waiting) == (0, 0)


async def test_two_sessions_with_many_ready_jobs_progress_at_the_same_pace() -> None:
    pool = WorkerPool(3)
    done = {"a": 0, "b": 0}
    spread: list[int] = []

    async def work(sid: str) -> None:
        async with pool.hold(sid):
            done[sid] += 1
            spread.append(abs(done["a"] - done["b"]))
            await asyncio.sleep(0)

    # a queues 60 jobs before b queues any: a plain semaphore would run all of a first
    await asyncio.gather(*(work("a") for _ in range(60)), *(work("b") for _ in range(60)))
    assert done == {"a": 60, "b": 60}
    # a's first three started before b queued; from then on the gap never grows
    assert max(spread) <= 4


async def test_a_session_never_holds_more_than_its_max_tasks() -> None:
    limits = {"small": SessionLimits(max_tasks=2), "big": SessionLimits(max_tasks=8)}
    pool = WorkerPool(8, limits=limits.__getitem__)
    held = {"small": 0, "big": 0}
    peak = {"small": 0, "big": 0}
    release = asyncio.Event()

    async def work(sid: str) -> None:
        async with pool.hold(sid):
            held[sid] += 1
            peak[sid] = max(peak[sid], held[sid])
            await release.wait()
            held[sid] -= 1

    tasks = [asyncio.create_task(work(s)) for s in ["small"] * 6 + ["big"] * 4]
    await until(lambda: pool.busy == 6 and pool.waiting == 4)  # small's other 4 wait
    assert pool.snapshot().session_line("small") == (
        "this session: 2/2 tasks, 0/4 engineers, 4 waiting"
    )
    release.set()
    await asyncio.gather(*tasks)
    assert peak == {"small": 2, "big": 4}


async def test_engineer_jobs_are_bounded_apart_and_others_pass_a_blocked_one() -> None:
    pool = WorkerPool(8, limits=lambda _sid: SessionLimits(max_tasks=4, max_engineers=1))
    jobs = Jobs(pool)
    jobs.queue("eng1", "s", engineer=True)
    await jobs.granted(1)
    jobs.queue("eng2", "s", engineer=True)
    jobs.queue("read", "s")
    await jobs.granted(2)
    assert jobs.order == ["eng1", "read"]  # eng2 waits for the one engineer
    assert pool.waiting == 1
    jobs.release("eng1")
    await jobs.granted(3)
    assert jobs.order[-1] == "eng2"


async def test_a_user_job_overtakes_queued_background_jobs() -> None:
    pool = WorkerPool(1)
    first = await pool.acquire("x")
    jobs = Jobs(pool)
    jobs.queue("bg1", "a", BACKGROUND)
    jobs.queue("bg2", "b", BACKGROUND)
    await jobs.waiting(2)
    jobs.queue("user", "c", USER)
    await jobs.waiting(3)
    assert pool.snapshot().line() == "workers 1/1 busy, 3 waiting (1 user, 2 background)"
    first.release()
    await jobs.granted(1)
    assert jobs.order == ["user"]


async def test_background_never_takes_the_last_free_worker_while_user_work_waits() -> None:
    pool = WorkerPool(2, limits=lambda sid: SessionLimits(max_tasks=1 if sid == "u" else 4))
    jobs = Jobs(pool)
    jobs.queue("u1", "u")
    await jobs.granted(1)
    jobs.queue("u2", "u")  # waits: its session's limit
    jobs.queue("bg", "b", BACKGROUND)  # one worker free, but user work waits
    await jobs.waiting(2)
    assert pool.busy == 1
    jobs.release("u1")  # u2 may start now, and with no user work left, bg too
    await jobs.granted(3)
    assert jobs.order == ["u1", "u2", "bg"]


async def test_background_takes_a_worker_when_two_are_free() -> None:
    pool = WorkerPool(3)
    held = await pool.acquire("x")
    jobs = Jobs(pool)
    jobs.queue("bg", "b", BACKGROUND)
    await jobs.granted(1)  # no user work waits: it starts at once
    jobs.release("bg")
    held.release()
    assert (pool.busy, pool.waiting) == (0, 0)


async def test_background_work_ages_and_is_never_starved() -> None:
    pool = WorkerPool(1, age_after=3)
    first = await pool.acquire("x")
    jobs = Jobs(pool)
    jobs.queue("bg", "b", BACKGROUND)
    for i in range(10):
        jobs.queue(f"u{i}", f"s{i % 2}")
    await jobs.waiting(11)
    first.release()
    for n in range(1, 12):
        await jobs.granted(n)
        jobs.release(jobs.order[-1])
    assert jobs.order.index("bg") == 3  # after three user jobs overtook it, it goes first


async def test_a_cancelled_waiter_leaves_the_queue_and_loses_no_worker() -> None:
    pool = WorkerPool(1)
    first = await pool.acquire("x")
    jobs = Jobs(pool)
    jobs.queue("gone", "a")
    jobs.queue("stays", "b", BACKGROUND)
    await jobs.waiting(2)
    jobs.tasks["gone"].cancel()
    await asyncio.gather(jobs.tasks["gone"], return_exceptions=True)
    assert pool.waiting == 1
    first.release()
    await jobs.granted(1)
    assert jobs.order == ["stays"]
    jobs.release("stays")
    assert (pool.busy, pool.waiting) == (0, 0)


async def test_a_waiter_cancelled_just_after_its_grant_passes_the_worker_on() -> None:
    pool = WorkerPool(1)
    first = await pool.acquire("x")
    jobs = Jobs(pool)
    jobs.queue("granted_then_cancelled", "a")
    jobs.queue("next", "b")
    await jobs.waiting(2)
    first.release()  # grants a's future; a has not resumed yet
    jobs.tasks["granted_then_cancelled"].cancel()
    await asyncio.gather(jobs.tasks["granted_then_cancelled"], return_exceptions=True)
    await jobs.granted(1)
    assert jobs.order == ["next"]
    assert pool.busy == 1


async def test_a_cancelled_holder_gives_its_worker_back() -> None:
    pool = WorkerPool(1)
    inside = asyncio.Event()

    async def holder() -> None:
        async with pool.hold("a", engineer=True):
            inside.set()
            await asyncio.Event().wait()

    task = asyncio.create_task(holder())
    await inside.wait()
    jobs = Jobs(pool)
    jobs.queue("next", "b")
    await jobs.waiting(1)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await jobs.granted(1)
    assert pool.snapshot().sessions.keys() == {"b"}  # a's task and engineer counts are gone


async def test_a_lease_released_twice_frees_one_worker() -> None:
    pool = WorkerPool(2)
    lease = await pool.acquire("a")
    other = await pool.acquire("b")
    lease.release()
    lease.release()
    assert pool.busy == 1
    other.release()
    assert pool.busy == 0


async def test_many_sessions_and_cancels_leave_the_pool_whole() -> None:
    pool = WorkerPool(3, limits=lambda _sid: SessionLimits(max_tasks=2, max_engineers=1))
    gate = asyncio.Event()

    async def work(i: int) -> None:
        lane = BACKGROUND if i % 3 == 0 else USER
        async with pool.hold(f"s{i % 7}", lane, engineer=i % 2 == 0):
            await gate.wait()

    tasks = [asyncio.create_task(work(i)) for i in range(60)]
    await until(lambda: pool.busy == 3 and pool.waiting == 57)
    for task in tasks[::4]:
        task.cancel()
    gate.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    assert (pool.busy, pool.waiting) == (0, 0)
    assert pool.snapshot().sessions == {}


def test_a_pool_needs_a_worker() -> None:
    with pytest.raises(ValueError, match="at least one worker"):
        WorkerPool(0)


async def test_try_acquire_grants_only_when_nobody_waits_and_ahead_counts_the_earlier() -> None:
    pool = WorkerPool(1, limits=lambda _sid: SessionLimits(max_tasks=1))
    first = pool.try_acquire("a")
    assert first is not None and pool.try_acquire("b") is None  # full: nothing queued
    assert pool.waiting == 0
    jobs = Jobs(pool)
    jobs.queue("b1", "b")
    jobs.queue("c1", "c")
    jobs.queue("b2", "b")
    await jobs.waiting(3)
    assert (pool.ahead("b"), pool.ahead("c"), pool.ahead("nobody")) == (2, 1, 0)
    first.release()
    await jobs.granted(1)
    assert pool.try_acquire("d") is None  # a job still waits: the free path does not jump it
    for n in (2, 3):
        jobs.release(jobs.order[-1])
        await jobs.granted(n)
    jobs.release(jobs.order[-1])
    assert (pool.busy, pool.waiting) == (0, 0)
