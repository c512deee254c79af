"""``[team]``: who this Sylk acts for on a shared archive.

Every session records its owner (``backend.sessions.ownership``); ``user``
overrides the OS user, for a team whose accounts differ between machines.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class TeamSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # None: the OS user (getpass.getuser()).
    user: str | None = Field(default=None, min_length=1, max_length=200)
