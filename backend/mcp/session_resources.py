"""Sessions and their transcripts as MCP resources.

``sylk://sessions`` lists every session; ``sylk://sessions/{id}/transcript``
holds one session's messages. Both are read from the archive on every request,
so sessions another Sylk process creates while the server runs show up too.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import mcp_types

from backend.knowledge.archive import Archive
from backend.mcp.ports import ResourceBody
from backend.sessions.models import Session

SESSIONS_URI = "sylk://sessions"
TRANSCRIPT_TEMPLATE = "sylk://sessions/{session_id}/transcript"
_PREFIX, _SUFFIX = "sylk://sessions/", "/transcript"


def transcript_uri(session_id: str) -> str:
    return TRANSCRIPT_TEMPLATE.format(session_id=session_id)


def session_summary(session: Session, messages: int) -> dict[str, Any]:
    return {
        "id": session.id,
        "name": session.name,
        "state": session.state.value,
        "workspace": session.workspace,
        "created_at": session.created_at.isoformat(),
        "last_active_at": session.last_active_at.isoformat(),
        "messages": messages,
        "transcript": transcript_uri(session.id),
    }


class SessionResources:
    def __init__(self, archive: Archive) -> None:
        self.archive = archive

    async def _sessions(self) -> tuple[list[Session], dict[str, int]]:
        def load() -> tuple[list[Session], dict[str, int]]:
            return self.archive.load_sessions(), self.archive.transcript_counts()

        return await asyncio.to_thread(load)

    async def list_resources(self) -> list[mcp_types.Resource]:
        sessions, counts = await self._sessions()
        listing = mcp_types.Resource(
            uri=SESSIONS_URI,
            name="sessions",
            title="Sylk sessions",
            description="Every session: id, name, state, workspace, message count.",
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
            rows = [session_summary(s, counts.get(s.id, 0)) for s in sessions]
            return ResourceBody(json.dumps({"sessions": rows}, indent=1))
        if not (uri.startswith(_PREFIX) and uri.endswith(_SUFFIX)):
            return None
        session_id = uri[len(_PREFIX) : -len(_SUFFIX)]
        sessions, counts = await self._sessions()
        session = next((s for s in sessions if s.id == session_id), None)
        if session is None:
            return None
        messages = await self.archive.aload_transcript(session.id)
        body = {
            "session": session_summary(session, counts.get(session.id, 0)),
            "messages": [m.model_dump(mode="json") for m in messages],
        }
        return ResourceBody(json.dumps(body, indent=1))
