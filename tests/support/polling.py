"""Wait for something observable instead of sleeping for a guessed while.

:func:`until` (async) and :func:`until_sync` poll a predicate and return as soon as it
holds; :func:`finishes` awaits something that must end (a call that a deadline or a
cancel should cut short) and turns a hang into a named failure.

Every timeout here only bounds a hang: it is generous on purpose, so a slow or loaded
machine never fails a test that would have passed, and nothing here measures or
asserts how long the wait took. On timeout the test fails naming what it waited for.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

# Long enough that no healthy run on a loaded CI box gets near it.
HANG = 30.0
_POLL = 0.01


class NeverHappened(AssertionError):
    """The awaited condition did not hold before the hang guard ran out."""


def _fail(what: str, timeout: float) -> NeverHappened:
    return NeverHappened(f"gave up waiting for {what} (hang guard: {timeout:g}s)")


def _describe(predicate: Callable[..., object]) -> str:
    """The predicate's own source line, so an unnamed wait still says what it was."""
    try:
        return inspect.getsource(predicate).strip()
    except (OSError, TypeError):
        return repr(predicate)


async def until(
    predicate: Callable[[], object | Awaitable[object]],
    *,
    timeout: float = HANG,  # noqa: ASYNC109 - a hang guard for the poll, not a deadline
    what: str | None = None,
    interval: float = _POLL,
) -> None:
    """Poll ``predicate`` (plain or async) on the running loop until it is truthy."""
    loop = asyncio.get_running_loop()
    give_up = loop.time() + timeout
    while True:
        outcome = predicate()
        if inspect.isawaitable(outcome):
            outcome = await outcome
        if outcome:
            return
        if loop.time() > give_up:
            raise _fail(what or _describe(predicate), timeout)
        await asyncio.sleep(interval)


def until_sync(
    predicate: Callable[[], object],
    *,
    timeout: float = HANG,
    what: str | None = None,
    interval: float = _POLL,
) -> None:
    """Blocking twin of :func:`until` for tests that do not run an event loop."""
    give_up = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > give_up:
            raise _fail(what or _describe(predicate), timeout)
        time.sleep(interval)


async def finishes(
    awaitable: Awaitable[T],
    *,
    what: str,
    timeout: float = HANG,  # noqa: ASYNC109 - a hang guard, not a deadline
) -> T:
    """Await ``awaitable``; if it has not ended after ``timeout``, fail naming ``what``."""
    try:
        return await asyncio.wait_for(awaitable, timeout)
    except TimeoutError:
        raise _fail(what, timeout) from None
