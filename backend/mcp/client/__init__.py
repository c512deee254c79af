"""External MCP servers as skills.

- ``hub``: ``McpHub``, every configured server started once per engine.
- ``connection`` / ``process``: one server: its SDK session, child process and shutdown.
- ``as_skills``: each external tool as a hidden skill behind one entry op per server.
- ``models``: server states, tools as ops, call results; ``errors``: the typed errors.
"""
