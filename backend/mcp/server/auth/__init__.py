"""Who may call ``sylk mcp serve`` over HTTP: bearer tokens (:mod:`.token_store`),
checked in front of the app (:mod:`.bearer`), and the scopes each grants (:mod:`.grants`)."""

from backend.mcp.server.auth.bearer import BearerAuth, TokenAuth
from backend.mcp.server.auth.grants import Grant, request_grant

__all__ = ["BearerAuth", "Grant", "TokenAuth", "request_grant"]
