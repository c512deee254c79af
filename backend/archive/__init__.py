"""backend/archive."""
