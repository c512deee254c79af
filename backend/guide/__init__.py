"""The Guide: the universal router. Its DSL fast path lives here first."""
