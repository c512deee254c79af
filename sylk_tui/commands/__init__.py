"""The ``sylk`` subcommands beside the TUI, one module each; ``sylk_tui.cli`` parses and
dispatches to them.

- ``checkpoints``: ``sylk sessions undo|diff``.
- ``mcp``: ``sylk mcp serve`` (stdio, HTTP, SSE).
- ``plan``: ``sylk plan validate FILE``.
- ``run_output``: how ``sylk run`` streams an answer (tool calls a line each on stderr;
  ``--json`` keeps stdout for JSON lines alone) and its exit codes.
- ``sessions_io``: ``sylk sessions list|export|import``.
"""
