"""``ArchiveChanged``: what another process changed in a shared archive.

Kept apart from :mod:`backend.events` (which lists it among the engine's events) so
that module stays one screenful; made by ``backend.archive.team.live_updates``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from backend.clock import utc_now


class ArchiveChanged(BaseModel):
    """Another process (a teammate's Sylk on the shared archive, or another ``sylk`` here)
    made or moved a session (``change`` "session") or promoted a chronicle entry
    ("promoted", ``entry_id``); ``owner`` is ``user@host`` (None: a row without one)."""

    model_config = ConfigDict(frozen=True)
    at: datetime = Field(default_factory=utc_now)
    session_id: str | None = None
    kind: Literal["archive.changed"] = "archive.changed"
    change: str
    entry_id: str | None = None
    owner: str | None = None
    teammate: bool = False  # another user's change, not this user's other process's
