"""The bearer check in front of ``sylk mcp serve`` over HTTP.

:class:`BearerAuth` is the outermost ASGI layer of the HTTP app: every request must
carry ``Authorization: Bearer <token>`` naming a token of the
:class:`~backend.mcp.server.auth.token_store.TokenStore`, or it is answered 401 with
``WWW-Authenticate: Bearer`` before anything reads its body. The token's
:class:`~backend.mcp.server.auth.grants.Grant` rides on the request
(``scope["state"]``) to the handlers.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from mcp.server import Server
from mcp_types import INVALID_REQUEST, ErrorData, JSONRPCError
from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from backend.config.mcp_server_auth import McpServerAuthSettings
from backend.mcp.server.auth.grants import STATE_KEY, Grant, GrantScopes, guard
from backend.mcp.server.auth.token_store import TokenFileError, TokenStore
from backend.skills.hooks.registry import HookRegistry

log = logging.getLogger(__name__)

SCHEME = "Bearer"


@dataclass(frozen=True)
class TokenAuth:
    """The token store and the configured grants a served instance checks against."""

    store: TokenStore
    settings: McpServerAuthSettings

    def grant(self, name: str) -> Grant:
        return Grant(name, self.settings.grant(name).scopes)

    def prepare(self) -> list[str]:
        """Check the token file and make missing tokens (their names returned), so a
        bad file fails before the server listens."""
        return self.store.ensure(self.settings.token_names())

    def middleware(self, app: ASGIApp) -> ASGIApp:
        return BearerAuth(app, self)

    def guard(self, hooks: HookRegistry) -> None:
        """Check every op a bounded token's request runs (see :func:`guard`)."""
        guard(hooks)

    def bound(self, server: Server[Any], fixed: Grant | None = None) -> Server[Any]:
        """``server`` answering each request within its token's grant."""
        # Outermost, so every other middleware (the instructions at initialize) runs
        # within the request's grant.
        server.middleware.insert(0, GrantScopes(fixed))
        return server


def _refusal(status: int, message: str, challenge: str) -> Response:
    reply = JSONRPCError(
        jsonrpc="2.0", id=None, error=ErrorData(code=INVALID_REQUEST, message=message)
    )
    headers = {"WWW-Authenticate": challenge} if challenge else {}
    return Response(
        reply.model_dump_json(by_alias=True, exclude_unset=True),
        status_code=status,
        media_type="application/json",
        headers=headers,
    )


class BearerAuth:
    """Answers 401 to any HTTP request without a known bearer token; see the module."""

    def __init__(self, app: ASGIApp, auth: TokenAuth) -> None:
        self.app = app
        self.auth = auth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        scheme, _, presented = Headers(scope=scope).get("authorization", "").partition(" ")
        presented = presented.strip()
        if scheme.lower() != SCHEME.lower() or not presented:
            challenge = f'{SCHEME} realm="sylk"'
            await _refusal(401, "unauthorized: send Authorization: Bearer <token>", challenge)(
                scope, receive, send
            )
            return
        try:
            name = self.auth.store.identify(presented)
        except TokenFileError as exc:  # changed under a running server: refuse everyone
            log.error("MCP token store unusable: %s", exc)
            await _refusal(503, "the server's token store is unusable", "")(scope, receive, send)
            return
        if name is None:
            challenge = f'{SCHEME} realm="sylk", error="invalid_token"'
            await _refusal(401, "unauthorized: unknown or rotated token", challenge)(
                scope, receive, send
            )
            return
        scope.setdefault("state", {})[STATE_KEY] = self.auth.grant(name)
        await self.app(scope, receive, send)
