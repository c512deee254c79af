"""A limit on the size of an HTTP request to the MCP server.

Without one, a client could send a request of any size and the server would hold it,
and the parsed JSON of it, in memory (a 10 MB request cost 1.4 GB). A request whose
declared or actual body is over the limit gets a JSON-RPC error with status 413 and
is never parsed; the connection's next request is served as usual.
"""

from __future__ import annotations

from mcp_types import INVALID_REQUEST, ErrorData, JSONRPCError
from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_REQUEST_BYTES = 4 * 1024 * 1024  # far above any tool call; a file travels by path
# A refused body is read on and dropped (not kept) up to this much, so the client, still
# sending, gets the answer rather than a reset connection; past it the server hangs up.
MAX_DRAINED_BYTES = 64 * 1024 * 1024


class BodyLimit:
    """ASGI wrapper: bodies over ``limit`` bytes are refused before the app sees them."""

    def __init__(self, app: ASGIApp, limit: int = MAX_REQUEST_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length", "")
        too_large = declared.isdigit() and int(declared) > self.limit
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body = message.get("body", b"")
            size += len(body)
            if size > self.limit:
                too_large, chunks = True, []  # from here on it is only read and dropped
            elif not too_large:
                chunks.append(body)
            if not message.get("more_body", False) or size > MAX_DRAINED_BYTES:
                break
        if too_large:
            await self._refuse(scope, receive, send, max(size, int(declared or 0)))
            return
        whole: list[Message] = [{"type": "http.request", "body": b"".join(chunks)}]

        async def replay() -> Message:
            return whole.pop() if whole else await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, size: int) -> None:
        message = f"request too large: {size} bytes or more; at most {self.limit}"
        reply = JSONRPCError(
            jsonrpc="2.0", id=None, error=ErrorData(code=INVALID_REQUEST, message=message)
        )
        response = Response(
            reply.model_dump_json(by_alias=True, exclude_unset=True),
            status_code=413,
            media_type="application/json",
            headers={"connection": "close"},
        )
        await response(scope, receive, send)
