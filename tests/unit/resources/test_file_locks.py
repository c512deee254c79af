"""The fair read/write lock: readers share, writers are alone, first come first served,
and nothing is held after an error or a cancel."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from backend.resources.file_locks import FileLocks
from tests.support.polling import until

FILE = Path("/w/app.py")


async def test_readers_share_and_a_waiting_writer_holds_back_later_readers() -> None:
    locks = FileLocks()
    order: list[str] = []
    first_in = asyncio.Event()
    release = asyncio.Event()

    async def reader(name: str, gate: asyncio.Event | None = None) -> None:
        async with locks.hold(FILE, write=False):
            order.append(name)
            if gate is not None:
                first_in.set()
                await gate.wait()

    async def writer() -> None:
        async with locks.hold(FILE, write=True):
            order.append("writer")

    r1 = asyncio.create_task(reader("r1", release))
    await first_in.wait()
    w = asyncio.create_task(writer())
    await until(lambda: len(locks.lock_of(FILE)._waiting) == 1)  # type: ignore[union-attr]
    r2 = asyncio.create_task(reader("r2"))
    await until(lambda: len(locks.lock_of(FILE)._waiting) == 2)  # type: ignore[union-attr]
    assert order == ["r1"]  # r2 queues behind the writer: writers do not starve
    release.set()
    await asyncio.gather(r1, w, r2)
    assert order == ["r1", "writer", "r2"]
    assert len(locks) == 0


async def test_an_error_or_a_cancel_releases_the_lock() -> None:
    locks = FileLocks()
    with pytest.raises(RuntimeError):
        async with locks.hold(FILE, write=True):
            raise RuntimeError("the op failed")
    assert len(locks) == 0

    held = asyncio.Event()

    async def stuck() -> None:
        async with locks.hold(FILE, write=True):
            held.set()
            await asyncio.Event().wait()

    holder = asyncio.create_task(stuck())
    await held.wait()
    waiter = asyncio.create_task(locks.hold(FILE, write=True).__aenter__())
    await until(lambda: len(locks.lock_of(FILE)._waiting) == 1)  # type: ignore[union-attr]
    waiter.cancel()  # cancelled while waiting: leaves the queue
    holder.cancel()  # cancelled while holding: releases
    await asyncio.gather(holder, waiter, return_exceptions=True)
    assert len(locks) == 0
    async with locks.hold(FILE, write=True):  # free again
        pass
