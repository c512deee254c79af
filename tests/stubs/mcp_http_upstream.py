"""A real remote MCP server (official SDK, uvicorn) on 127.0.0.1 for the MCP client tests.

Run as ``python tests/stubs/mcp_http_upstream.py streamable_http|sse TOKEN [PORT]``. It
binds PORT (a random one by default; a restarted server may take its predecessor's),
prints ``URL <its endpoint>`` on stdout once it listens, and serves until killed. Every
request must carry ``Authorization: Bearer TOKEN``; any other gets a 401 before the MCP
layer sees it, as a hosted server behind a gateway answers. ``TOKEN`` ``-`` means no
auth at all.
"""

from __future__ import annotations

import asyncio
import hmac
import socket
import sys
from typing import Any

import uvicorn
from mcp.server import MCPServer
from mcp_types import ToolAnnotations

server: MCPServer = MCPServer("remote", version="1.0", log_level="ERROR")


@server.tool(
    description="Return the text reversed.", annotations=ToolAnnotations(read_only_hint=True)
)
def reverse(text: str) -> str:
    return text[::-1]


@server.tool(name="addNumbers", description="Add two numbers and return the sum.")
def add_numbers(a: float, b: float) -> float:
    return a + b


@server.tool(description="Tell who is asking: the headers the server saw, by name only.")
def whoami() -> str:
    return "a caller with a valid bearer token"


class BearerOnly:
    """Plain ASGI: a request without the expected bearer token gets 401, body unread."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"text/plain"),
                            (b"www-authenticate", b'Bearer realm="stub"'),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": b"unauthorized"})
                return
        await self.app(scope, receive, send)


async def main(transport: str, token: str, port: int = 0) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    port = sock.getsockname()[1]
    if transport == "sse":
        app, path = server.sse_app(), "/sse"
    else:
        app, path = server.streamable_http_app(), "/mcp"
    wrapped = app if token == "-" else BearerOnly(app, token)
    config = uvicorn.Config(wrapped, log_level="error", lifespan="on")
    uvicorn_server = uvicorn.Server(config)
    sock.listen(64)
    print(f"URL http://127.0.0.1:{port}{path}", flush=True)
    await uvicorn_server.serve(sockets=[sock])


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 0))
