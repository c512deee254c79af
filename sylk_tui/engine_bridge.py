"""The app's calls into the engine: thin workers that only call it and post messages.

Calls that change sessions run one at a time, in the order the user asked for
them (``ops``); switches asked for by hand go through a ``SwitchQueue``, so only
the last one asked for is carried out. A refused call raises a SylkError in its
worker, which the app turns into a notification. Lines from the composer are not
serialised with the rest, since an agent's answer can take long.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, Literal

from textual.app import App

from backend.engine import Engine
from sylk_tui.engine_messages import SessionsLoaded, SubmitSettled, TranscriptLoaded
from sylk_tui.switch_queue import SwitchQueue

Lifecycle = Literal["suspend", "resume", "complete"]


class EngineBridge:
    """Runs the engine's verbs as workers of ``app`` and posts their results to it."""

    def __init__(self, app: App[Any], engine: Engine, *, transcript_limit: int) -> None:
        self._app = app
        self.engine = engine
        self.transcript_limit = transcript_limit
        self._ops = asyncio.Lock()
        self.switches = SwitchQueue(self._switch, self._front, self._ops)

    def _run(self, work: Callable[[], Awaitable[None]], group: str, description: str) -> None:
        # A callable, not a coroutine: a worker cancelled before it starts leaves none unawaited.
        self._app.run_worker(work, group=group, description=description, exit_on_error=False)

    # -- the verbs the app uses ---------------------------------------------------------
    def start(self) -> None:
        self._run(self._start, "engine", "open the sessions")

    def load_transcript(self, session_id: str) -> None:
        self._run(partial(self._load_transcript, session_id), "transcript", "read a transcript")

    def bring_to_front(self, session_id: str) -> None:
        """Latest wins: see ``SwitchQueue``."""
        if self.switches.want(session_id):
            self._run(self.switches.drain, "switch", "switch sessions")

    def create_session(self, name: str | None) -> None:
        call = partial(self.engine.create_session, name)
        self._run(partial(self._serialised, call), "engine", "create a session")

    def lifecycle(self, operation: Lifecycle, session_id: str) -> None:
        verbs = {
            "suspend": self.engine.suspend_session,
            "resume": self.engine.resume_session,
            "complete": self.engine.complete_session,
        }
        call = partial(verbs[operation], session_id)
        self._run(partial(self._serialised, call), "engine", "change a session's state")

    def submit(self, session_id: str, text: str) -> None:
        self._run(partial(self._submit, session_id, text), "submit", "send a line")

    def stop_answer(self, session_id: str) -> bool:
        """Stop the answer being written in ``session_id``; False when none is."""
        return self.engine.cancel_turn(session_id)

    # -- the workers ------------------------------------------------------------------------
    async def _start(self) -> None:
        async with self._ops:
            front = await self.engine.ensure_session()
        self._app.post_message(SessionsLoaded(self.engine.list_sessions(), front.id))
        self._run(partial(self._index, front.id), "index", "index the workspace")

    async def _index(self, session_id: str) -> None:
        """Build the Librarian's index of the session's workspace; its progress arrives
        as IndexChanged messages. The worker lasts until the first build is done."""
        knowledge = await self.engine.start_indexing(session_id)
        await knowledge.wait_ready()

    async def _load_transcript(self, session_id: str) -> None:
        messages = None
        try:
            messages = await self.engine.transcript(session_id, limit=self.transcript_limit)
        finally:
            self._app.post_message(TranscriptLoaded(session_id, messages))

    async def _serialised(self, call: Callable[[], Awaitable[object]]) -> None:
        async with self._ops:
            await call()

    async def _switch(self, session_id: str) -> None:
        await self.engine.switch_session(session_id)

    def _front(self) -> str | None:
        active = self.engine.active_session()
        return active.id if active is not None else None

    async def _submit(self, session_id: str, text: str) -> None:
        # Not serialised with the other calls: an agent's answer can take long,
        # and the composer is cleared as soon as the line itself is recorded.
        try:
            await self.engine.submit(session_id, text)
        except BaseException:
            self._app.post_message(SubmitSettled(session_id, text, accepted=False))
            raise
        self._app.post_message(SubmitSettled(session_id, text, accepted=True))
