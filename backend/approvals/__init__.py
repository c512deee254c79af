"""Approvals: the user's policy for what an agent may do without asking, and the questions.

Not built yet; see docs/ARCHITECTURE.md ("Rooms not yet built").
"""
