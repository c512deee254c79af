"""backend/config."""
