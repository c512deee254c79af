"""An external tool's image and resources reach the client of ``sylk mcp serve`` whole, as
MCP content blocks after the text (the text only describes them), spoken to with the
official SDK client through a real gateway and a real stdio MCP server."""

from __future__ import annotations

import sys
from pathlib import Path

from mcp import Client
from mcp_types import EmbeddedResource, ImageContent, TextContent

from backend.config.mcp_servers import McpSettings
from backend.mcp.client.as_skills import attach_skills
from backend.mcp.client.hub import McpHub
from backend.mcp.server.server import SylkMcpServer
from backend.skills.builtin.catalog import build_gateway
from backend.skills.models import SkillContext

STUB = Path(__file__).resolve().parents[2] / "stubs" / "mcp_content_server.py"


async def test_an_image_and_a_resource_reach_the_mcp_client_as_blocks(tmp_path: Path) -> None:
    body = {"command": [sys.executable, str(STUB)], "timeout_s": 10}
    settings = McpSettings.model_validate({"servers": {"content": body}})
    async with McpHub(settings, cwd=tmp_path) as hub:
        gateway = build_gateway()
        attach_skills(hub, gateway.registry)
        ctx = SkillContext(session_id="s1", agent="mcp-client", workspace=tmp_path, can_write=True)
        async with Client(SylkMcpServer(gateway, ctx).build(), cache=None) as client:
            shot = await client.call_tool("execute", {"op": "content.snapshot", "args": {}})
            assert not shot.is_error, shot.content
            text, image = shot.content
            assert isinstance(text, TextContent) and "image/png" in text.text
            assert isinstance(image, ImageContent) and image.mime_type == "image/png"
            assert image.data.startswith("iVBORw0KGgo")  # the PNG itself, not a description

            doc = await client.call_tool(
                "execute", {"op": "content.fetch_doc", "args": {"name": "a"}}
            )
            kinds = [type(block) for block in doc.content]
            assert kinds[0] is TextContent and EmbeddedResource in kinds

            plain = await client.call_tool(
                "execute", {"op": "content.get_weather", "args": {"city": "Oslo"}}
            )
            assert [type(block) for block in plain.content] == [TextContent]  # text stays alone
