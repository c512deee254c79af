"""Workspace-confined file operations."""
