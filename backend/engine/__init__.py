"""backend/engine."""
