"""backend/mcp/server."""
