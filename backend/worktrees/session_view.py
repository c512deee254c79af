"""What a session's metadata says of its worktree, as the front ends show it.

``metadata["worktree"]`` holds a :class:`WorktreeInfo` (isolated) or ``{"off": why}``
(working in the workspace itself: not a git repository, turned off, ...).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from backend.sessions.models import Session
from backend.worktrees.session_trees import WorktreeInfo

METADATA_KEY = "worktree"


def worktree_of(session: Session) -> WorktreeInfo | None:
    raw: Any = session.metadata.get(METADATA_KEY)
    if not isinstance(raw, dict) or "off" in raw:
        return None
    try:
        return WorktreeInfo.model_validate(raw)
    except ValidationError:
        return None


def isolation_off_reason(session: Session) -> str | None:
    raw: Any = session.metadata.get(METADATA_KEY)
    if isinstance(raw, dict) and isinstance(raw.get("off"), str):
        return str(raw["off"])
    return None


def isolation_line(session: Session) -> str:
    """``/status``'s line: ``worktree: BRANCH (from BASE)`` or ``isolation: none (why)``."""
    info = worktree_of(session)
    if info is not None:
        return f"worktree: {info.branch} (from {info.base})"
    return f"isolation: none ({isolation_off_reason(session) or 'not set up yet'})"


def branch_label(session: Session) -> str | None:
    """The session list's short mention of its branch (None when it has none)."""
    info = worktree_of(session)
    return f"⎇ {info.branch}" if info is not None else None


def merge_hint(session: Session) -> str | None:
    """What ``/session complete`` adds for an isolated session: merging is never silent."""
    info = worktree_of(session)
    if info is None:
        return None
    return (
        f"its work is on the branch {info.branch}; to bring it into {info.base}: "
        "/session merge [ff|merge|squash]"
    )
