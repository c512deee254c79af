"""backend/guide/routing."""
