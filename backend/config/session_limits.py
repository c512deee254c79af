"""The ``[sessions]`` table: defaults for every session's lifecycle.

``auto_suspend_after_s``: a session in the background left idle this long (no turn,
no question waiting, no DAG running) is suspended, so its agents' state is let go; a
session's own ``SessionConfig.auto_suspend_after`` wins. None (the default): never.
``idle_check_s``: how often the engine looks.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SessionSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    auto_suspend_after_s: float | None = Field(default=None, gt=0)
    idle_check_s: float = Field(default=30.0, gt=0, le=3600)
    # Each session in a git repository works in its own worktree and branch
    # (backend.worktrees); a session's own SessionConfig.enable_git_isolation wins.
    git_isolation: bool = True
