"""An attempt's time limit stops while the run waits on the user and goes on after,
with the waited time given back; pauses nest; without a pause the limit still bites."""

from __future__ import annotations

import asyncio

from backend.orchestration.node_attempt import Deadlines, attempt_once
from backend.orchestration.records import NodeResult
from backend.plans import PlanNode

NODE = PlanNode.model_validate({"id": "n1", "agent": "engineer", "prompt": "do it"})
LIMIT = 0.3


async def _attempt(deadlines: Deadlines, go: asyncio.Event) -> NodeResult:
    async def run_node(node: PlanNode, upstream: object) -> NodeResult:
        await go.wait()
        return NodeResult(ok=True, output="done")

    return await attempt_once(run_node, NODE, {}, LIMIT, deadlines)


async def test_a_paused_clock_lets_the_attempt_outlive_its_limit() -> None:
    deadlines = Deadlines()
    go = asyncio.Event()
    attempt = asyncio.create_task(_attempt(deadlines, go))
    await asyncio.sleep(0)  # the attempt starts its clock
    deadlines.pause()
    deadlines.pause()  # two questions at once
    await asyncio.sleep(LIMIT * 2)
    deadlines.resume()
    await asyncio.sleep(LIMIT * 0.2)  # one question still open: the clock stays stopped
    deadlines.resume()
    go.set()
    result = await attempt
    assert result.ok, result.error
    deadlines.close()


async def test_after_a_pause_the_limit_still_ends_an_attempt_that_hangs() -> None:
    deadlines = Deadlines()
    attempt = asyncio.create_task(_attempt(deadlines, asyncio.Event()))
    await asyncio.sleep(0)
    deadlines.pause()
    await asyncio.sleep(LIMIT)
    deadlines.resume()
    result = await attempt  # never set: the limit ends it
    assert not result.ok and "timed out" in (result.error or "")
    deadlines.close()


async def test_without_a_pause_the_limit_ends_the_attempt() -> None:
    deadlines = Deadlines()
    go = asyncio.Event()
    attempt = asyncio.create_task(_attempt(deadlines, go))
    await asyncio.sleep(LIMIT * 2)
    go.set()
    result = await attempt
    assert not result.ok and "timed out" in (result.error or "")
    deadlines.close()
