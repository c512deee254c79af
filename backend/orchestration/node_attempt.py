"""One attempt at one node: the runner called under the node's time limit.

Whatever the runner does, the scheduler gets a :class:`NodeResult` back: an exception
becomes a failed attempt naming it, running past the limit a failed attempt saying
so, a wrong return value a failure that is not retried. Only cancellation passes
through, so the scheduler can stop a node.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any

from backend.orchestration.records import NodeResult
from backend.orchestration.slots import Slots
from backend.plans import PlanNode

RunNode = Callable[[PlanNode, Mapping[str, Any]], Awaitable[NodeResult]]
"""``run_node(node, upstream_outputs)``: runs one node; its dependencies' outputs by id."""


async def attempt_once(
    run_node: RunNode, node: PlanNode, upstream: Mapping[str, Any], limit_s: float
) -> NodeResult:
    """Call ``run_node`` once, within ``limit_s`` seconds; never raises but CancelledError."""
    deadline = asyncio.timeout(limit_s)
    try:
        async with deadline:
            result = await run_node(node, upstream)
    except TimeoutError:
        if deadline.expired():
            return NodeResult.failed(f"timed out after {limit_s:g} s")
        return NodeResult.failed("TimeoutError raised by the node's runner")
    except Exception as exc:
        return NodeResult.failed(f"{type(exc).__name__}: {exc}")
    if not isinstance(result, NodeResult):
        message = f"the node's runner returned {type(result).__name__}, not a NodeResult"
        return NodeResult.failed(message, retryable=False)
    if not result.ok and not result.error:
        return NodeResult.failed("the node's runner reported a failure without a reason")
    return result


class HeldSlot(AbstractAsyncContextManager[None]):
    """A slot of a shared bound held for one attempt (a class: cheaper than a generator)."""

    __slots__ = ("_owner", "_slots")

    def __init__(self, slots: Slots, owner: str) -> None:
        self._slots = slots
        self._owner = owner

    async def __aenter__(self) -> None:
        await self._slots.acquire(self._owner)

    async def __aexit__(self, *exc: object) -> None:
        self._slots.release()
