"""backend/knowledge/chronicle."""
