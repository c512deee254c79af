"""Changing the MCP servers while Sylk runs: re-listing, enabling, disabling.

What the hub needs for it and nothing else: the typed errors a user or model gets
for a server name that is wrong or disabled, what a re-listing changed
(:class:`ToolsChange`), where the enable/disable choice is kept across restarts
(:class:`ServerChoices`, the archive's preferences in an engine), and the debounce
that turns a burst of ``list_changed`` notifications into one re-listing
(:class:`RelistDebounce`).

The choice persists: a user who disables a noisy or broken server with ``/mcp
disable`` expects it still off after a restart, and one who enables a server the
config leaves off expects it on. The config's ``enabled`` is the default until the
user chooses; the choice is kept per server name under ``mcp.servers.<name>.enabled``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from backend.errors import ErrorKind
from backend.mcp.client.errors import McpError
from backend.mcp.client.models import McpTool

log = logging.getLogger(__name__)

DEBOUNCE_S = 0.25  # a server that changes many tools at once tells once per tool


class McpUnknownServerError(McpError):
    """No configured MCP server has that name; the message lists the ones there are."""

    error_kind = ErrorKind.NOT_FOUND

    def __init__(self, server: str, known: Iterable[str]) -> None:
        names = sorted(known)
        listed = ", ".join(names) if names else "none is configured"
        super().__init__(
            server,
            f"no MCP server named {server!r}; the configured servers are: {listed}",
            help_hint="add servers under [mcp_servers.servers.NAME] in config.toml",
        )
        self.details = {"reason": "mcp_unknown_server", "server": server, "known": names}


class McpServerDisabledError(McpError):
    """The server is disabled (by the user, or by its config): its ops do not run."""

    error_kind = ErrorKind.CONFLICT

    def __init__(self, server: str) -> None:
        super().__init__(server, f"the MCP server {server!r} is disabled; /mcp enable {server}")
        self.details = {"reason": "mcp_server_disabled", "server": server}


class McpToolGoneError(McpError):
    """The server re-listed its tools and this one is no longer among them (or is kept
    out by the config's allow/deny)."""

    error_kind = ErrorKind.NOT_FOUND

    def __init__(self, server: str, op: str) -> None:
        super().__init__(
            server,
            f"no op named {op!r}: the MCP server {server!r} no longer offers it "
            "(its tool list changed)",
            help_hint=f"search again, or describe {op.split('.', 1)[0]!r} for its tools now",
        )
        self.details = {"reason": "mcp_tool_gone", "server": server, "op": op}


class ServerChoices(Protocol):
    """Where a server's enable/disable choice outlives the process (the archive)."""

    def get_preference(self, key: str) -> Any | None: ...
    def set_preference(self, key: str, value: Any) -> None: ...


def choice_key(server: str) -> str:
    return f"mcp.servers.{server}.enabled"


def chosen(choices: ServerChoices | None, server: str, default: bool) -> bool:
    """The user's stored choice for ``server``, else ``default`` (the config's)."""
    if choices is None:
        return default
    try:
        value = choices.get_preference(choice_key(server))
    except Exception:  # an unreadable archive must not keep servers from starting
        log.exception("reading the enable choice of MCP server %r failed", server)
        return default
    return value if isinstance(value, bool) else default


@dataclass(frozen=True)
class ToolsChange:
    """What one re-listing of a server changed, by op; ``note`` says why nothing could be
    listed (disabled, down, still starting)."""

    server: str
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)  # same op, other schema or text
    tools: int = 0
    note: str = ""

    @property
    def any(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    def line(self) -> str:
        """One line for ``/mcp refresh``."""
        if self.note:
            return f"  {self.server}: {self.note}"
        if not self.any:
            return f"  {self.server}: no change ({self.tools} tools)"
        parts = [
            f"{label} {', '.join(ops)}"
            for label, ops in (
                ("added", self.added),
                ("removed", self.removed),
                ("changed", self.changed),
            )
            if ops
        ]
        return f"  {self.server}: {'; '.join(parts)} ({self.tools} tools)"

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"server": self.server, "tools": self.tools}
        out |= {"added": self.added, "removed": self.removed, "changed": self.changed}
        if self.note:
            out["note"] = self.note
        return out


def tools_change(server: str, before: list[McpTool], after: list[McpTool]) -> ToolsChange:
    old = {t.op: t for t in before}
    new = {t.op: t for t in after}
    return ToolsChange(
        server=server,
        added=[op for op in new if op not in old],
        removed=[op for op in old if op not in new],
        changed=[op for op in new if op in old and new[op] != old[op]],
        tools=len(after),
    )


class RelistDebounce:
    """One re-listing per burst of notifications, per server.

    The first notification schedules a re-listing ``delay_s`` later; those arriving
    before it starts join it. One arriving while it runs schedules one more, so the
    last change is always seen. Each task is owned and cancelled by :meth:`aclose`.
    """

    def __init__(self, relist: Callable[[str], Awaitable[Any]], delay_s: float = DEBOUNCE_S):
        self._relist = relist
        self.delay_s = delay_s
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._heard: dict[str, int] = {}
        self.runs = 0  # re-listings done, for tests and logs

    def heard(self, server: str) -> None:
        self._heard[server] = self._heard.get(server, 0) + 1
        task = self._tasks.get(server)
        if task is None or task.done():
            self._tasks[server] = asyncio.create_task(
                self._run(server), name=f"mcp-relist-{server}"
            )

    async def _run(self, server: str) -> None:
        while True:
            await asyncio.sleep(self.delay_s)
            seen = self._heard.get(server, 0)
            try:
                await self._relist(server)
            except Exception as exc:  # down or gone meanwhile: its health says so
                log.warning("re-listing the tools of MCP server %r failed: %s", server, exc)
                return
            self.runs += 1
            if self._heard.get(server, 0) == seen:
                return

    async def settled(self) -> None:
        """Wait for every scheduled re-listing to finish (tests, shutdown)."""
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)

    async def aclose(self) -> None:
        for task in self._tasks.values():
            task.cancel()
        await self.settled()
