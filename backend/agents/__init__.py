"""Agents and the loop they share."""
