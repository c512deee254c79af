"""What a token may reach, and where the server checks it.

A :class:`Grant` is one token's name and scopes (``domain:``, ``route:``,
``resource:``; none: whatever the server's flags allow). It bounds what its requests
reach, whatever the session they belong to: :class:`GrantScopes` (server middleware)
makes the request's grant :data:`CURRENT_GRANT`; the server puts it on each tool call's
context as its ``op_bound``, so the gateway neither offers ops outside it (``search``,
``describe`` listings and the instructions' counts leave them out; describing one by
name is ACCESS_DENIED) nor runs them (``execute`` or ``batch`` alike, the gateway's own
ACCESS_DENIED envelope; the pre-tool hook :func:`guard` checks again, whatever the
context). It filters resources to the ``resource:`` scopes and refuses reading the
others (-32602 with ``code`` ACCESS_DENIED in its data); a bounded token gets no
prompts (they are filled by ops outside any grant's reach).
"""

from __future__ import annotations

import fnmatch
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import mcp_types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic import BaseModel
from starlette.requests import Request

from backend.skills.envelopes import ErrorCode
from backend.skills.hooks.registry import (
    HookKind,
    HookPriority,
    HookRegistry,
    Rejection,
    ToolCallData,
)

STATE_KEY = "sylk.token"  # in the ASGI scope's state: the request's Grant
HOOK_NAME = "mcp-token-scopes"
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

    def refusal(self, op: str) -> tuple[str, dict[str, Any]]:
        """The ACCESS_DENIED message and details for ``op`` outside this grant."""
        return (
            f"token {self.token!r} may not use {op}: outside its scopes ({', '.join(self.scopes)})",
            {"token": self.token, "scopes": list(self.scopes)},
        )

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


# The grant of the MCP request being handled: set by GrantScopes around the handler (the
# same task, so the gateway's pre-tool hook sees it), unset everywhere else.
CURRENT_GRANT: ContextVar[Grant | None] = ContextVar("mcp_token_grant", default=None)


def request_grant(request: object) -> Grant | None:
    """The grant a request was authenticated with, if it came through :class:`BearerAuth`."""
    if isinstance(request, Request):
        found = request.scope.get("state", {}).get(STATE_KEY)
        return found if isinstance(found, Grant) else None
    return None


# method -> (the list in its result, the field naming each item's URI)
LISTINGS = {
    "resources/list": ("resources", "uri"),
    "resources/templates/list": ("resourceTemplates", "uriTemplate"),
}


def _within(grant: Grant, result: HandlerResult, key: str, field: str) -> HandlerResult:
    """A listing with only the items ``grant`` reaches (a template by its fixed prefix)."""
    if isinstance(result, BaseModel):
        result = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    if isinstance(result, dict) and isinstance(result.get(key), list):
        result[key] = [
            item
            for item in result[key]
            if grant.allows_resource(str(item.get(field, "")).split("{", 1)[0].rstrip("/"))
        ]
    return result


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
        if ctx.method in LISTINGS:
            return _within(grant, result, *LISTINGS[ctx.method])
        return result


def _check_scope(data: ToolCallData) -> None:
    grant = CURRENT_GRANT.get()
    if grant is not None and not grant.allows_op(data.skill.op):
        message, details = grant.refusal(data.skill.op)
        raise Rejection(ErrorCode.ACCESS_DENIED, message, details=details)


def guard(hooks: HookRegistry) -> None:
    """Install the scope check as the first pre-tool hook (once per registry)."""
    if HOOK_NAME not in hooks:
        hooks.add(HookKind.PRE_TOOL, _check_scope, name=HOOK_NAME, priority=HookPriority.FIRST)
