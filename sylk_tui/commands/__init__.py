"""The ``sylk`` subcommands beside the TUI, one module each; ``sylk_tui.cli`` parses and
dispatches to them.

- ``checkpoints``: ``sylk sessions undo|diff``.
- ``mcp``: ``sylk mcp serve`` (stdio, HTTP, SSE).
- ``plan``: ``sylk plan validate FILE``.
- ``run_output``: how ``sylk run`` streams an answer and its exit codes.
"""
