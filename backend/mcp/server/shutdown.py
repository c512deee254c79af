"""Stopping ``sylk mcp serve`` cleanly on SIGINT or SIGTERM.

A server is stopped, not failed, when its supervisor (a terminal's Ctrl-C, an IDE,
systemd, a container runtime) sends one of these, so the first signal only sets an
event: the transport winds down, the caller closes the engine (archive, background
tasks, the child MCP servers of its hub) and the process exits with status 0. The
handlers are removed as soon as that signal arrives, so a second one acts as if none
were installed (KeyboardInterrupt or termination) for a shutdown that hangs.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Awaitable, Sequence
from types import TracebackType

log = logging.getLogger(__name__)

STOP_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM)


class StopSignals:
    """While entered, the first of ``signals`` sets :attr:`event` instead of ending the
    process. Handlers can only be installed from the main thread's running loop;
    elsewhere (an embedding application) the context does nothing and the signals
    keep whatever handling they had."""

    def __init__(self, signals: Sequence[signal.Signals] = STOP_SIGNALS) -> None:
        self.signals = tuple(signals)
        self.event = asyncio.Event()
        self.received: signal.Signals | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._installed: list[signal.Signals] = []

    def __enter__(self) -> StopSignals:
        self._loop = asyncio.get_running_loop()
        for sig in self.signals:
            try:
                self._loop.add_signal_handler(sig, self._on_signal, sig)
            except (ValueError, RuntimeError, NotImplementedError) as exc:
                log.debug("not handling %s: %s", sig.name, exc)
                continue
            self._installed.append(sig)
        return self

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _value: BaseException | None,
        _tb: TracebackType | None,
    ) -> None:
        self._remove()

    def _on_signal(self, sig: signal.Signals) -> None:
        log.info("stopping on %s", sig.name)
        self.received = sig
        self.event.set()
        self._remove()

    def _remove(self) -> None:
        while self._installed and self._loop is not None:
            self._loop.remove_signal_handler(self._installed.pop())


async def until_stopped(serving: Awaitable[None], stop: asyncio.Event) -> bool:
    """Await ``serving`` until it ends by itself (False) or ``stop`` is set (True); in
    the latter case it is cancelled and awaited, so its cleanup has run on return.
    Errors of ``serving`` propagate, except the cancellation asked for here."""
    task = asyncio.ensure_future(serving)
    waiter = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
        if not task.done():
            task.cancel()
        await asyncio.wait({task})
    if task.cancelled():
        return True
    error = task.exception()
    if error is not None and not (stop.is_set() and _torn_down(error)):
        raise error
    return stop.is_set()


def _torn_down(error: BaseException) -> bool:
    """Is ``error`` only the SDK's streams breaking under a stop we asked for? (A stop
    during a request's handling, e.g. while ``initialize`` waits for the MCP servers,
    ends the SDK's relay with ``BrokenResourceError`` instead of a cancellation.)"""
    import anyio

    closed = (anyio.BrokenResourceError, anyio.ClosedResourceError, asyncio.CancelledError)
    if isinstance(error, BaseExceptionGroup):
        return error.split(closed)[1] is None  # split looks into nested groups too
    return isinstance(error, closed)
