"""MCP both ways: Sylk as a server, and a client of external servers.

- ``config``: the ``[mcp_servers]`` section (no SDK import; SylkConfig can use it).
- ``client``: ``McpHub``, every configured server started once per engine; the
  SDK loads only when a server is configured.
- ``connection`` / ``process``: one server: its owner task, SDK session, child
  process (pid, exit status, stderr tail) and shutdown.
- ``skills``: ``to_skills(hub)`` / ``attach_skills``: each external tool as a hidden
  Skill behind one searchable entry op per server, following restarts.
- ``server``: ``sylk mcp serve``: the gateway verbs as MCP tools, sessions and
  transcripts as MCP resources, prompts; ``instructions``: what the client is told
  at initialize (domains and counts); ``callers``: one caller per HTTP session.
- ``stdio_transport`` / ``http_transport``: stdio, streamable HTTP and legacy SSE;
  ``shutdown``: SIGINT/SIGTERM become a clean stop.
- ``ports``: what the server calls (the gateway's verbs, resource providers).
- ``session_resources`` / ``registry_resources`` / ``library_resources``: sessions
  and transcripts (private to their session), the registry's resources and the
  library's fragments (plus the ``match`` template) as MCP resources;
  ``session_skills``: two session ops; ``prompts``: the filled-in prompts.

Nothing is imported here, so importing ``backend.config.mcp_servers`` stays cheap.
"""
