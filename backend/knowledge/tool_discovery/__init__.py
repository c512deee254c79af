"""backend/knowledge/tool_discovery."""
