"""McpHub: every configured external MCP server, started once per engine.

The hub starts each enabled server over stdio with the official SDK client, in the
background (:meth:`McpHub.start` returns at once; a hung server never holds up the
engine or ``sylk mcp serve``), lists its tools and names each one as a Sylk op in a
domain named after the server (server ``echo``, tool ``reverse`` -> op
``echo.reverse``). The skill system reaches them as hidden ops through
:func:`backend.mcp.client.as_skills.to_skills`.

A server that cannot start or dies is marked down and named in every error;
the others keep working. Whenever a server (re)starts, or goes down for good (no
restart left: its ops are then marked unavailable), listeners added with
:meth:`McpHub.on_tools_changed` hear of it. A call to a server still starting waits
for it up to the call's timeout, then fails with ``McpServerStartingError``.
``aclose()`` returns promptly even mid-startup and stops every server process with
its whole process group (SIGTERM, then SIGKILL after a grace).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from backend.config.mcp_servers import McpSettings
from backend.mcp.client.errors import McpError, McpServerDownError, McpUnknownOpError
from backend.mcp.client.models import McpCallResult, McpTool, ServerState

if TYPE_CHECKING:
    from backend.mcp.client.connection import McpServerConnection

log = logging.getLogger(__name__)

ToolsListener = Callable[[str], None]

__all__ = [
    "McpCallResult",
    "McpHub",
    "McpServerStatus",
    "McpTool",
    "ServerState",
]


@dataclass(frozen=True)
class McpServerStatus:
    name: str
    domain: str
    state: ServerState
    tools: int
    pid: int | None
    restarts: int
    error: str | None
    health: str = ""  # one phrase: "up, 3 tools", "starting (4s of 30s)", "down: ..."

    def line(self) -> str:
        """This server's line in /status."""
        pid = f", pid {self.pid}" if self.pid is not None and self.state is ServerState.UP else ""
        return f"  {self.name:<12} {self.health}{pid}"


class McpHub:
    """Owns one connection per enabled server; safe to share across tasks."""

    def __init__(self, settings: McpSettings, *, cwd: Path | None = None, grace_s: float = 2.0):
        self.settings = settings
        self._servers: dict[str, McpServerConnection] = {}
        self._tool_listeners: list[ToolsListener] = []
        if settings.enabled():  # the SDK loads only when a server is configured
            from backend.mcp.client.connection import McpServerConnection

            self._servers = {
                server.name: McpServerConnection(
                    server, cwd=cwd, grace_s=grace_s, on_tools=self._tools_listed
                )
                for server in settings.enabled()
            }
        self._started = False
        self._closed = False
        self._starts: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        """Start every server in the background, once, and return at once. Each server's
        tools reach :meth:`on_tools_changed` listeners when it has listed them; one that
        fails is marked down (see :meth:`status`) without stopping the others."""
        if self._started or self._closed:
            return
        self._started = True
        self._starts = [
            asyncio.create_task(server.start(), name=f"mcp-start-{server.name}")
            for server in self._servers.values()
        ]
        await asyncio.sleep(0)  # each is STARTING when this returns

    async def wait_started(self, timeout_s: float | None = None) -> bool:
        """Wait until every server is up or down (each within its startup timeout, or
        ``timeout_s`` in all); True when none is still starting."""
        pending = [task for task in self._starts if not task.done()]
        if pending:
            await asyncio.wait(pending, timeout=timeout_s)
        return all(task.done() for task in self._starts)

    async def aclose(self) -> None:
        """Stop every server process, also one still starting; the hub cannot be started
        again."""
        self._closed = True
        results = await asyncio.gather(
            *(server.aclose() for server in self._servers.values()), return_exceptions=True
        )
        for name, result in zip(self._servers, results, strict=True):
            if isinstance(result, BaseException):
                log.error("stopping MCP server %r failed: %r", name, result)
        for task in self._starts:  # each start ended with its server; never left pending
            task.cancel()
        await asyncio.gather(*self._starts, return_exceptions=True)

    async def __aenter__(self) -> McpHub:
        """Start every server and wait until each is up or down."""
        await self.start()
        await self.wait_started()
        return self

    async def __aexit__(
        self,
        _type: type[BaseException] | None,
        _exc: BaseException | None,
        _tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def on_tools_changed(self, listener: ToolsListener) -> Callable[[], None]:
        """Call ``listener(server_name)`` each time that server lists its tools afresh
        (every start and restart); returns a function that removes it."""
        self._tool_listeners.append(listener)
        return lambda: self._tool_listeners.remove(listener)

    def _tools_listed(self, server: McpServerConnection) -> None:
        for listener in list(self._tool_listeners):
            try:
                listener(server.name)
            except Exception:  # the others still hear of it; the server stays up
                log.exception("a listener failed on the new tools of MCP server %r", server.name)

    # -- what is there ---------------------------------------------------------
    def server(self, name: str) -> McpServerConnection:
        try:
            return self._servers[name]
        except KeyError:
            raise McpError(name, f"no MCP server named {name!r} is configured") from None

    def servers(self) -> list[McpServerConnection]:
        return list(self._servers.values())

    def tools(self) -> list[McpTool]:
        """Every tool of every server that listed them (a down server keeps its last
        listing: a call restarts it, or says why it cannot)."""
        return [tool for server in self._servers.values() for tool in server.tools]

    def tool(self, op: str) -> McpTool:
        for tool in self.tools():
            if tool.op == op:
                return tool
        raise McpUnknownOpError(op)

    def status(self) -> list[McpServerStatus]:
        return [
            McpServerStatus(
                name=s.name,
                domain=s.config.domain,
                state=s.state,
                tools=len(s.tools),
                pid=s.process.pid if s.process is not None else None,
                restarts=s.restarts,
                error=str(s.error) if s.error is not None else None,
                health=s.health(),
            )
            for s in self._servers.values()
        ]

    def status_lines(self) -> list[str]:
        """The "MCP servers:" part of /status, one line each; empty when none is configured."""
        return [status.line() for status in self.status()]

    def health_of(self, domain: str) -> str | None:
        """How the server behind ``domain`` is, when it is not simply up (for describe,
        search and instructions), else None."""
        for server in self._servers.values():
            if server.config.domain == domain and server.state is not ServerState.UP:
                return f"MCP server {server.name!r} is {server.health()}"
        return None

    def health_note(self, reason_chars: int = 80) -> str:
        """One or two sentences for a model (the MCP server's instructions): the servers
        still starting, and those down with a short reason; '' when every one is up."""
        starting = [s.name for s in self._servers.values() if s.state is ServerState.STARTING]
        starting += [s.name for s in self._servers.values() if s.state is ServerState.IDLE]
        down = []
        for s in self._servers.values():
            if s.state is ServerState.DOWN:
                reason = s.error.reason if s.error is not None else "down"
                cut = reason if len(reason) <= reason_chars else reason[:reason_chars] + "..."
                down.append(f"{s.name} ({cut})")
        parts = []
        if starting:
            parts.append(
                f"MCP servers still starting, their ops searchable once listed: "
                f"{', '.join(starting)}."
            )
        if down:
            parts.append(f"MCP servers down: {'; '.join(down)}.")
        return " ".join(parts)

    def down(self) -> list[McpServerDownError]:
        return [s.error for s in self._servers.values() if s.error is not None]

    # -- calls -------------------------------------------------------------------
    async def call(
        self, op: str, arguments: dict[str, Any] | None = None, *, timeout_s: float | None = None
    ) -> McpCallResult:
        """Call the tool behind ``op``. Raises McpTimeoutError, McpToolError,
        McpServerDownError or McpUnknownOpError, each naming the server."""
        tool = self.tool(op)
        return await self.call_tool(tool.server, tool.name, arguments, timeout_s=timeout_s)

    async def call_tool(
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout_s: float | None = None,
    ) -> McpCallResult:
        return await self.server(server).call(tool, arguments or {}, timeout_s=timeout_s)
