"""Skills and the progressive-disclosure gateway."""
