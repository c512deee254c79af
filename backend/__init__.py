"""Sylk's headless engine. Nothing in this package imports the UI side."""
