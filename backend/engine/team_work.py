"""Wires the team's parts (:mod:`backend.team`) into a built engine.

Called once at the end of :func:`backend.engine.build.build`, when every part exists:
each team part gets what it needs from the engine's parts and installs the real
handlers of the ops it serves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from backend.engine.build import EngineParts


def install_team(parts: EngineParts) -> None:
    """Give the team ops their handlers (each part below adds its own lines)."""
    del parts  # filled in by the team's parts as they are built
