"""backend/mcp/client."""
