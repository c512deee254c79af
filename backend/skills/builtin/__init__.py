"""backend/skills/builtin."""
