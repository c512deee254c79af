"""Orchestration: the scheduler that runs a plan's DAG, wave by wave.

Not built yet; see docs/ARCHITECTURE.md ("Rooms not yet built").
"""
