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

    [mcp_servers.servers.github_remote]     # a remote server: url instead of command
    url = "https://api.githubcopilot.com/mcp/"
    transport = "streamable_http"           # or "sse" (legacy), or "auto": the first, then SSE
    headers = { Authorization = "Bearer ${GITHUB_TOKEN}" }

A remote server's ``headers`` may name environment variables as ``${VAR}``; they are
read when the server starts (:meth:`McpServerConfig.resolved_headers`), and a missing
one is an :class:`McpConfigError` naming the server and the variable. Header values
are secrets: they never print, and the redactor scrubs them. Plain ``http://`` is
refused unless the host is a loopback address or ``allow_insecure = true``: a bearer
token must not cross a network in clear.

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

import ipaddress
import os
import re
from collections.abc import Mapping
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from backend.errors import ErrorKind, SylkError
from backend.roles import AGENT_ROLES

# Domains Sylk's own skills live in (with the agent roles); a server may not shadow them.
RESERVED_DOMAINS = frozenset({"sylk", "mcp", "gateway", "sessions"})
_DOMAIN_CHARS = re.compile(r"[^a-z0-9_]+")
_TOOL_CHARS = re.compile(r"[^a-z0-9_]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SECRET_KEY = re.compile(r"TOKEN|KEY|SECRET|PASSWORD|PASSWD|AUTH|CREDENTIAL|COOKIE|PAT$", re.I)
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # an RFC 9110 token
Transport = Literal["streamable_http", "sse", "auto"]


class McpConfigError(SylkError):
    """An MCP server's settings cannot be used as they are (named in the message)."""

    error_kind = ErrorKind.INVALID


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only: ``localhost`` or a loopback address."""
    if host.lower() in ("localhost", "localhost.") or host.lower().endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
    """One external MCP server: a command started over stdio, or a remote ``url``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    command: list[str] | None = Field(default=None, min_length=1)
    url: str | None = None
    transport: Transport = "streamable_http"  # for a url only
    headers: dict[str, SecretStr] = Field(default_factory=dict)  # for a url only; ${VAR} read
    allow_insecure: bool = False  # plain http:// to a host beyond loopback
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
    def _no_blank_program(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and not value[0].strip():
            raise ValueError("the program (first word of command) is empty")
        return value

    @model_validator(mode="after")
    def _one_way_to_reach_it(self) -> McpServerConfig:
        """Exactly one of ``command`` and ``url``; a url is http(s) with a host, and plain
        http only to loopback unless ``allow_insecure``: headers carry tokens."""
        where = f"MCP server {self.name!r}"
        if (self.command is None) == (self.url is None):
            raise ValueError(f"{where}: give exactly one of command (stdio) or url (remote)")
        if self.command is not None:
            if self.headers or self.transport != "streamable_http" or self.allow_insecure:
                raise ValueError(
                    f"{where}: headers, transport and allow_insecure are for a url server only"
                )
            return self
        parts = urlsplit(self.url or "")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(
                f"{where}: url must be http:// or https:// with a host, "
                f"not {self.origin() or 'that'!r}"
            )
        if parts.username is not None or parts.password is not None:
            raise ValueError(f"{where}: put credentials in headers, not in the url")
        if parts.scheme == "http" and not is_loopback(parts.hostname) and not self.allow_insecure:
            raise ValueError(
                f"{where}: plain http to {parts.hostname} would send its headers in clear; "
                "use https, or set allow_insecure = true if the network is trusted"
            )
        bad = [key for key in self.headers if not _HEADER_NAME.match(key)]
        if bad:
            raise ValueError(f"{where}: invalid header name(s) {', '.join(map(repr, bad))}")
        return self

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

    @property
    def remote(self) -> bool:
        return self.url is not None

    def origin(self) -> str:
        """Where a remote server is, safe to show: scheme, host and port, never the path,
        query or headers (either may hold a token); '' for a stdio server."""
        if self.url is None:
            return ""
        parts = urlsplit(self.url)
        try:
            port = f":{parts.port}" if parts.port is not None else ""
        except ValueError:
            port = ""
        host = parts.hostname or ""
        host = f"[{host}]" if ":" in host else host
        return f"{parts.scheme}://{host}{port}" if parts.scheme else host

    def resolved_headers(self, environ: Mapping[str, str] | None = None) -> dict[str, str]:
        """The headers to send, each ``${VAR}`` replaced from ``environ`` (the process
        environment by default); a variable not set (or empty) is an McpConfigError
        naming the server, the header and the variable, never the value."""
        environ = os.environ if environ is None else environ
        resolved: dict[str, str] = {}
        for key, secret in self.headers.items():

            def value_of(match: re.Match[str], header: str = key) -> str:
                variable = match.group(1)
                value = environ.get(variable, "")
                if not value:
                    raise McpConfigError(
                        f"MCP server {self.name!r}: header {header!r} needs the environment "
                        f"variable {variable}, which is not set",
                        help_hint=f"export {variable} before starting Sylk, or change "
                        f"[mcp_servers.servers.{self.name}] headers",
                    )
                return value

            value = _ENV_REF.sub(value_of, secret.get_secret_value())
            if any(char in value for char in "\r\n\0"):  # a header smuggled into another
                raise McpConfigError(
                    f"MCP server {self.name!r}: header {key!r} holds a line break or NUL "
                    "(in its value or a variable it names)"
                )
            resolved[key] = value
        return resolved

    def header_secrets(self, environ: Mapping[str, str] | None = None) -> list[str]:
        """For the redactor: each header value that names a variable or sits under a
        credential-looking name (Authorization, X-Api-Key), as sent (its variables read
        now), its long words (the token of ``Bearer <token>``) and the variables' own
        values; a missing variable is skipped here."""
        environ = os.environ if environ is None else environ
        found: list[str] = []
        for key, secret in self.headers.items():
            raw = secret.get_secret_value()
            names = _ENV_REF.findall(raw)
            if not names and not _SECRET_KEY.search(key):
                continue  # Accept, User-Agent...: scrubbing those would scrub ordinary words
            found += [environ[name] for name in names if environ.get(name)]
            found.append(_ENV_REF.sub(lambda m: environ.get(m.group(1), ""), raw))
            # "Bearer abc": the token alone too, should a message quote only it
            found += [word for word in found[-1].split() if len(word) >= 8]
        return [value for value in dict.fromkeys(found) if len(value) >= 4]

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
        """Env values whose names look like credentials, and remote servers' credential
        headers (:meth:`McpServerConfig.header_secrets`), for the redactor.

        Only those: redacting every value would scrub ordinary words and paths.
        """
        from_env = [
            value.get_secret_value()
            for server in self.servers
            for key, value in server.env.items()
            if _SECRET_KEY.search(key) and value.get_secret_value()
        ]
        return from_env + [value for server in self.servers for value in server.header_secrets()]
