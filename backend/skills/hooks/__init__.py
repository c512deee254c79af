"""backend/skills/hooks."""
