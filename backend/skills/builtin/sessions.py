"""Two read-only skills over the archive: ``sessions.list`` and ``sessions.transcript``.

They give ``sylk mcp serve`` something real to search and execute before the
agents' own skills are registered with the engine; they read the archive
afresh on every call, so sessions made by another Sylk process show up too.
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, ConfigDict, Field

from backend.archive.store import Archive
from backend.skills.envelopes import ErrorCode, SkillError
from backend.skills.models import Example, Skill, SkillContext, SkillResult
from backend.skills.session_scope import (
    CROSS_SESSION_SCOPE,
    CROSS_SESSION_TAG,
    may_read,
    session_summary,
)


class ListParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TranscriptParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    session_id: str | None = Field(
        default=None,
        description="the session's id (default: yours); other sessions need the "
        "cross-session scope",
    )
    limit: int | None = Field(default=None, ge=1, description="only the last N messages")


def session_skills(archive: Archive) -> list[Skill]:
    async def list_sessions(ctx: SkillContext, _params: ListParams) -> SkillResult:
        sessions = await asyncio.to_thread(archive.load_sessions)
        counts = await asyncio.to_thread(archive.transcript_counts)
        visible = [s for s in sessions if may_read(ctx, s.id)]
        rows = [session_summary(s, counts.get(s.id, 0)) for s in visible]
        hidden = len(sessions) - len(visible)
        note = f"{hidden} other sessions need the {CROSS_SESSION_SCOPE} scope" if hidden else None
        return SkillResult(result={"sessions": rows, **({"note": note} if note else {})})

    async def transcript(ctx: SkillContext, params: TranscriptParams) -> SkillResult:
        wanted = params.session_id or ctx.session_id
        sessions = await asyncio.to_thread(archive.load_sessions)
        matches = [s for s in sessions if s.id.startswith(wanted) and may_read(ctx, s.id)]
        if len(matches) != 1:
            found = "no session matches" if not matches else f"{len(matches)} sessions match"
            raise SkillError(ErrorCode.NOT_FOUND, f"{found} {wanted!r}", help_path="sessions.list")
        messages = await archive.aload_transcript(matches[0].id, limit=params.limit)
        return SkillResult(result={"messages": [m.model_dump(mode="json") for m in messages]})

    return [
        Skill(
            op="sessions.list",
            agent="archivalist",
            description="List Sylk sessions with their state, phase, workspace and message count "
            "(yours, or all with the cross-session scope).",
            params=ListParams,
            handler=list_sessions,
            tags=("sessions", "history"),
        ),
        Skill(
            op="sessions.transcript",
            agent="archivalist",
            description="Read the messages of one session, oldest first.",
            params=TranscriptParams,
            handler=transcript,
            tags=("sessions", "history", "transcript", CROSS_SESSION_TAG),
            examples=(
                Example(
                    description="the last 20 messages of a session",
                    args={"session_id": "3f2a", "limit": 20},
                ),
            ),
        ),
    ]
