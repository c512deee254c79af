"""A bound shared by DAGs: slots go round the waiting owners, and none is ever lost."""

from __future__ import annotations

import asyncio

import pytest

from backend.orchestration import FairSlots
from tests.support.polling import until


async def _queue(slots: FairSlots, owner: str, order: list[str]) -> None:
    await slots.acquire(owner)
    order.append(owner)


async def test_freed_slots_go_round_the_owners_in_turn() -> None:
    slots = FairSlots(1)
    await slots.acquire("busy")
    order: list[str] = []
    waiters = [asyncio.create_task(_queue(slots, o, order)) for o in "aaaabbc"]
    await until(lambda: slots.waiting == 7)
    for _ in range(7):
        slots.release()
        await asyncio.sleep(0)
    await asyncio.gather(*waiters)
    assert order == ["a", "b", "c", "a", "b", "a", "a"]
    assert slots.in_use == 1


async def test_no_more_than_the_limit_are_held() -> None:
    slots = FairSlots(3)
    held = peak = 0

    async def work(owner: str) -> None:
        nonlocal held, peak
        async with slots.hold(owner):
            held += 1
            peak = max(peak, held)
            await asyncio.sleep(0)
            held -= 1

    await asyncio.gather(*(work(f"s{i % 4}") for i in range(40)))
    assert peak == 3
    assert (slots.in_use, slots.waiting) == (0, 0)


async def test_a_cancelled_waiter_leaves_the_queue() -> None:
    slots = FairSlots(1)
    await slots.acquire("x")
    gone = asyncio.create_task(slots.acquire("a"))
    stays = asyncio.create_task(slots.acquire("b"))
    await until(lambda: slots.waiting == 2)
    gone.cancel()
    await asyncio.gather(gone, return_exceptions=True)
    assert slots.waiting == 1
    slots.release()
    await stays
    assert slots.in_use == 1


async def test_a_waiter_cancelled_just_after_its_grant_passes_the_slot_on() -> None:
    slots = FairSlots(1)
    await slots.acquire("x")
    granted_then_cancelled = asyncio.create_task(slots.acquire("a"))
    next_in_line = asyncio.create_task(slots.acquire("b"))
    await until(lambda: slots.waiting == 2)
    slots.release()  # grants a's future; a has not resumed yet
    granted_then_cancelled.cancel()
    await asyncio.gather(granted_then_cancelled, return_exceptions=True)
    await next_in_line  # the slot a never used reached b
    assert slots.in_use == 1


def test_a_bound_needs_a_slot() -> None:
    with pytest.raises(ValueError, match="at least one slot"):
        FairSlots(0)
