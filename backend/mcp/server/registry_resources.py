"""The skill registry's resources as MCP resources.

A skill owner publishes content with ``registry.add_resource(Resource(uri=
"<op>/<path>", op=..., args=...))``; it is read by executing ``op`` with
``args``. Here each resource the caller may see becomes the MCP resource
``sylk://ops/<op>/<path>``, read through the gateway (so scopes, hooks and
errors are the gateway's). The Librarian and Archivalist need do nothing more
to reach MCP clients.
"""

from __future__ import annotations

import json

import mcp_types
from mcp.shared.exceptions import MCPError

from backend.mcp.server.ports import ResourceBody
from backend.skills.gateway.gateway import Gateway
from backend.skills.models import SkillContext

PREFIX = "sylk://ops/"


class RegistryResources:
    def __init__(self, gateway: Gateway, ctx: SkillContext) -> None:
        self.gateway = gateway
        self.ctx = ctx

    async def list_resources(self) -> list[mcp_types.Resource]:
        return [
            mcp_types.Resource(
                uri=PREFIX + resource.uri,
                name=resource.name,
                description=resource.description or None,
            )
            for resource in self.gateway.registry.resources()
            if self.gateway.offered(resource.uri, self.ctx)
        ]

    def templates(self) -> list[mcp_types.ResourceTemplate]:
        return []

    async def read(self, uri: str) -> ResourceBody | None:
        if not uri.startswith(PREFIX):
            return None
        resource = self.gateway.registry.resource(uri[len(PREFIX) :])
        if resource is None or not self.gateway.registry.allowed(resource.uri, self.ctx):
            return None
        envelope = await self.gateway.execute(self.ctx, resource.op, dict(resource.args))
        if not envelope.ok:
            error = envelope.error
            message = error.message if error else "the op failed"
            raise MCPError(mcp_types.INTERNAL_ERROR, f"reading {uri}: {message}", {"uri": uri})
        if isinstance(envelope.result, str):
            return ResourceBody(envelope.result, mime_type="text/plain")
        return ResourceBody(json.dumps(envelope.result, indent=1, ensure_ascii=False, default=str))
