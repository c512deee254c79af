"""Sessions and their transcripts as MCP resources.

``sylk://sessions`` lists sessions; ``sylk://sessions/{id}/transcript`` holds
one session's messages. Both are read from the archive on every request, so
sessions another Sylk process creates while the server runs show up too. A
client sees its own session's transcript; other sessions' need the
cross-session scope (``sylk mcp serve --cross-session``), as the chronicle does.
"""

from __future__ import annotations

import asyncio
import json

import mcp_types

from backend.archive.records import SessionRecords
from backend.errors import SylkError
from backend.mcp.server.content.ports import ResourceBody
from backend.sessions.models import Session
from backend.skills.models import SkillContext
from backend.skills.session_scope import (
    TRANSCRIPT_TEMPLATE,
    may_read,
    session_summary,
    transcript_uri,
)

SESSIONS_URI = "sylk://sessions"
_PREFIX, _SUFFIX = "sylk://sessions/", "/transcript"


class TranscriptAccessError(SylkError):
    def __init__(self, session: Session) -> None:
        super().__init__(
            f"session {session.name!r} is not this client's; its transcript is private",
            help_hint="serve with --session NAME to act in it, or --cross-session to read "
            "every session",
        )


class SessionResources:
    """``context``: the client; None serves every session (for tools run by the user)."""

    def __init__(self, archive: SessionRecords, context: SkillContext | None = None) -> None:
        self.archive = archive
        self.context = context

    async def _sessions(self) -> tuple[list[Session], dict[str, int]]:
        def load() -> tuple[list[Session], dict[str, int]]:
            return self.archive.load_sessions(), self.archive.transcript_counts()

        return await asyncio.to_thread(load)

    def _visible(self, sessions: list[Session]) -> list[Session]:
        return [s for s in sessions if may_read(self.context, s.id)]

    async def list_resources(self) -> list[mcp_types.Resource]:
        sessions, counts = await self._sessions()
        sessions = self._visible(sessions)
        listing = mcp_types.Resource(
            uri=SESSIONS_URI,
            name="sessions",
            title="Sylk sessions",
            description="Sessions this client may read: id, name, state, workspace, message count.",
            mime_type="application/json",
        )
        transcripts = [
            mcp_types.Resource(
                uri=transcript_uri(s.id),
                name=f"transcript {s.short_id}",
                title=f"Transcript of {s.name!r}",
                description=f"The {counts.get(s.id, 0)} messages of session {s.name!r}.",
                mime_type="application/json",
            )
            for s in sessions
        ]
        return [listing, *transcripts]

    def templates(self) -> list[mcp_types.ResourceTemplate]:
        return [
            mcp_types.ResourceTemplate(
                uri_template=TRANSCRIPT_TEMPLATE,
                name="transcript",
                title="Session transcript",
                description="The messages of one session, oldest first.",
                mime_type="application/json",
            )
        ]

    async def read(self, uri: str) -> ResourceBody | None:
        if uri == SESSIONS_URI:
            sessions, counts = await self._sessions()
            sessions = self._visible(sessions)
            rows = [session_summary(s, counts.get(s.id, 0)) for s in sessions]
            return ResourceBody(json.dumps({"sessions": rows}, indent=1))
        if not (uri.startswith(_PREFIX) and uri.endswith(_SUFFIX)):
            return None
        session_id = uri[len(_PREFIX) : -len(_SUFFIX)]
        sessions, counts = await self._sessions()
        session = next((s for s in sessions if s.id == session_id), None)
        if session is None:
            return None
        if not may_read(self.context, session.id):
            raise TranscriptAccessError(session)
        messages = await self.archive.aload_transcript(session.id)
        body = {
            "session": session_summary(session, counts.get(session.id, 0)),
            "messages": [m.model_dump(mode="json") for m in messages],
        }
        return ResourceBody(json.dumps(body, indent=1))
