"""Two read-only skills over the archive: ``sessions.list`` and ``sessions.transcript``.

They give ``sylk mcp serve`` something real to search and execute before the
agents' own skills are registered with the engine; they read the archive
afresh on every call, so sessions made by another Sylk process show up too.
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, ConfigDict, Field

from backend.knowledge.archive import Archive
from backend.mcp.session_resources import session_summary
from backend.skills.envelopes import ErrorCode, SkillError
from backend.skills.hooks_builtin import CROSS_SESSION_TAG
from backend.skills.models import Example, Skill, SkillContext, SkillResult


class ListParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TranscriptParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    session_id: str = Field(min_length=1, description="the session's id, or a unique prefix")
    limit: int | None = Field(default=None, ge=1, description="only the last N messages")


def session_skills(archive: Archive) -> list[Skill]:
    async def list_sessions(_ctx: SkillContext, _params: ListParams) -> SkillResult:
        sessions = await asyncio.to_thread(archive.load_sessions)
        counts = await asyncio.to_thread(archive.transcript_counts)
        rows = [session_summary(s, counts.get(s.id, 0)) for s in sessions]
        return SkillResult(result={"sessions": rows})

    async def transcript(_ctx: SkillContext, params: TranscriptParams) -> SkillResult:
        sessions = await asyncio.to_thread(archive.load_sessions)
        matches = [s for s in sessions if s.id.startswith(params.session_id)]
        if len(matches) != 1:
            found = "no session matches" if not matches else f"{len(matches)} sessions match"
            raise SkillError(
                ErrorCode.NOT_FOUND, f"{found} {params.session_id!r}", help_path="sessions.list"
            )
        messages = await archive.aload_transcript(matches[0].id, limit=params.limit)
        return SkillResult(result={"messages": [m.model_dump(mode="json") for m in messages]})

    return [
        Skill(
            op="sessions.list",
            agent="archivalist",
            description="List every Sylk session with its state, workspace and message count.",
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
