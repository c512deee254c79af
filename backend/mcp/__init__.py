"""MCP both ways: Sylk as a server, and a client of external servers.

- ``config``: the ``[mcp_servers]`` section (no SDK import; SylkConfig can use it).
- ``client``: ``McpHub``, every configured server started once per engine; the
  SDK loads only when a server is configured.
- ``connection`` / ``process``: one server: its owner task, SDK session, child
  process (pid, exit status, stderr tail) and shutdown.
- ``skills``: ``to_skills(hub)``: each external tool as a hidden Skill.
- ``server``: ``sylk mcp serve``: the gateway verbs as MCP tools, sessions and
  transcripts as MCP resources.
- ``ports``: what the server calls (the gateway's verbs, resource providers).
- ``session_resources`` / ``registry_resources``: sessions, transcripts and the
  skill registry's resources as MCP resources; ``session_skills``: two session ops.

Nothing is imported here, so importing ``backend.mcp.config`` stays cheap.
"""
