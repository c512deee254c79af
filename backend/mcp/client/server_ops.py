"""The ``mcp.servers.*`` ops and the ``/mcp`` command: the configured MCP servers
listed with their health, re-listed, enabled and disabled while Sylk runs.

They live beside the hub rather than in ``backend/skills/builtin`` because they need
it (the builtin ops sit below the MCP client in the import layers); they are declared
the builtin way and registered with the servers' own ops by
:func:`backend.mcp.client.as_skills.attach_skills`, only when a server is configured.
Enabling and disabling are writes (an agent needs write permission); the choice is
kept across restarts (see :mod:`backend.mcp.client.server_control`).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from backend.errors import CommandError
from backend.mcp.client.hub import McpHub, McpServerStatus
from backend.skills.builtin.declare import WRITE, NoParams, Params, declare
from backend.skills.models import Skill, SkillContext

AGENT = "mcp"
DOMAIN = "mcp"
DOMAIN_TEXT = "External MCP servers: their health; refresh, enable or disable one"
USAGE = "/mcp  ·  /mcp enable NAME  ·  /mcp disable NAME  ·  /mcp refresh [NAME]"
NONE_CONFIGURED = (
    "No MCP servers are configured: add one under [mcp_servers.servers.NAME] in config.toml."
)


class ServerParams(Params):
    server: str = Field(min_length=1, description="the server's name, as mcp.servers.list shows")


class RefreshParams(Params):
    server: str | None = Field(default=None, description="one server; none: every enabled one")


def status_dict(status: McpServerStatus) -> dict[str, Any]:
    return {
        "server": status.name,
        "domain": status.domain,
        "state": status.state.value,
        "health": status.health,
        "tools": status.tools,
    }


def server_op_skills(hub: McpHub) -> list[Skill]:
    async def list_servers(_ctx: SkillContext, _params: NoParams) -> dict[str, Any]:
        return {"servers": [status_dict(s) for s in hub.status()]}

    async def refresh(_ctx: SkillContext, params: RefreshParams) -> dict[str, Any]:
        return {"changes": [change.as_dict() for change in await hub.refresh(params.server)]}

    async def enable(_ctx: SkillContext, params: ServerParams) -> dict[str, Any]:
        return status_dict(await hub.enable(params.server))

    async def disable(_ctx: SkillContext, params: ServerParams) -> dict[str, Any]:
        return status_dict(await hub.disable(params.server))

    named = {"server": hub.configured()[0]} if hub.configured() else {"server": "github"}
    return [
        declare(
            "mcp.servers.list",
            AGENT,
            "List the configured external MCP servers with their health: up with N tools, "
            "starting, down and why, or disabled.",
            NoParams,
            list_servers,
            tags=("mcp", "servers", "health", "status"),
            examples=[("all servers", {})],
        ),
        declare(
            "mcp.servers.refresh",
            AGENT,
            "List an MCP server's tools again (or every enabled server's) and say which were "
            "added, removed or changed; for servers that do not announce changes.",
            RefreshParams,
            refresh,
            tags=("mcp", "servers", "reload", "tools"),
            examples=[("every server", {}), ("one server", named)],
        ),
        declare(
            "mcp.servers.enable",
            AGENT,
            "Enable an MCP server and start it in the background; its tools become ops once "
            "listed. Kept across restarts.",
            ServerParams,
            enable,
            kind=WRITE,
            tags=("mcp", "servers", "start"),
            examples=[("enable", named)],
        ),
        declare(
            "mcp.servers.disable",
            AGENT,
            "Disable an MCP server: stop its process and remove its ops until it is enabled "
            "again. Kept across restarts.",
            ServerParams,
            disable,
            kind=WRITE,
            tags=("mcp", "servers", "stop"),
            examples=[("disable", named)],
        ),
    ]


async def mcp_command(hub: McpHub, args: dict[str, str]) -> str:
    """``/mcp`` (list), ``/mcp enable NAME``, ``/mcp disable NAME``, ``/mcp refresh [NAME]``."""
    action, name = args.get("action", "list"), args.get("server") or None
    if action == "list":
        if not hub.configured():
            return NONE_CONFIGURED
        return "\n".join(["MCP servers:", *hub.status_lines(), "", USAGE])
    if action == "refresh":
        if not hub.configured():
            return NONE_CONFIGURED
        changes = await hub.refresh(name)
        return "\n".join(["Listed the tools again:", *(change.line() for change in changes)])
    if action not in ("enable", "disable") or name is None:
        raise CommandError(f"/mcp {action} needs a server name", help_hint=USAGE)
    if action == "enable":
        status = await hub.enable(name)
        return f"Enabled the MCP server {name!r} (kept across restarts): {status.health}."
    status = await hub.disable(name)
    return (
        f"Disabled the MCP server {name!r} (kept across restarts): stopped, its ops removed. "
        f"/mcp enable {name} brings it back."
    )
