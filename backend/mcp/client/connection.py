"""One external MCP server: its process, its SDK client session, its tools, its health.

The SDK's client lives inside anyio task groups that must be entered and left
by one task, so each connection has an owner task that starts the process,
holds the session open and closes both. Calls come from any task: the SDK
session multiplexes requests over the pipe.

A server that dies is marked down with the reason (exit status and stderr
tail); calls then fail fast with that :class:`McpServerDownError`. When the
config allows restarts (``max_restarts``, 0 by default), the next call after a
death starts the server again, once per allowed restart, and re-lists its tools:
a restarted server may be a new version offering other tools, so ``on_tools``
hears every fresh listing before the call that caused the restart goes on.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types
from mcp import Client
from mcp.client.stdio import get_default_environment
from mcp.shared.exceptions import MCPError

from backend.config.mcp_servers import McpConfigError, McpServerConfig, op_for
from backend.mcp.client.errors import (
    McpServerDownError,
    McpServerStartingError,
    McpTimeoutError,
    McpToolError,
)
from backend.mcp.client.models import McpCallResult, McpTool, ServerState
from backend.mcp.client.process import ServerProcess, describe_exit
from backend.mcp.client.remote import RemoteEndpoint
from backend.mcp.client.tool_changes import list_changed_handler, listening

log = logging.getLogger(__name__)

CLIENT_INFO = mcp_types.Implementation(name="sylk", version="0.1")
CALL_GRACE_S = 2.0  # beyond the SDK's own timeout, before we stop waiting regardless
LIST_PAGE_CAP = 50


class McpServerConnection:
    def __init__(
        self,
        config: McpServerConfig,
        *,
        cwd: Path | None = None,
        grace_s: float = 2.0,
        on_tools: Callable[[McpServerConnection], None] | None = None,
        on_list_changed: Callable[[McpServerConnection], None] | None = None,
    ):
        self.config = config
        self._on_tools = on_tools
        self._on_list_changed = on_list_changed  # the server said its tools changed
        self.name = config.name
        self.cwd = config.cwd or cwd
        self.grace_s = grace_s
        self.state = ServerState.IDLE
        self.tools: list[McpTool] = []
        self.error: McpServerDownError | None = None
        self.restarts = 0
        self.process: ServerProcess | RemoteEndpoint | None = None  # a url server: no process
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._lock = asyncio.Lock()
        self._closing = False
        self._lost = ""
        self.started_at: float | None = None  # time.monotonic() of the latest start

    @property
    def down_for_good(self) -> bool:
        """Down with no restart left: its tools are gone until Sylk restarts."""
        return self.state is ServerState.DOWN and (
            self.restarts >= self.config.max_restarts or self._closing
        )

    def health(self) -> str:
        """One short phrase for /status, describe and instructions: how the server is (a
        remote one's origin too, never its path or headers)."""
        at = f" at {self.config.origin()}" if self.config.remote else ""
        if self.state is ServerState.UP:
            return f"up, {len(self.tools)} tools{at}"
        if self.state is ServerState.STARTING:
            since = time.monotonic() - (self.started_at or time.monotonic())
            return f"starting{at} ({since:.0f}s of {self.config.startup_timeout_s:g}s)"
        if self.state is ServerState.DOWN:
            reason = self.error.reason if self.error is not None else "down"
            left = self.config.max_restarts - self.restarts
            again = "reconnect" if self.config.remote else "restart"
            retry = f"no {again} left" if left <= 0 else f"{again}s on the next call ({left} left)"
            return f"down: {reason} ({retry})"
        return self.state.value

    # -- lifecycle -------------------------------------------------------------
    async def start(self) -> None:
        """Start the server and list its tools. A failure marks it down; it never raises."""
        async with self._lock:
            if self.state in (ServerState.IDLE, ServerState.DOWN) and not self._closing:
                await self._start()

    async def _start(self, *, sse: bool = False) -> None:
        self.state, self.error, self._lost = ServerState.STARTING, None, ""
        self.started_at = time.monotonic()
        self._ready, self._stop = asyncio.Event(), asyncio.Event()
        try:
            process = self._endpoint(sse=sse)
        except McpConfigError as exc:  # a header's ${VAR} is not set: no use trying
            reason = exc.message.removeprefix(f"MCP server {self.name!r}: ")
            self.error = McpServerDownError(self.name, reason, help_hint=exc.help_hint)
            self.state = ServerState.DOWN
            log.warning("%s", self.error)
            return
        self.process = process
        self._task = asyncio.create_task(self._own(process), name=f"mcp-server-{self.name}")
        try:
            await asyncio.wait_for(self._ready.wait(), self.config.startup_timeout_s)
        except TimeoutError:
            self._lost = f"did not finish starting within {self.config.startup_timeout_s:g}s"
            await self._end_owner(cancel=True)
        down = self.state is ServerState.DOWN and not self._closing
        if down and isinstance(process, RemoteEndpoint) and process.falls_back():  # "auto"
            log.info("MCP server %r: no streamable HTTP; trying SSE", self.name)
            await self._start(sse=True)

    def _endpoint(self, *, sse: bool) -> ServerProcess | RemoteEndpoint:
        """What the owner task connects through: a child process, or a remote URL (its
        headers' ``${VAR}`` read now; a missing one raises McpConfigError)."""
        if self.config.url is not None:
            return RemoteEndpoint(
                self.config,
                headers=self.config.resolved_headers(),
                sse=sse or self.config.transport == "sse",
                timeout_s=self.config.startup_timeout_s,
                on_exit=self._stop.set,  # a dropped connection wakes the owner
            )
        assert self.config.command is not None  # the config holds exactly one of the two
        return ServerProcess(
            self.name,
            self.config.command,
            env=get_default_environment() | self.config.plain_env(),
            cwd=self.cwd,
            grace_s=self.grace_s,
            on_exit=self._stop.set,  # a death wakes the owner, which records it
        )

    async def _own(self, process: ServerProcess | RemoteEndpoint) -> None:
        failure: BaseException | None = None
        try:
            async with Client(
                process.connect(),
                cache=None,
                client_info=CLIENT_INFO,
                read_timeout_seconds=self.config.timeout_s,
                message_handler=list_changed_handler(self._list_changed),
            ) as client:
                self.tools = await self._list_tools(client)
                self._client = client
                process.initialized = True
                self.state = ServerState.UP
                self._announce_tools()
                self._ready.set()
                log.info("MCP server %r is up with %d tools", self.name, len(self.tools))
                async with listening(client, self.name):
                    await self._stop.wait()
        except Exception as exc:
            failure = exc
        finally:
            self._client = None
            self._settle(process, failure)
            self._ready.set()

    def _announce_tools(self) -> None:
        if self._on_tools is None:
            return
        try:
            self._on_tools(self)
        except Exception:  # a listener's bug must not take the server down with it
            log.exception("updating the ops of MCP server %r failed", self.name)

    def _settle(
        self, process: ServerProcess | RemoteEndpoint, failure: BaseException | None
    ) -> None:
        """Record how the run ended: closed on purpose, or down and why."""
        if self._closing:
            self.state = ServerState.CLOSED
            return
        code = process.returncode
        starting = self.state is ServerState.STARTING
        if isinstance(process, RemoteEndpoint):
            reason = self._lost or process.down_reason(failure, starting=starting)
        elif process.pid is None and failure is not None:
            program = (self.config.command or ["?"])[0]
            reason = f"could not start {program!r}: {_explain(failure)}"
        elif self._lost:
            reason = self._lost
        elif code is not None:
            reason = describe_exit(code) + (" while starting" if starting else "")
        elif failure is not None:
            reason = f"{'handshake' if starting else 'session'} failed: {_explain(failure)}"
        else:
            reason = "its connection ended"
        if process.junk_note():
            reason += f"; {process.junk_note()}"
        hint = (
            f"check the url and headers of [mcp_servers] {self.name!r} in the config file"
            if self.config.remote
            else None
        )
        self.error = McpServerDownError(
            self.name, reason, returncode=code, stderr_tail=process.stderr_tail(), help_hint=hint
        )
        self.state = ServerState.DOWN
        retried = isinstance(process, RemoteEndpoint) and process.falls_back()  # SSE next
        (log.info if retried else log.warning)("%s", self.error)
        if self.down_for_good and self.tools:  # its ops leave search and describe
            self._announce_tools()

    async def _end_owner(self, *, cancel: bool = False) -> None:
        """Make the owner task leave the session (which stops the process) and wait for it."""
        self._stop.set()
        task = self._task
        if task is None or task.done():
            return
        if cancel or not self._ready.is_set():  # mid-handshake: only a cancel interrupts it
            task.cancel()
        done, _ = await asyncio.wait({task}, timeout=4 * self.grace_s + 2)
        if not done:  # the SDK's bounded shutdown did not finish: cancel as a last resort
            task.cancel()
            await asyncio.wait({task}, timeout=self.grace_s)

    async def aclose(self) -> None:
        """Stop the server process (and its process group) and forget its session."""
        self._closing = True
        await self._end_owner()  # also interrupts a start in progress
        async with self._lock:
            await self._end_owner()
            self.state = ServerState.CLOSED

    # -- calls -------------------------------------------------------------------
    async def call(
        self, tool: str, arguments: dict[str, Any], *, timeout_s: float | None = None
    ) -> McpCallResult:
        limit = timeout_s or self.config.timeout_s
        client = await self._usable(wait_s=limit)
        try:
            async with asyncio.timeout(limit + CALL_GRACE_S):
                result = await client.call_tool(tool, arguments, read_timeout_seconds=limit)
        except MCPError as exc:
            if exc.code == mcp_types.REQUEST_TIMEOUT:
                raise McpTimeoutError(self.name, tool, limit) from None
            if exc.code == mcp_types.CONNECTION_CLOSED and self._closed_by(exc):
                raise await self._died() from None
            raise McpToolError(self.name, tool, exc.message, code=exc.code) from None
        except TimeoutError:
            raise McpTimeoutError(self.name, tool, limit) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            raise await self._died() from None
        blocks = [block.model_dump(mode="json", by_alias=True) for block in result.content]
        text = "\n".join(b.text for b in result.content if isinstance(b, mcp_types.TextContent))
        if result.is_error:
            raise McpToolError(self.name, tool, text or "the tool reported an error")
        return McpCallResult(self.name, tool, text, result.structured_content, blocks)

    def _closed_by(self, exc: MCPError) -> bool:
        """Whether a -32000 is the SDK saying the connection closed, or the process ended;
        a live server may answer -32000 itself (a common generic "server error" code)."""
        process = self.process
        ended = process is None or process.returncode is not None
        ended = ended or (isinstance(process, RemoteEndpoint) and process.ended)
        return ended or exc.message.strip().lower().startswith("connection closed")

    async def ensure_up(self) -> None:
        """Restart the server if it is down and a restart is left (re-listing its tools);
        raise McpServerDownError if it still is not up."""
        await self._usable()

    async def _usable(self, wait_s: float | None = None) -> Client:
        """The live session: a server still starting is waited for up to ``wait_s``
        (its startup timeout by default), one never started is started now (lazily)."""
        if self._client is not None and self.state is ServerState.UP:
            return self._client
        if self.state is ServerState.STARTING:
            waited = self.config.startup_timeout_s if wait_s is None else wait_s
            ready = self._ready
            try:
                await asyncio.wait_for(ready.wait(), waited)
            except TimeoutError:
                raise McpServerStartingError(self.name, waited) from None
        async with self._lock:
            restartable = self.restarts < self.config.max_restarts and not self._closing
            if self.state is ServerState.IDLE and not self._closing:
                await self._start()
            elif self.state is ServerState.DOWN and restartable:
                self.restarts += 1
                log.info("restarting MCP server %r (restart %d)", self.name, self.restarts)
                await self._start()
        if self._client is not None and self.state is ServerState.UP:
            return self._client
        if self.error is not None:
            raise self.error
        raise McpServerDownError(self.name, f"it is {self.state.value}")

    async def _died(self) -> McpServerDownError:
        """The session ended under a call: let the owner record why, then report that."""
        if self._closing:
            return McpServerDownError(self.name, "Sylk stopped it while the call ran")
        if isinstance(self.process, ServerProcess) and self.process.returncode is None:
            # Exited but not yet seen, or alive with its pipe closed: give it a moment.
            await self.process.wait_exited(self.grace_s)
            if self.process.returncode is None:
                self._lost = "closed its connection"
        await self._end_owner()
        return self.error or McpServerDownError(self.name, "its connection ended")

    # -- tools -------------------------------------------------------------------
    def _list_changed(self) -> None:
        if self._on_list_changed is not None:
            self._on_list_changed(self)

    async def relist_tools(self) -> list[McpTool]:
        """List the tools of the running server again (it changed them) and tell on_tools."""
        client = await self._usable()
        self.tools = await self._list_tools(client)
        self._announce_tools()
        return self.tools

    async def _list_tools(self, client: Client) -> list[McpTool]:
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        for _ in range(LIST_PAGE_CAP):
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        return self._as_ops(tools)

    def _as_ops(self, tools: list[mcp_types.Tool]) -> list[McpTool]:
        taken: set[str] = set()
        result = []
        for tool in tools:
            op = op_for(self.config.domain, tool.name)
            base, n = op, 2
            while op in taken:  # two names that sanitise alike: keep both, distinctly
                op, n = f"{base}_{n}", n + 1
            taken.add(op)
            hints = tool.annotations
            result.append(
                McpTool(
                    server=self.name,
                    name=tool.name,
                    op=op,
                    description=tool.description or tool.title or f"{tool.name} ({self.name})",
                    input_schema=dict(tool.input_schema),
                    output_schema=tool.output_schema,
                    title=tool.title or (hints.title if hints else None),
                    read_only=bool(hints and hints.read_only_hint),
                    destructive=bool(hints and hints.destructive_hint),
                )
            )
        return result


def _explain(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _explain(exc.exceptions[0])
    return str(exc) or type(exc).__name__
