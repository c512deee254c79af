"""A remote MCP server, reached over streamable HTTP or legacy SSE with the SDK's clients.

:class:`RemoteEndpoint` stands where :class:`~backend.mcp.client.process.ServerProcess`
stands for a stdio server: ``connect()`` is the SDK transport the connection's owner
task enters, and the endpoint says why a run ended. A remote server has no process,
so there is nothing to stop beyond closing the session; what there is to explain is
the HTTP side: a refused connection, a 401 or 403 (almost always a wrong or missing
token: "unauthorized: check headers"), an answer that is not MCP at all.

The SDK turns HTTP failures into generic JSON-RPC errors ("Server returned an error
response"), so the endpoint watches every response's status through an httpx event
hook and reads the connection errors out of the exception the transport raised. It
also watches the read stream: when the server drops the connection while no call is
in flight, ``on_exit`` wakes the owner, as a stdio server's exit does.

Header values are secrets. Every reason this module writes names the server's origin
(scheme, host, port) only, and any text taken from an exception is scrubbed of the
full URL (its path or query may carry a key) and of every header value first.
"""

from __future__ import annotations

import errno
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from types import TracebackType
from typing import Any

import anyio
import httpx2
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from backend.config.mcp_servers import McpServerConfig

log = logging.getLogger(__name__)

SSE_READ_TIMEOUT_S = 300.0  # an idle event stream is normal; only a dead one ends
NOT_MCP_STATUSES = frozenset({400, 404, 405, 406, 415})  # what a non-MCP endpoint answers
FALLBACK_STATUSES = frozenset({400, 404, 405})  # "auto": streamable HTTP refused, try SSE
# The session's read and write streams as the SDK's transports yield them (its own alias
# is private); the read side is wrapped in _WatchedRead.
RemoteStreams = tuple[Any, Any]


class _WatchedRead:
    """The transport's read stream, telling ``on_end`` when it ends or breaks.

    A thin proxy, not a copy: the SDK's dispatcher reads ``last_context`` (the
    sender's context) from the stream it iterates."""

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    def __aiter__(self) -> _WatchedRead:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            item: SessionMessage | Exception = await self._inner.__anext__()
        except (StopAsyncIteration, anyio.ClosedResourceError, anyio.EndOfStream):
            self._on_end()
            raise
        return item

    async def receive(self) -> SessionMessage | Exception:
        return await self.__anext__()

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _WatchedRead:
        await self._inner.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        result: bool | None = await self._inner.__aexit__(exc_type, exc, tb)
        return result


class RemoteEndpoint:
    """One connection attempt to a remote server. ``connect()`` is the transport; use it
    once. ``pid`` and ``returncode`` are always None: there is no process."""

    pid: int | None = None
    returncode: int | None = None

    def __init__(
        self,
        config: McpServerConfig,
        *,
        headers: dict[str, str],
        sse: bool,
        timeout_s: float,
        on_exit: Callable[[], None] | None = None,
    ) -> None:
        assert config.url is not None
        self.config = config
        self.url = config.url
        self.origin = config.origin()
        self.headers = headers
        self.sse = sse
        self.timeout_s = timeout_s
        self._on_exit = on_exit
        self.initialized = False  # the handshake finished
        self.statuses: list[int] = []  # every HTTP status answered, in order (last 20)
        self.dropped = False  # the read stream ended while the session was open
        self._ended = anyio.Event()

    @property
    def transport_name(self) -> str:
        return "SSE" if self.sse else "streamable HTTP"

    @property
    def ended(self) -> bool:
        return self._ended.is_set()

    # -- the transport -----------------------------------------------------------
    def connect(self) -> AbstractAsyncContextManager[RemoteStreams]:
        return self._connect()

    @asynccontextmanager
    async def _connect(self) -> AsyncIterator[RemoteStreams]:
        async with AsyncExitStack() as stack:
            transport: AbstractAsyncContextManager[Any]
            if self.sse:
                transport = sse_client(
                    self.url,
                    headers=dict(self.headers),
                    timeout=self.timeout_s,
                    sse_read_timeout=SSE_READ_TIMEOUT_S,
                    httpx_client_factory=self._http_client,
                )
            else:  # the SDK leaves a client it was given open: the stack closes it
                client = await stack.enter_async_context(self._http_client(headers=self.headers))
                transport = streamable_http_client(self.url, http_client=client)
            read, write = await stack.enter_async_context(transport)
            log.info("MCP server %r: connected to %s", self.config.name, self.origin)
            yield _WatchedRead(read, self._stream_ended), write

    def _http_client(
        self,
        headers: dict[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        auth: httpx2.Auth | None = None,
    ) -> httpx2.AsyncClient:
        """An httpx client as the SDK makes one, plus a hook that notes each status."""
        return httpx2.AsyncClient(
            headers=headers,
            timeout=timeout or httpx2.Timeout(self.timeout_s, read=SSE_READ_TIMEOUT_S),
            auth=auth,
            event_hooks={"response": [self._saw]},
        )

    async def _saw(self, response: httpx2.Response) -> None:
        self.statuses = [*self.statuses[-19:], response.status_code]

    def _stream_ended(self) -> None:
        if self.initialized and not self._ended.is_set():
            self.dropped = True
        self._ended.set()
        if self._on_exit is not None:
            self._on_exit()

    # -- what a stdio process offers, for the connection ------------------------
    def junk_note(self) -> str:
        return ""

    def stderr_tail(self) -> str:
        return ""

    async def wait_exited(self, timeout_s: float) -> bool:
        """Wait until the read stream ended (the session is over)."""
        with anyio.move_on_after(timeout_s):
            await self._ended.wait()
        return self._ended.is_set()

    # -- why it ended --------------------------------------------------------------
    def refused_auth(self) -> int | None:
        """The 401 or 403 the server answered, if it did."""
        return next((code for code in reversed(self.statuses) if code in (401, 403)), None)

    def falls_back(self) -> bool:
        """Whether ``transport = "auto"`` should try SSE: streamable HTTP was refused with a
        status a legacy SSE endpoint gives a POST, not for want of authorisation."""
        return (
            self.config.transport == "auto"
            and not self.sse
            and not self.initialized
            and any(code in FALLBACK_STATUSES for code in self.statuses)
            and self.refused_auth() is None
        )

    def down_reason(self, failure: BaseException | None, *, starting: bool) -> str:
        """Why this connection is down, in a phrase naming the origin, never a secret."""
        where = self.origin
        denied = self.refused_auth()
        if denied is not None:
            return f"unauthorized: {where} answered HTTP {denied}: check headers"
        cause = _transport_error(failure) if failure is not None else None
        if cause is not None:
            if _refused(cause):
                what = "connection refused"
            elif isinstance(cause, httpx2.TimeoutException):
                what = "timed out"
            else:
                what = self.scrub(str(cause) or type(cause).__name__)
            lead = "lost its connection to" if self.initialized else "could not connect to"
            return f"{lead} {where}: {what}"
        failed = [code for code in self.statuses if code >= 400]
        if starting and failed:
            code = failed[-1]
            if code in NOT_MCP_STATUSES:
                return f"not an MCP server: {where} answered HTTP {code} ({self.transport_name})"
            return f"{where} answered HTTP {code} while starting"
        if self.dropped:
            return f"lost its connection to {where}"
        if failure is not None:
            text = self.scrub(_explain(failure))
            if starting:
                return f"not an MCP server: {where}: {text}"
            return f"session with {where} failed: {text}"
        return f"its connection to {where} ended"

    def scrub(self, text: str) -> str:
        """``text`` with the full URL cut to its origin and every header value masked."""
        text = text.replace(self.url, self.origin)
        for value in sorted(self.headers.values(), key=len, reverse=True):
            for secret in (value, *value.split()):
                if len(secret) >= 4:
                    text = text.replace(secret, "***")
        return text[:300]


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def _transport_error(failure: BaseException) -> httpx2.TransportError | None:
    for leaf in _leaves(failure):
        seen: BaseException | None = leaf
        while seen is not None:
            if isinstance(seen, httpx2.TransportError):
                return seen
            seen = seen.__cause__ or seen.__context__
    return None


def _refused(error: httpx2.TransportError) -> bool:
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError):
            return True
        if isinstance(seen, OSError) and seen.errno == errno.ECONNREFUSED:
            return True
        seen = seen.__cause__ or seen.__context__
    # httpx reports a refusal on every address as "All connection attempts failed"
    return isinstance(error, httpx2.ConnectError) and "connection attempts failed" in str(error)


def _explain(exc: BaseException) -> str:
    leaves = _leaves(exc)
    first = leaves[0] if leaves else exc
    if isinstance(first, MCPError):
        return first.message or type(first).__name__
    return str(first) or type(first).__name__
