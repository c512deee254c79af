"""Serving one MCP client over this process's stdin and stdout.

The SDK's ``stdio_server`` reads stdin through AnyIO worker threads that cannot be
abandoned: a server asked to stop while its client keeps stdin open would wait for a
line that never comes, and the process would not exit. So stdin is read here by a
daemon thread, one chunk per request, and a stop simply stops asking. As the SDK does,
fd 0 reads the null device while serving, so child processes (shell commands, MCP
servers) never swallow protocol bytes; the SDK still owns stdout.

Every line is checked before the SDK sees it, because the SDK drops a line it cannot
parse without a word, leaving its client waiting forever. A line that is not UTF-8 or
not JSON gets a JSON-RPC parse error (-32700), JSON that is no JSON-RPC message an
invalid-request error (-32600, with the request's id when it has a usable one), both
with id null when unknown. A line is read bounded: past :data:`MAX_LINE_BYTES` it is
read on and dropped, never held, and answered with an invalid-request error, as an
over-large HTTP request is answered 413. Either way the server reads the next line.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import queue
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, cast

import anyio
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    RequestId,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from backend.mcp.server.body_limit import MAX_REQUEST_BYTES
from backend.mcp.server.shutdown import until_stopped

log = logging.getLogger(__name__)

CHUNK = 65536
MAX_LINE_BYTES = MAX_REQUEST_BYTES  # the same limit as a request over HTTP


@dataclass(frozen=True)
class OversizedLine:
    """A line longer than the limit, read and dropped: only its size is kept."""

    size: int


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
    interpreter does not wait for at exit. A line over ``limit`` bytes comes out as
    an :class:`OversizedLine`: what is past the limit is never held.
    """

    def __init__(self, fd: int, limit: int = MAX_LINE_BYTES) -> None:
        self.fd = fd
        self.limit = limit
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

    async def __aiter__(self) -> AsyncIterator[bytes | OversizedLine]:
        pending: list[bytes] = []  # a long message arrives in many chunks: join once
        size = 0  # of the line so far, dropped parts included
        while chunk := await self._read():
            start = 0
            while (end := chunk.find(b"\n", start)) != -1:
                line = self._line(pending, size, chunk[start:end])
                if line is not None:
                    yield line
                pending, size, start = [], 0, end + 1
            rest = chunk[start:]
            size += len(rest)
            if size > self.limit:
                pending = []  # from here on the line is only counted
            elif rest:
                pending.append(rest)
        line = self._line(pending, size, b"")
        if line is not None:
            yield line

    def _line(self, pending: list[bytes], size: int, last: bytes) -> bytes | OversizedLine | None:
        """The line ending in ``last`` (None if blank)."""
        if size + len(last) > self.limit:
            return OversizedLine(size + len(last))
        line = b"".join((*pending, last))
        return line if line.strip() else None


def _settle(future: asyncio.Future[bytes], data: bytes | OSError) -> None:
    if future.done():  # its reader was cancelled
        return
    if isinstance(data, OSError):
        future.set_exception(data)
    else:
        future.set_result(data)


def _refusal(code: int, message: str, request_id: RequestId | None = None) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message))


def _request_id(value: Any) -> RequestId | None:
    """The id of a would-be request, if it is one a reply can carry."""
    found = value.get("id") if isinstance(value, dict) else None
    if isinstance(found, bool) or not isinstance(found, int | str):
        return None
    return found


def check_line(line: bytes | OversizedLine, limit: int = MAX_LINE_BYTES) -> str | JSONRPCError:
    """``line`` as text for the SDK if it is a JSON-RPC message; else the error to answer."""
    if isinstance(line, OversizedLine):
        return _refusal(
            INVALID_REQUEST, f"request too large: {line.size} bytes or more; at most {limit}"
        )
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _refusal(PARSE_ERROR, f"parse error: not UTF-8 (byte {exc.start} of the line)")
    try:
        jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValidationError:
        pass
    else:
        return text
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return _refusal(PARSE_ERROR, f"parse error: {exc.msg} at column {exc.colno}")
    except RecursionError:
        return _refusal(PARSE_ERROR, "parse error: nested too deeply")
    return _refusal(
        INVALID_REQUEST,
        'invalid request: not a JSON-RPC 2.0 message ("jsonrpc": "2.0" with a "method", '
        'or an "id" with a "result" or an "error"); batches are not accepted',
        _request_id(value),
    )


class CheckedLines:
    """The lines the SDK may parse; every other line is answered with its error on
    ``replies`` (handed over once the SDK's write stream exists) and skipped."""

    def __init__(self, lines: ThreadedLines) -> None:
        self.lines = lines
        self._reply: Callable[[SessionMessage], Awaitable[None]] | None = None
        self._ready = anyio.Event()

    def reply_with(self, send: Callable[[SessionMessage], Awaitable[None]]) -> None:
        self._reply = send
        self._ready.set()

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self.lines:
            checked = check_line(line, self.lines.limit)
            if isinstance(checked, str):
                yield checked
                continue
            log.info("refused a stdin line: %s", checked.error.message)
            await self._ready.wait()
            assert self._reply is not None
            try:
                await self._reply(SessionMessage(checked))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return  # the server is done: nobody to answer


async def serve_stdio(server: Server[Any], stop: asyncio.Event | None = None) -> bool:
    """Serve one client over stdin/stdout until stdin closes (False) or ``stop`` is set
    (True)."""

    async def serve() -> None:
        with claimed_stdin() as fd:
            checked = CheckedLines(ThreadedLines(fd))
            # The SDK types stdin as an AnyIO file but only iterates its lines.
            lines = cast("anyio.AsyncFile[str]", checked)
            async with stdio_server(stdin=lines) as (read_stream, write_stream):
                checked.reply_with(write_stream.send)
                await server.run(read_stream, write_stream, server.create_initialization_options())

    return await until_stopped(serve(), stop or asyncio.Event())
