"""Serving one MCP client over this process's stdin and stdout.

The SDK's ``stdio_server`` reads stdin through AnyIO worker threads that cannot be
abandoned: a server asked to stop while its client keeps stdin open would wait for a
line that never comes, and the process would not exit. So stdin is read here by a
daemon thread, one chunk per request, and a stop simply stops asking. As the SDK does,
fd 0 reads the null device while serving, so child processes (shell commands, MCP
servers) never swallow protocol bytes; the SDK still owns stdout.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import queue
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any, cast

import anyio
from mcp.server import Server
from mcp.server.stdio import stdio_server

from backend.mcp.server.shutdown import until_stopped

log = logging.getLogger(__name__)

CHUNK = 65536


@contextlib.contextmanager
def claimed_stdin() -> Iterator[int]:
    """A private descriptor of stdin's pipe, with fd 0 pointed at the null device until
    exit. The private descriptor is left open: the reader thread may still block on it."""
    try:
        private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError:  # no stdin at all: the client is gone before it came
        private = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
        yield private
        return
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    try:
        yield private
    finally:
        os.dup2(private, 0)


class ThreadedLines:
    """The lines of ``fd`` as an async iterator, read by a daemon thread.

    One read is in flight at a time (what was read waits for its consumer), and a
    consumer that stops, cancelled or not, leaves the thread blocked in a read the
    interpreter does not wait for at exit.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._requests: queue.SimpleQueue[asyncio.Future[bytes]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def _pump(self, loop: asyncio.AbstractEventLoop) -> None:
        while True:
            future = self._requests.get()
            try:
                data: bytes | OSError = os.read(self.fd, CHUNK)
            except OSError as exc:
                data = exc
            try:
                loop.call_soon_threadsafe(_settle, future, data)
            except RuntimeError:  # the loop is closed: nobody will ask again
                return
            if not data or isinstance(data, OSError):
                return

    async def _read(self) -> bytes:
        loop = asyncio.get_running_loop()
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._pump, args=(loop,), name="mcp-stdin", daemon=True
            )
            self._thread.start()
        future: asyncio.Future[bytes] = loop.create_future()
        self._requests.put(future)
        return await future

    async def __aiter__(self) -> AsyncIterator[str]:
        pending: list[bytes] = []  # a long message arrives in many chunks: join once
        while chunk := await self._read():
            if b"\n" not in chunk:
                pending.append(chunk)
                continue
            first, *lines, rest = chunk.split(b"\n")
            for line in (b"".join((*pending, first)), *lines):
                if line.strip():
                    yield line.decode("utf-8", errors="replace")
            pending = [rest]
        tail = b"".join(pending)
        if tail.strip():
            yield tail.decode("utf-8", errors="replace")


def _settle(future: asyncio.Future[bytes], data: bytes | OSError) -> None:
    if future.done():  # its reader was cancelled
        return
    if isinstance(data, OSError):
        future.set_exception(data)
    else:
        future.set_result(data)


async def serve_stdio(server: Server[Any], stop: asyncio.Event | None = None) -> bool:
    """Serve one client over stdin/stdout until stdin closes (False) or ``stop`` is set
    (True)."""

    async def serve() -> None:
        with claimed_stdin() as fd:
            # The SDK types stdin as an AnyIO file but only iterates its lines.
            lines = cast("anyio.AsyncFile[str]", ThreadedLines(fd))
            async with stdio_server(stdin=lines) as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())

    return await until_stopped(serve(), stop or asyncio.Event())
