"""backend/bus."""
