"""The ``[mcp_server]`` config section: who may call ``sylk mcp serve`` over HTTP.

A served instance that listens beyond loopback (``--allow-remote``) requires a bearer
token; so does a loopback one once this section names a token or sets
``require_token``. The token values live in the data dir (``mcp_tokens.json``, mode
0600), never in this file, which people share and paste; the config only says which
tokens exist and what each may reach::

    [mcp_server]
    require_token = true                     # loopback too

    [mcp_server.tokens.ci]                   # `sylk mcp token show ci`
    scopes = ["domain:librarian", "route:archivalist.chronicle.query", "resource:library"]

Scopes follow the seeds' three levels: ``domain:NAME`` reaches every op of a domain,
``route:OP`` one op (a glob such as ``librarian.code.*`` allowed), ``resource:PATH``
the resources under ``sylk://PATH``. A token with no scopes (and the ``default`` token
unless configured) reaches whatever the server's flags allow.

This module imports no MCP SDK code, so ``SylkConfig`` can use it cheaply.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from backend.config.choices import DEFAULT_TOKEN

SCOPE_LEVELS = ("domain", "route", "resource")

TokenName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_-]{0,39}$")]
"""A token's name, as ``sylk mcp token show NAME`` takes it."""
Scope = Annotated[
    str, StringConstraints(pattern=r"^(domain|route|resource):[A-Za-z0-9_.*?/\[\]-]+$")
]
"""``domain:NAME``, ``route:OP`` or ``resource:PATH`` (the latter two may be globs)."""


class TokenGrant(BaseModel):
    """What one named token may reach."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scopes: tuple[Scope, ...] = ()


class McpServerAuthSettings(BaseModel):
    """``[mcp_server]``: the named tokens and whether loopback needs one too."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    require_token: bool = False
    tokens: dict[TokenName, TokenGrant] = Field(default_factory=dict)

    def token_names(self) -> list[str]:
        """Every token a server accepts: ``default`` and the configured ones."""
        return list(dict.fromkeys([DEFAULT_TOKEN, *self.tokens]))

    def grant(self, name: str) -> TokenGrant:
        return self.tokens.get(name, TokenGrant())

    def requires_token(self, *, allow_remote: bool) -> bool:
        """Off-loopback always; on loopback once a token is configured or required."""
        return allow_remote or self.require_token or bool(self.tokens)
