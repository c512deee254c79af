"""The sessions of ``sylk mcp serve --http``: how many, for how long, and who they are.

A streamable-HTTP client is a session (the ``Mcp-Session-Id`` the server issues at
initialize) and, here, a caller with state of its own (:mod:`backend.mcp.server.callers`).
Left alone, both would live until the client deletes its session, and a client that
simply goes away never does. So a session that has had no request in flight (no call
being served, no open event stream) for :attr:`SessionLimits.idle_s` seconds ends,
and at most :attr:`SessionLimits.max_sessions` are open at once: while that many are,
an initialize is answered 503 and the others are unaffected. A request naming an
ended or unknown session is answered 404, the spec's signal to initialize anew.

The SDK's session manager keeps the time and the count; :class:`CallerSessionManager`
lets the caller go the moment the SDK lets its session go, however it ended (expired,
deleted by the client, crashed, or refused at its opening request).

Streamable HTTP is served in the handshake era only (protocol versions up to
2025-11-25): a 2026-07-28 request carries no session, so there would be no client to
keep a caller for. Such requests are refused with the error that tells a client which
versions to use, and the SDK's clients fall back to ``initialize`` on their own.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from mcp.server import Server
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types import (
    UNSUPPORTED_PROTOCOL_VERSION,
    ErrorData,
    JSONRPCError,
    UnsupportedProtocolVersionErrorData,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from backend.errors import ErrorKind, SylkError
from backend.mcp.server.body_limit import MAX_REQUEST_BYTES
from backend.mcp.server.callers import SessionCallers

MCP_PATH = "/mcp"
DEFAULT_IDLE_S = 30 * 60.0
DEFAULT_MAX_SESSIONS = 100  # clients of one developer's machine; each holds a server task
MAX_REFUSED_BODY = 1 << 20


class SessionLimitsError(SylkError):
    """``--session-idle`` or ``--max-sessions`` is not a usable number."""

    error_kind = ErrorKind.INVALID

    def __init__(self, what: str, value: float) -> None:
        super().__init__(
            f"{what} must be a positive number, not {value}",
            help_hint=f"e.g. --session-idle {DEFAULT_IDLE_S:.0f} --max-sessions "
            f"{DEFAULT_MAX_SESSIONS}",
        )


@dataclass(frozen=True)
class SessionLimits:
    """How long an idle HTTP session lives (seconds) and how many may be open at once."""

    idle_s: float = DEFAULT_IDLE_S
    max_sessions: int = DEFAULT_MAX_SESSIONS

    def __post_init__(self) -> None:
        if not (math.isfinite(self.idle_s) and self.idle_s > 0):
            raise SessionLimitsError("the session idle time", self.idle_s)
        if self.max_sessions < 1:
            raise SessionLimitsError("the number of sessions", self.max_sessions)


class CallerSessionManager(StreamableHTTPSessionManager):
    """The SDK's session manager, which also lets a session's caller go with it."""

    def __init__(self, app: Server[Any], callers: SessionCallers, **options: Any) -> None:
        super().__init__(app, **options)
        self.callers = callers

    async def _discard_session(
        self, session_id: str, transport: StreamableHTTPServerTransport
    ) -> None:
        # Every way a session ends passes here (the SDK's one place for it); it may
        # pass twice (a DELETE, then its server task), and forget is idempotent.
        try:
            await super()._discard_session(session_id, transport)
        finally:
            self.callers.forget(session_id)

    def open_sessions(self) -> int:
        return len(self._server_instances)


async def _refuse_era(version: str, scope: Scope, receive: Receive, send: Send) -> None:
    body = b""
    async for chunk in Request(scope, receive).stream():
        body += chunk
        if len(body) > MAX_REFUSED_BODY:
            break
    try:
        message = json.loads(body)
    except ValueError:
        message = None
    request_id = message.get("id") if isinstance(message, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        request_id = None
    versions = list(HANDSHAKE_PROTOCOL_VERSIONS)
    error = ErrorData(
        code=UNSUPPORTED_PROTOCOL_VERSION,
        message=f"protocol {version} is not served over HTTP here: each client is a session "
        f"of its own, opened by initialize at one of {', '.join(versions)}",
        data=UnsupportedProtocolVersionErrorData(supported=versions, requested=version).model_dump(
            mode="json"
        ),
    )
    reply = JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
    response = Response(
        reply.model_dump_json(by_alias=True, exclude_unset=True),
        status_code=400,
        media_type="application/json",
    )
    await response(scope, receive, send)


class HandshakeOnly:
    """ASGI wrapper of the streamable-HTTP app: refuses sessionless (2026-07-28) requests."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == MCP_PATH:
            version = Headers(scope=scope).get(MCP_PROTOCOL_VERSION_HEADER)
            if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
                await _refuse_era(version, scope, receive, send)
                return
        await self.app(scope, receive, send)


def streamable_app(
    server: Server[Any],
    callers: SessionCallers,
    security: TransportSecuritySettings,
    limits: SessionLimits,
) -> tuple[ASGIApp, CallerSessionManager]:
    """``server`` served as streamable HTTP at :data:`MCP_PATH` within ``limits``, and
    the manager of its sessions."""
    manager = CallerSessionManager(
        server,
        callers,
        security_settings=security,
        session_idle_timeout=limits.idle_s,
        max_sessions=limits.max_sessions,
        max_request_body_size=MAX_REQUEST_BYTES,
    )

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    routes = [Route(MCP_PATH, endpoint=StreamableHTTPASGIApp(manager))]
    return HandshakeOnly(Starlette(routes=routes, lifespan=lifespan)), manager
