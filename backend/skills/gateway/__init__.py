"""backend/skills/gateway."""
