"""Who may call ``sylk mcp serve`` over HTTP: bearer tokens (:mod:`.token_store`),
checked in front of the app (:mod:`.bearer`), and the scopes each grants (:mod:`.grants`)."""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from backend.mcp.server.auth.bearer import BearerAuth, TokenAuth
    from backend.mcp.server.auth.grants import Grant, request_grant

__all__ = ["BearerAuth", "Grant", "TokenAuth", "request_grant"]


def __getattr__(name: str) -> Any:
    """The exports, imported on first use: ``sylk mcp token show`` needs the token store
    alone, and the MCP SDK the others bring in doubled its start-up (~0.8 s of ~1.1)."""
    if name in ("BearerAuth", "TokenAuth"):
        from backend.mcp.server.auth import bearer

        return getattr(bearer, name)
    if name in ("Grant", "request_grant"):
        from backend.mcp.server.auth import grants

        return getattr(grants, name)
    raise AttributeError(name)
