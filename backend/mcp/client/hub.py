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

Servers change while Sylk runs: one that sends ``notifications/tools/list_changed`` is
re-listed (once per burst, :class:`RelistDebounce`) and the listeners hear it, so its
ops follow; :meth:`McpHub.refresh` re-lists on demand and says what changed, for
servers that never tell; :meth:`McpHub.disable` stops a server and its ops leave,
:meth:`McpHub.enable` starts it again in the background. The choice is kept in
``choices`` (the archive's preferences) and wins over the config's ``enabled`` at the
next start (see :mod:`backend.mcp.client.server_control`).
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
from backend.mcp.client.server_control import (
    DEBOUNCE_S,
    McpServerDisabledError,
    McpUnknownServerError,
    RelistDebounce,
    ServerChoices,
    ToolsChange,
    choice_key,
    chosen,
    tools_change,
)

if TYPE_CHECKING:
    from backend.config.mcp_servers import McpServerConfig
    from backend.mcp.client.connection import McpServerConnection

log = logging.getLogger(__name__)

ToolsListener = Callable[[str], None]

__all__ = [
    "McpCallResult",
    "McpHub",
    "McpServerStatus",
    "McpTool",
    "ServerState",
    "ToolsChange",
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

    def __init__(
        self,
        settings: McpSettings,
        *,
        cwd: Path | None = None,
        grace_s: float = 2.0,
        choices: ServerChoices | None = None,
        debounce_s: float = DEBOUNCE_S,
    ):
        self.settings = settings
        self.cwd, self.grace_s, self.choices = cwd, grace_s, choices
        self._configs = {server.name: server for server in settings.servers}
        self._servers: dict[str, McpServerConnection] = {}
        self._tool_listeners: list[ToolsListener] = []
        self.relists = RelistDebounce(self._relist, debounce_s)
        for server in settings.servers:  # the user's stored choice wins over the config
            if chosen(choices, server.name, server.enabled):
                self._servers[server.name] = self._connection(server)
        self._started = False
        self._closed = False
        self._starts: list[asyncio.Task[None]] = []

    def _connection(self, config: McpServerConfig) -> McpServerConnection:
        from backend.mcp.client.connection import McpServerConnection  # the SDK loads here

        return McpServerConnection(
            config,
            cwd=self.cwd,
            grace_s=self.grace_s,
            on_tools=self._tools_listed,
            on_list_changed=self._list_changed,
        )

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
        await self.relists.aclose()
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
        self._tell(server.name)

    def _tell(self, name: str) -> None:
        for listener in list(self._tool_listeners):
            try:
                listener(name)
            except Exception:  # the others still hear of it; the server stays up
                log.exception("a listener failed on the new tools of MCP server %r", name)

    def _list_changed(self, server: McpServerConnection) -> None:
        if not self._closed and self._servers.get(server.name) is server:
            self.relists.heard(server.name)

    async def _relist(self, name: str) -> None:
        server = self._servers.get(name)
        if server is None or server.state is not ServerState.UP:
            return  # disabled or down meanwhile; a start lists afresh anyway
        before = list(server.tools)
        change = tools_change(name, before, await server.relist_tools())
        log.info("MCP server %r changed its tools:%s", name, change.line().split(":", 1)[1])

    # -- changes while running ---------------------------------------------------
    def configured(self) -> list[str]:
        """Every configured server's name, enabled or not, in config order."""
        return list(self._configs)

    def config_of(self, name: str) -> McpServerConfig:
        try:
            return self._configs[name]
        except KeyError:
            raise McpUnknownServerError(name, self._configs) from None

    def is_enabled(self, name: str) -> bool:
        self.config_of(name)
        return name in self._servers

    async def refresh(self, name: str | None = None) -> list[ToolsChange]:
        """List the tools of one server (or every enabled one) again, now, and say what
        changed; a server that never started is started, a down one restarted if a
        restart is left. Raises McpUnknownServerError for a name not configured."""
        names = [name] if name is not None else self.configured()
        if name is not None:
            self.config_of(name)
        return list(await asyncio.gather(*(self._refresh_one(n) for n in names)))

    async def _refresh_one(self, name: str) -> ToolsChange:
        server = self._servers.get(name)
        if server is None:
            return ToolsChange(name, note=f"disabled (/mcp enable {name})")
        offers = server.config.offers_tool
        before = [t for t in server.tools if offers(t.name)]
        try:
            after = await server.relist_tools()
        except McpError as exc:
            return ToolsChange(name, tools=len(before), note=f"not re-listed: {exc}")
        return tools_change(name, before, [t for t in after if offers(t.name)])

    async def enable(self, name: str) -> McpServerStatus:
        """Enable the server (kept across restarts) and start it in the background, as at
        startup; its ops join once it has listed its tools."""
        config = self.config_of(name)
        await self._remember(name, True)
        if name not in self._servers and not self._closed:
            server = self._connection(config)
            self._servers[name] = server
            self._servers = {n: self._servers[n] for n in self._configs if n in self._servers}
            if self._started:
                self._starts.append(
                    asyncio.create_task(server.start(), name=f"mcp-start-{server.name}")
                )
            self._tell(name)
        return self.status_of(name)

    async def disable(self, name: str) -> McpServerStatus:
        """Disable the server (kept across restarts): its process group is stopped and its
        ops leave search, describe and execute."""
        self.config_of(name)
        await self._remember(name, False)
        server = self._servers.pop(name, None)
        if server is not None:
            await server.aclose()
            self._tell(name)
        return self.status_of(name)

    async def _remember(self, name: str, enabled: bool) -> None:
        if self.choices is not None:
            await asyncio.to_thread(self.choices.set_preference, choice_key(name), enabled)

    # -- what is there ---------------------------------------------------------
    def server(self, name: str) -> McpServerConnection:
        """The running server ``name``; McpServerDisabledError or McpUnknownServerError."""
        server = self._servers.get(name)
        if server is not None:
            return server
        self.config_of(name)
        raise McpServerDisabledError(name)

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
        """Every configured server, in config order; a disabled one says so."""
        return [self.status_of(name) for name in self._configs]

    def status_of(self, name: str) -> McpServerStatus:
        s = self._servers.get(name)
        if s is None:
            config = self.config_of(name)
            health = f"disabled (/mcp enable {name})"
            return McpServerStatus(
                name, config.domain, ServerState.DISABLED, 0, None, 0, None, health
            )
        return McpServerStatus(
            name=s.name,
            domain=s.config.domain,
            state=s.state,
            tools=len(s.tools),
            pid=s.process.pid if s.process is not None else None,
            restarts=s.restarts,
            error=str(s.error) if s.error is not None else None,
            health=s.health(),
        )

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
        """A sentence or three for a model (the MCP server's instructions): the servers
        still starting, those down with a short reason, and those disabled (a model that
        knew their ops learns why they are gone); '' when every one is up."""
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
        disabled = [name for name in self._configs if name not in self._servers]
        if disabled:
            parts.append(f"MCP servers disabled (no ops until enabled): {', '.join(disabled)}.")
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
