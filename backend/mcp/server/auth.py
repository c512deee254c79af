"""Bearer tokens for ``sylk mcp serve`` over HTTP, and the scopes each token grants.

:class:`BearerAuth` is the outermost ASGI layer of the HTTP app: every request must
carry ``Authorization: Bearer <token>`` naming a token of the
:class:`~backend.mcp.server.token_store.TokenStore`, or it is answered 401 with
``WWW-Authenticate: Bearer`` before anything reads its body. The token's
:class:`Grant` rides on the request (``scope["state"]``) to the handlers.

A grant with scopes bounds what its requests reach, whatever the session they belong
to: :class:`GrantScopes` (server middleware) hands the request's grant to the
gateway's pre-tool hook (:func:`guard`), which refuses any op outside it, from
``execute`` or ``batch`` alike, with the gateway's own ACCESS_DENIED envelope; it
filters resources to the ``resource:`` scopes and refuses reading the others (-32602
with ``code`` ACCESS_DENIED in its data); a bounded token gets no prompts (they are
filled by ops outside any grant's reach). ``search`` and ``describe`` still name ops
outside the grant: names, never results.
"""

from __future__ import annotations

import fnmatch
import logging
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import mcp_types
from mcp.server import Server
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, INVALID_REQUEST, ErrorData, JSONRPCError
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from backend.config.mcp_server_auth import McpServerAuthSettings
from backend.mcp.server.token_store import TokenFileError, TokenStore
from backend.skills.envelopes import ErrorCode
from backend.skills.hooks.registry import (
    HookKind,
    HookPriority,
    HookRegistry,
    Rejection,
    ToolCallData,
)

log = logging.getLogger(__name__)

STATE_KEY = "sylk.token"  # in the ASGI scope's state: the request's Grant
HOOK_NAME = "mcp-token-scopes"
# The grant of the MCP request being handled: set by GrantScopes around the handler (the
# same task, so the gateway's pre-tool hook sees it), unset everywhere else.
CURRENT_GRANT: ContextVar[Grant | None] = ContextVar("mcp_token_grant", default=None)
SCHEME = "Bearer"
RESOURCE_SCHEME = "sylk://"


@dataclass(frozen=True)
class Grant:
    """One token's name and scopes; no scopes: whatever the server's flags allow."""

    token: str
    scopes: tuple[str, ...] = ()

    @property
    def unrestricted(self) -> bool:
        return not self.scopes

    def _values(self, level: str) -> list[str]:
        return [s.split(":", 1)[1] for s in self.scopes if s.split(":", 1)[0] == level]

    def allows_op(self, op: str) -> bool:
        if self.unrestricted:
            return True
        domains = self._values("domain")
        if any(op == d or op.startswith(f"{d}.") for d in domains):
            return True
        return any(fnmatch.fnmatchcase(op, route) for route in self._values("route"))

    def allows_resource(self, uri: str) -> bool:
        if self.unrestricted:
            return True
        if not uri.startswith(RESOURCE_SCHEME):
            return False
        path = uri.removeprefix(RESOURCE_SCHEME)
        return any(
            path == p or path.startswith(f"{p.rstrip('/')}/") or fnmatch.fnmatchcase(path, p)
            for p in self._values("resource")
        )


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
        server.middleware.append(GrantScopes(fixed))
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


def request_grant(request: object) -> Grant | None:
    """The grant a request was authenticated with, if it came through :class:`BearerAuth`."""
    if isinstance(request, Request):
        found = request.scope.get("state", {}).get(STATE_KEY)
        return found if isinstance(found, Grant) else None
    return None


def _denied(grant: Grant, what: str) -> MCPError:
    message = (
        f"token {grant.token!r} may not {what}: outside its scopes ({', '.join(grant.scopes)})"
    )
    data = {
        "code": ErrorCode.ACCESS_DENIED.value,
        "token": grant.token,
        "scopes": list(grant.scopes),
    }
    return MCPError(INVALID_PARAMS, message, data)


class GrantScopes:
    """Server middleware (``Server.middleware``): each request acts within its token's
    grant. Tool calls see it through :data:`CURRENT_GRANT` (the hook :func:`guard`
    installs checks every op they run); resources outside are not listed or read;
    prompts, filled by ops outside any grant's reach, are not offered to a bounded
    token. ``fixed`` is a legacy SSE connection's grant, checked at ``GET /sse``."""

    def __init__(self, fixed: Grant | None = None) -> None:
        self.fixed = fixed

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        grant = request_grant(ctx.request) or self.fixed
        if grant is None or grant.unrestricted:
            return await call_next(ctx)
        params = ctx.params or {}
        if ctx.method == "resources/read" and not grant.allows_resource(str(params.get("uri"))):
            raise _denied(grant, f"read {params.get('uri')}")
        if ctx.method == "prompts/get":
            raise _denied(grant, f"use the prompt {params.get('name')!r}")
        if ctx.method == "prompts/list":
            return mcp_types.ListPromptsResult(prompts=[])
        token = CURRENT_GRANT.set(grant)
        try:
            result = await call_next(ctx)
        finally:
            CURRENT_GRANT.reset(token)
        if isinstance(result, mcp_types.ListResourcesResult):
            result.resources = [r for r in result.resources if grant.allows_resource(str(r.uri))]
        elif isinstance(result, mcp_types.ListResourceTemplatesResult):
            result.resource_templates = [
                t for t in result.resource_templates
                if grant.allows_resource(t.uri_template.split("{", 1)[0].rstrip("/"))
            ]  # fmt: skip
        return result


def _check_scope(data: ToolCallData) -> None:
    grant = CURRENT_GRANT.get()
    if grant is not None and not grant.allows_op(data.skill.op):
        raise Rejection(
            ErrorCode.ACCESS_DENIED,
            f"token {grant.token!r} may not use {data.skill.op}: outside its scopes "
            f"({', '.join(grant.scopes)})",
            details={"token": grant.token, "scopes": list(grant.scopes)},
        )


def guard(hooks: HookRegistry) -> None:
    """Install the scope check as the first pre-tool hook (once per registry)."""
    if HOOK_NAME not in hooks:
        hooks.add(HookKind.PRE_TOOL, _check_scope, name=HOOK_NAME, priority=HookPriority.FIRST)
