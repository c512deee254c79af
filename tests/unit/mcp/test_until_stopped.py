"""``until_stopped``: a stop we asked for ends serving cleanly, even when the MCP SDK's
streams break under it instead of being cancelled; any other error still propagates."""

from __future__ import annotations

import asyncio

import anyio
import pytest

from backend.mcp.server.shutdown import until_stopped


async def _breaks_when_cancelled(error: BaseException) -> None:
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        raise error from None


async def test_streams_broken_by_a_requested_stop_are_a_clean_stop() -> None:
    stop = asyncio.Event()
    stop.set()
    torn = BaseExceptionGroup(
        "unhandled errors in a TaskGroup",
        [ExceptionGroup("relay", [anyio.BrokenResourceError()]), anyio.ClosedResourceError()],
    )
    assert await until_stopped(_breaks_when_cancelled(torn), stop) is True


async def test_a_real_error_under_a_stop_still_propagates() -> None:
    stop = asyncio.Event()
    stop.set()
    mixed = ExceptionGroup("g", [anyio.BrokenResourceError(), ValueError("the archive broke")])
    with pytest.raises(ExceptionGroup) as info:
        await until_stopped(_breaks_when_cancelled(mixed), stop)
    assert info.group_contains(ValueError)


async def test_broken_streams_without_a_stop_are_an_error() -> None:
    async def breaks() -> None:
        raise anyio.BrokenResourceError

    with pytest.raises(anyio.BrokenResourceError):
        await until_stopped(breaks(), asyncio.Event())
