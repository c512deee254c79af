"""Plans: the DAG model, its validation, and the Architect who writes them.

Not built yet; see docs/ARCHITECTURE.md ("Rooms not yet built").
"""
