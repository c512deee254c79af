"""Choices the command line offers before any settings model loads (no pydantic).

``sylk --help`` and the TUI's start parse the command line with these; the settings
models (``approvals``, ``mcp_server_auth``) use the same values.
"""

from __future__ import annotations

from enum import StrEnum


class ApprovalMode(StrEnum):
    """What an agent may do without asking, from most to least careful (Codex's modes).

    ``read-only``: edits and commands are refused. ``ask``: both ask. ``auto-edit``:
    edits inside the workspace go ahead, commands ask. ``auto``: everything inside the
    sandbox goes ahead (a command asks anyway when no sandbox confines it).
    """

    READ_ONLY = "read-only"
    ASK = "ask"
    AUTO_EDIT = "auto-edit"
    AUTO = "auto"


MODE_NAMES = tuple(mode.value for mode in ApprovalMode)

DEFAULT_TOKEN = "default"
"""The MCP server's bearer token made when none is named."""
