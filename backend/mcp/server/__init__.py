"""Sylk as an MCP server: a front end over the engine.

- ``server``: ``SylkMcpServer`` (the gateway verbs as tools); ``engine_serving``:
  ``serve_engine`` (instructions at initialize, gone clients' sessions closed).
- ``callers``: one caller (context, providers, prompts) per client connection.
- ``stdio_transport`` / ``http_transport``: stdio, streamable HTTP and legacy SSE;
  ``shutdown``: SIGINT/SIGTERM become a clean stop.
- ``ports``: ``ResourceProvider``; ``session_resources``, ``registry_resources``,
  ``library_resources``: sessions, registry resources and library fragments as resources.
- ``prompts``: the filled-in prompts; ``instructions``: what a client is told at initialize.
"""
