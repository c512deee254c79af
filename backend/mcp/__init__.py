"""MCP both ways: Sylk as a server, and a client of external servers.

- ``server``: a front end over the engine (the top layer, like the TUI): ``sylk mcp
  serve`` offers the gateway verbs as MCP tools, sessions, transcripts and library
  fragments as resources, and filled-in prompts, over stdio or HTTP.
- ``client``: ``McpHub`` runs every configured external server and turns each of
  their tools into a hidden skill the gateway reaches by name.

The ``[mcp_servers]`` settings live in :mod:`backend.config.mcp_servers`.
Nothing is imported here.
"""
