"""Pipelines: engineer -> inspector -> tester loops and their internal bus."""
