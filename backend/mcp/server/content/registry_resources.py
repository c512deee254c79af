"""The skill registry's resources as MCP resources.

A skill owner publishes content with ``registry.add_resource(Resource(uri=
"<op>/<path>", op=..., args=...))``; it is read by executing ``op`` with
``args``. Here each resource the caller may see becomes the MCP resource
``sylk://ops/<op>/<path>``, read through the gateway (so scopes, hooks and
errors are the gateway's). The Librarian and Archivalist need do nothing more
to reach MCP clients. A resource registered under a URI of its own (one with a
scheme, as the library's fragments are, ``sylk://library/...``) keeps it: it is
not prefixed a second time, and the server lists each URI once.
"""

from __future__ import annotations

import json

import mcp_types
from mcp.shared.exceptions import MCPError

from backend.mcp.server.content.ports import ResourceBody
from backend.skills.gateway.gateway import Gateway
from backend.skills.models import SkillContext

PREFIX = "sylk://ops/"


def mcp_uri(registered: str) -> str:
    """The MCP URI of a registry resource: its own if it has a scheme, else under PREFIX."""
    return registered if "://" in registered else PREFIX + registered


def registry_uri(uri: str) -> str:
    """The registry's URI for the MCP URI ``uri`` (the inverse of :func:`mcp_uri`)."""
    if uri.startswith(PREFIX):
        return uri[len(PREFIX) :]
    return uri


class RegistryResources:
    def __init__(self, gateway: Gateway, ctx: SkillContext) -> None:
        self.gateway = gateway
        self.ctx = ctx

    async def list_resources(self) -> list[mcp_types.Resource]:
        return [
            mcp_types.Resource(
                uri=mcp_uri(resource.uri),
                name=resource.name,
                description=resource.description or None,
            )
            for resource in self.gateway.registry.resources()
            if self.gateway.offered(resource.uri, self.ctx)
        ]

    def templates(self) -> list[mcp_types.ResourceTemplate]:
        return []

    async def read(self, uri: str) -> ResourceBody | None:
        resource = self.gateway.registry.resource(registry_uri(uri))
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
