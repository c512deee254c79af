"""The ``[mcp_servers]`` config section: which external MCP servers Sylk starts.

Two spellings are accepted in ``config.toml``::

    [mcp_servers.servers.github]            # keyed by name
    command = ["github-mcp-server", "stdio"]
    env = { GITHUB_TOKEN = "ghp_..." }

    [[mcp_servers.servers]]                 # or a list with explicit names
    name = "echo"
    command = ["python", "echo_server.py"]
    timeout_s = 10
    allow = ["read_*", "list_*"]            # tool globs; none given: every tool
    deny = ["delete_*"]                     # deny wins over allow
    roles = ["librarian", "engineer"]       # who may run its ops; none given: all

A glob matches a tool's own name (``read-file``) or its op spelling
(``read_file``, ``getWeather`` -> ``get_weather``); a tool it keeps out is no
op at all, so no role, search or ``execute`` reaches it.

Environment values print masked (they are mostly tokens); those whose names
look like credentials are offered to the redactor by :meth:`McpSettings.secrets`. A server process
inherits only a safe minimum of Sylk's own environment (PATH, HOME, ...),
never its provider keys; add what it needs under ``env``.

This module imports no MCP SDK code, so ``SylkConfig`` can use it cheaply.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from backend.roles import AGENT_ROLES

# Domains Sylk's own skills live in (with the agent roles); a server may not shadow them.
RESERVED_DOMAINS = frozenset({"sylk", "mcp", "gateway", "sessions"})
_DOMAIN_CHARS = re.compile(r"[^a-z0-9_]+")
_TOOL_CHARS = re.compile(r"[^a-z0-9_]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SECRET_KEY = re.compile(r"TOKEN|KEY|SECRET|PASSWORD|PASSWD|AUTH|CREDENTIAL|COOKIE|PAT$", re.I)


def domain_for(server: str) -> str:
    """The op domain for a server name: ``GitHub Tools`` -> ``github_tools``."""
    name = _DOMAIN_CHARS.sub("_", server.strip().lower()).strip("_")
    if not name or not name[0].isalpha():
        name = f"mcp_{name}".rstrip("_")
    return name


def tool_name_for(tool: str) -> str:
    """A tool's name as an op spells it: ``getWeather`` -> ``get_weather``, ``read-file`` ->
    ``read_file``: models and users guess the snake-case spelling, so it is the one used."""
    name = _TOOL_CHARS.sub("_", _CAMEL.sub("_", tool.strip()).lower()).strip("_")
    if not name or not name[0].isalpha():
        name = f"tool_{name}".rstrip("_")
    return name


def op_for(domain: str, tool: str) -> str:
    """The op name for one tool: ``domain_for('echo')`` + ``getWeather`` -> ``echo.get_weather``."""
    return f"{domain}.{tool_name_for(tool)}"


class McpServerConfig(BaseModel):
    """One external MCP server, started over stdio."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    command: list[str] = Field(min_length=1)
    env: dict[str, SecretStr] = Field(default_factory=dict)
    cwd: Path | None = None  # default: the engine's workspace
    timeout_s: float = Field(default=60.0, gt=0)  # per tool call
    startup_timeout_s: float = Field(default=30.0, gt=0)  # spawn + handshake + tool listing
    max_restarts: int = Field(default=0, ge=0, le=5)  # restarts on the next call after a death
    enabled: bool = True
    allow: tuple[str, ...] = ()  # tool globs kept; empty: every tool
    deny: tuple[str, ...] = ()  # tool globs left out; deny wins over allow
    roles: tuple[str, ...] = ()  # the agent roles that may run its ops; empty: every role

    @field_validator("allow", "deny")
    @classmethod
    def _no_blank_glob(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if any(not glob.strip() for glob in value):
            raise ValueError("a tool glob is empty")
        return value

    @field_validator("roles")
    @classmethod
    def _known_roles(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [role for role in value if role not in AGENT_ROLES]
        if unknown:
            raise ValueError(
                f"unknown role(s) {', '.join(map(repr, unknown))}; "
                f"the roles are {', '.join(AGENT_ROLES)}"
            )
        return value

    @field_validator("command")
    @classmethod
    def _no_blank_program(cls, value: list[str]) -> list[str]:
        if not value[0].strip():
            raise ValueError("the program (first word of command) is empty")
        return value

    @field_validator("name")
    @classmethod
    def _usable_name(cls, value: str) -> str:

        if domain_for(value) in RESERVED_DOMAINS | set(AGENT_ROLES):
            raise ValueError(
                f"server name {value!r} would shadow Sylk's own {domain_for(value)!r} ops; "
                "choose another name"
            )
        return value

    @property
    def domain(self) -> str:
        return domain_for(self.name)

    def offers_tool(self, tool: str) -> bool:
        """Whether the tool named ``tool`` (the server's own name) becomes an op: some allow
        glob matches it (or none is given) and no deny glob does, by either spelling."""
        names = (tool, tool_name_for(tool))

        def matches(globs: tuple[str, ...]) -> bool:
            return any(fnmatchcase(name, glob) for glob in globs for name in names)

        return (not self.allow or matches(self.allow)) and not matches(self.deny)

    def offered_to(self, role: str) -> bool:
        """Whether an agent of ``role`` may run this server's ops (others are refused)."""
        return not self.roles or role in self.roles

    def plain_env(self) -> dict[str, str]:
        return {key: value.get_secret_value() for key, value in self.env.items()}


class McpSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    servers: list[McpServerConfig] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _servers_by_name(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("servers"), dict):
            keyed = data["servers"]
            servers = [
                {"name": name, **body} if isinstance(body, dict) else body
                for name, body in keyed.items()
            ]
            return {**data, "servers": servers}
        return data

    @model_validator(mode="after")
    def _unique_domains(self) -> McpSettings:
        by_domain: dict[str, list[str]] = {}
        for server in self.servers:
            by_domain.setdefault(server.domain, []).append(server.name)
        for domain, names in by_domain.items():
            if len(names) > 1:
                raise ValueError(
                    f"MCP servers {', '.join(map(repr, names))} all map to the op domain "
                    f"{domain!r}; give each a distinct name"
                )
        return self

    def enabled(self) -> list[McpServerConfig]:
        return [server for server in self.servers if server.enabled]

    def secrets(self) -> list[str]:
        """Env values whose names look like credentials, for the redactor.

        Only those: redacting every value would scrub ordinary words and paths.
        """
        return [
            value.get_secret_value()
            for server in self.servers
            for key, value in server.env.items()
            if _SECRET_KEY.search(key) and value.get_secret_value()
        ]
