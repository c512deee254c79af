"""Hooks around model calls and tool calls.

- ``registry``: ``HookRegistry``, hook points and ``ToolCallData``; hooks run in priority order.
- ``builtin``: the always-installed tool hooks (permission, validation, session scoping).
- ``agents``: per-agent hooks that record what agents do for the Archivalist.
"""
