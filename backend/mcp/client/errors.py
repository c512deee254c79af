"""Typed errors for MCP servers Sylk talks to: each names the server and what happened."""

from __future__ import annotations

import re

from backend.errors import ErrorKind, SylkError

# JSON-RPC and MCP error codes by what they mean to the caller (spelled here so the SDK
# need not load). Internal (-32603) and server-defined codes say nothing: their text decides.
_KIND_OF_CODE = {
    -32700: ErrorKind.INVALID,  # parse error
    -32600: ErrorKind.INVALID,  # invalid request
    -32601: ErrorKind.NOT_FOUND,  # method not found
    -32602: ErrorKind.INVALID,  # invalid params
    -32002: ErrorKind.NOT_FOUND,  # MCP: resource not found
}
# What a tool's error text says, first match wins: a refusal is worded "access denied
# ... not in allowed directories", so DENIED is asked before NOT_FOUND and INVALID.
_KIND_OF_TEXT = (
    (
        ErrorKind.DENIED,
        re.compile(
            r"access (is )?denied|permission denied|not permitted|forbidden|unauthori[sz]ed"
            r"|\bEACCES\b|\bEPERM\b|outside (the )?allowed|not allowed",
            re.I,
        ),
    ),
    (
        ErrorKind.NOT_FOUND,
        re.compile(
            r"not found|no such (file|directory|tool|resource)|does ?n[o']t exist|\bENOENT\b"
            r"|unknown tool",
            re.I,
        ),
    ),
    (
        ErrorKind.INVALID,
        re.compile(
            r"invalid (argument|param|input|value|request)|validation error|is required"
            r"|missing required|required propert|input should be|must be (a|an|one|at)",
            re.I,
        ),
    ),
)


class McpError(SylkError):
    """Something went wrong with an external MCP server."""

    def __init__(self, server: str, message: str, *, help_hint: str | None = None) -> None:
        super().__init__(message, help_hint=help_hint)
        self.server = server


class McpServerDownError(McpError):
    """The server's process could not start, or ended; calls fail fast until a restart.

    ``returncode`` is the exit status (negative: killed by that signal), or None
    when the process never ran or is still running but unusable (a failed
    handshake); ``stderr_tail`` is the last lines it wrote to stderr.
    """

    def __init__(
        self,
        server: str,
        reason: str,
        *,
        returncode: int | None = None,
        stderr_tail: str = "",
        help_hint: str | None = None,
    ) -> None:
        message = f"MCP server {server!r} is down: {reason}"
        if stderr_tail:
            message += f"; its last words on stderr: {_last_words(stderr_tail)!r}"
        super().__init__(
            server,
            message,
            help_hint=help_hint
            or f"check the command of [mcp_servers] {server!r} in the config file",
        )
        self.reason = reason
        self.returncode = returncode
        self.stderr_tail = stderr_tail


class McpServerStartingError(McpError):
    """The server is still starting (in the background) and did not finish within the
    wait the call allowed; it may be up in a moment. CONFLICT: try again shortly."""

    error_kind = ErrorKind.CONFLICT

    def __init__(self, server: str, waited_s: float) -> None:
        super().__init__(
            server,
            f"MCP server {server!r} is still starting (waited {waited_s:g}s); try again shortly",
            help_hint=f"raise startup_timeout_s of [mcp_servers] {server!r} if it is slow to start",
        )
        self.waited_s = waited_s


class McpTimeoutError(McpError):
    """A tool call took longer than its timeout; the server stays up."""

    def __init__(self, server: str, tool: str, timeout_s: float) -> None:
        super().__init__(
            server,
            f"MCP tool {tool!r} on server {server!r} did not answer within {timeout_s:g}s",
            help_hint=f"raise timeout_s of [mcp_servers] {server!r} if the tool is slow",
        )
        self.tool = tool
        self.timeout_s = timeout_s


class McpToolError(McpError):
    """The tool ran and reported an error (its ``isError`` result), or the server
    refused the request (an MCP protocol error such as unknown tool or bad arguments)."""

    def __init__(self, server: str, tool: str, detail: str, *, code: int | None = None) -> None:
        super().__init__(
            server,
            f"MCP tool {tool!r} on server {server!r} failed: {detail}",
            help_hint="describe the op to see its parameters",
        )
        self.tool = tool
        self.detail = detail
        self.code = code

    @property
    def meaning(self) -> ErrorKind:
        """What the failure means to the caller, read from the JSON-RPC code when it says,
        else from the tool's words (denied, not found, bad arguments); INTERNAL when
        neither tells. A server may word its errors to mislead; the worst it gains is a
        different error code for its own tool's failure."""
        kind = _KIND_OF_CODE.get(self.code) if self.code is not None else None
        if kind is not None:
            return kind
        text = self.detail[:2000]
        for kind, pattern in _KIND_OF_TEXT:
            if pattern.search(text):
                return kind
        return ErrorKind.INTERNAL


class McpUnknownOpError(McpError):
    """No configured server offers this op."""

    def __init__(self, op: str) -> None:
        super().__init__(
            op.split(".", 1)[0],
            f"no MCP server offers the op {op!r}",
            help_hint="search for the op, or check [mcp_servers] in the config file",
        )
        self.op = op


def _last_words(tail: str, lines: int = 4, chars: int = 400) -> str:
    kept = [line.strip() for line in tail.splitlines() if line.strip()][-lines:]
    text = " | ".join(kept)
    return text if len(text) <= chars else "..." + text[-chars:]
