"""What a reader of the archive's sessions and transcripts needs, and no more.

Front ends that serve the record (the MCP server's session resources and its
instructions) take a :class:`SessionRecords`; :class:`~backend.archive.store.Archive`
is one, and nothing that holds one can write through it.
"""

from __future__ import annotations

from typing import Any, Protocol

from backend.messages import Message
from backend.sessions.models import Session


class SessionRecords(Protocol):
    def load_sessions(self) -> list[Session]: ...

    def transcript_counts(self) -> dict[str, int]: ...

    async def aload_transcript(
        self, session_id: str, *, limit: int | None = None
    ) -> list[Message[dict[str, Any]]]: ...
