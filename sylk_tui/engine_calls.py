"""The app's calls into the engine: thin workers that only call and post messages.

Calls that change sessions run one at a time, in the order the user asked
for them (``_ops``); a refused call raises a SylkError, which the app turns
into a notification. Lines from the composer are not serialised with them,
since an agent's answer can take long.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual import work
from textual.message import Message

from backend.engine.facade import Engine
from widgets.messages import SessionsLoaded, SubmitSettled, TranscriptLoaded


class EngineCalls:
    """Mixed into SylkApp, which provides these attributes and ``post_message``."""

    engine: Engine
    foreground_id: str | None
    transcript_limit: int
    _ops: asyncio.Lock
    _wanted_foreground: str | None
    _switching_by_hand: bool

    if TYPE_CHECKING:  # provided by App; a definition here would shadow it

        def post_message(self, message: Message) -> bool: ...

    @work(group="engine", exit_on_error=False, description="open the sessions")
    async def _start(self) -> None:
        async with self._ops:
            front = await self.engine.ensure_session()
        self.post_message(SessionsLoaded(self.engine.list_sessions(), front.id))
        self._index(front.id)

    @work(group="index", exit_on_error=False, description="index the workspace")
    async def _index(self, session_id: str) -> None:
        """Build the Librarian's index of the session's workspace; its progress arrives
        as IndexChanged messages. The worker lasts until the first build is done."""
        knowledge = await self.engine.start_indexing(session_id)
        await knowledge.wait_ready()

    @work(group="transcript", exit_on_error=False, description="read a transcript")
    async def _load_transcript(self, session_id: str) -> None:
        messages = None
        try:
            messages = await self.engine.transcript(session_id, limit=self.transcript_limit)
        finally:
            self.post_message(TranscriptLoaded(session_id, messages))

    @work(group="engine", exit_on_error=False, description="switch sessions")
    async def _switch(self, session_id: str) -> None:
        async with self._ops:
            # A later request supersedes this one: flipping through the list
            # brings only the session the user stops at to the front.
            if self._wanted_foreground != session_id or self.foreground_id == session_id:
                return
            self._switching_by_hand = True
            try:
                await self.engine.switch_session(session_id)
            finally:
                self._switching_by_hand = False

    @work(group="engine", exit_on_error=False, description="create a session")
    async def _create_session(self, name: str | None) -> None:
        async with self._ops:
            await self.engine.create_session(name)

    @work(group="engine", exit_on_error=False, description="change a session's state")
    async def _lifecycle(self, operation: str, session_id: str) -> None:
        async with self._ops:
            if operation == "suspend":
                await self.engine.suspend_session(session_id)
            elif operation == "resume":
                await self.engine.resume_session(session_id)
            else:
                await self.engine.complete_session(session_id)

    @work(group="submit", exit_on_error=False, description="send a line")
    async def _submit(self, session_id: str, text: str) -> None:
        # Not serialised with the other calls: an agent's answer can take long,
        # and the composer is cleared as soon as the line itself is recorded.
        try:
            await self.engine.submit(session_id, text)
        except BaseException:
            self.post_message(SubmitSettled(session_id, text, accepted=False))
            raise
        self.post_message(SubmitSettled(session_id, text, accepted=True))
