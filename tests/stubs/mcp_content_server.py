"""A small real MCP server (official SDK, stdio) whose tools return more than text.

Run as ``python tests/stubs/mcp_content_server.py``. Its tools return an image
block, an embedded resource, a resource link, and fail the ways real servers
do: an ``isError`` result that says access was denied or a file was not found
(worded as the npm filesystem server words them), and JSON-RPC errors. Two
tools carry names a model would not guess: ``read-file`` and ``getWeather``,
and one, ``delete_everything``, exists to be denied by the config.
"""

from __future__ import annotations

import base64

import mcp_types
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError

server: MCPServer = MCPServer("content", version="1.0", log_level="ERROR")

# A 1x1 transparent PNG: the smallest honest image.
PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


@server.tool(description="Return a small PNG image and a caption.")
def snapshot() -> list[mcp_types.ContentBlock]:
    data = base64.b64encode(PIXEL_PNG).decode()
    return [
        mcp_types.TextContent(text="a 1x1 pixel"),
        mcp_types.ImageContent(data=data, mime_type="image/png"),
    ]


@server.tool(description="Return a document embedded as a resource, and a link to another.")
def fetch_doc(name: str) -> list[mcp_types.ContentBlock]:
    return [
        mcp_types.EmbeddedResource(
            resource=mcp_types.TextResourceContents(
                uri=f"docs://{name}", mime_type="text/markdown", text=f"# {name}\nThe body."
            )
        ),
        mcp_types.ResourceLink(
            uri=f"docs://{name}/history",
            name=f"{name} history",
            mime_type="text/plain",
            description="Every change to the document.",
        ),
        mcp_types.EmbeddedResource(
            resource=mcp_types.BlobResourceContents(
                uri=f"docs://{name}/logo", mime_type="image/png", blob=base64.b64encode(PIXEL_PNG)
            )
        ),
    ]


@server.tool(name="read-file", description="Read a file from the allowed directory.")
def read_file(path: str) -> str:
    if path.startswith("/etc"):
        raise ToolError(f"Access denied - path outside allowed directories: {path}")
    if path.endswith(".missing"):
        raise ToolError(f"ENOENT: no such file or directory, open '{path}'")
    return f"contents of {path}"


@server.tool(name="getWeather", description="Tell the weather in a city.")
def get_weather(city: str) -> str:
    return f"sunny in {city}"


@server.tool(description="Remove every file. Exists to be denied by the config.")
def delete_everything() -> str:
    return "gone"


@server.tool(description="Fail with the JSON-RPC error code and message given.")
def rpc_fail(code: int, message: str) -> str:
    raise MCPError(code=code, message=message)


@server.tool(description="Fail with a tool error carrying the given message.")
def fail(message: str) -> str:
    raise ToolError(message)


if __name__ == "__main__":
    server.run("stdio")
