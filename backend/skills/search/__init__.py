"""backend/skills/search."""
