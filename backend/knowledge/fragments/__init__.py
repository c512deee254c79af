"""backend/knowledge/fragments."""
