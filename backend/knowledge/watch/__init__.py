"""backend/knowledge/watch."""
