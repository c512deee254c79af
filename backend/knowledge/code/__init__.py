"""backend/knowledge/code."""
