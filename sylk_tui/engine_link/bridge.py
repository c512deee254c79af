"""The app's calls into the engine: thin workers that only call it and post messages.

Calls that change sessions run one at a time, in the order the user asked for
them (``ops``); switches asked for by hand go through a ``SwitchQueue``, so only
the last one asked for is carried out. A refused call raises a SylkError in its
worker, which the app turns into a notification. Lines from the composer are not
serialised with the rest, since an agent's answer can take long.

The engine may be handed over built, or as a function that builds it: then the
first frame is drawn before the engine's modules are imported (in a thread) and
the engine is built; every call waits until it is ready. A failure to build it
ends the app with the error (``startup_error``), as if it had failed before.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from textual.app import App

from sylk_tui.engine_link.idle_gc import CHECK_S as IDLE_CHECK_S
from sylk_tui.engine_link.idle_gc import IdleCollector
from sylk_tui.engine_link.messages import (
    OlderLoaded,
    SessionsLoaded,
    SubmitSettled,
    TranscriptLoaded,
)
from sylk_tui.engine_link.switch_queue import SwitchQueue

if TYPE_CHECKING:
    from backend.engine import Engine
    from sylk_tui.engine_link.messages import Transcript

HEAP_SETTLE_S = 1.0
"""Seconds after the sessions are on screen before the start-up heap is frozen."""

Lifecycle = Literal["suspend", "resume", "complete", "delete"]
OLDER_CHUNK = 200
"""Older messages read each time the transcript is scrolled to the top of what it holds."""


class EngineBridge:
    """Runs the engine's verbs as workers of ``app`` and posts their results to it."""

    def __init__(
        self,
        app: App[Any],
        engine: Engine | Callable[[], Engine],
        *,
        transcript_limit: int,
        on_ready: Callable[[Engine], None],
    ) -> None:
        self._app = app
        self._build: Callable[[], Engine] | None = engine if callable(engine) else None
        self.engine: Engine | None = None if callable(engine) else engine
        self.transcript_limit = transcript_limit
        self._on_ready = on_ready
        self._ready = asyncio.Event()
        self._closed = False
        self.startup_error: Exception | None = None
        self._ops = asyncio.Lock()
        self.switches = SwitchQueue(self._switch, self._front, self._ops)
        self._frozen = False
        self.collector = IdleCollector()  # full collections when input is quiet
        self._told: set[tuple[str, int]] = set()  # damaged transcript rows already shown

    async def ready(self) -> Engine:
        """The engine, once built."""
        await self._ready.wait()
        assert self.engine is not None
        return self.engine

    async def aclose(self) -> None:
        """Close the engine if it was built; one still being built is closed when it is."""
        self._closed = True
        if self._frozen:
            gc.unfreeze()  # what start-up built may be collected again (tests run many apps)
            self._frozen = False
        self.collector.stop()
        if self.engine is not None:
            await self.engine.aclose()

    def _freeze_heap(self) -> None:
        """Move what start-up built (modules, classes, the engine, the screen) out of the
        garbage collector's sight: a full collection then walks only what came later, so
        it no longer stalls a keypress for a time that grows with everything loaded."""
        if self._closed:
            return
        gc.collect()
        gc.freeze()
        self._frozen = True
        self.collector.start()
        self._app.set_interval(IDLE_CHECK_S, self.collector.check)

    def _run(self, work: Callable[[], Awaitable[None]], group: str, description: str) -> None:
        # A callable, not a coroutine: a worker cancelled before it starts leaves none unawaited.
        self._app.run_worker(work, group=group, description=description, exit_on_error=False)

    # -- the verbs the app uses ---------------------------------------------------------
    def start(self) -> None:
        if self.engine is not None:  # handed over built: follow it from the first event
            self._set_ready(self.engine)
        self._run(self._start, "engine", "open the sessions")

    def _set_ready(self, engine: Engine) -> None:
        self.engine = engine
        self._on_ready(engine)
        self._ready.set()

    def load_transcript(self, session_id: str) -> None:
        self._run(partial(self._load_transcript, session_id), "transcript", "read a transcript")

    def load_older(self, session_id: str, first_id: str, shown: int) -> None:
        work = partial(self._load_older, session_id, first_id, shown)
        self._run(work, "transcript", "read older messages")

    def bring_to_front(self, session_id: str) -> None:
        """Latest wins: see ``SwitchQueue``."""
        if self.switches.want(session_id):
            self._run(self.switches.drain, "switch", "switch sessions")

    def create_session(self, name: str | None) -> None:
        async def call(engine: Engine) -> object:
            return await engine.create_session(name)

        self._run(partial(self._serialised, call), "engine", "create a session")

    def lifecycle(self, operation: Lifecycle, session_id: str) -> None:
        async def call(engine: Engine) -> object:
            verbs = {
                "suspend": engine.suspend_session,
                "resume": engine.resume_session,
                "complete": engine.complete_session,
                "delete": engine.delete_session,
            }
            return await verbs[operation](session_id)

        self._run(partial(self._serialised, call), "engine", "change a session's state")

    def rename(self, session_id: str, name: str) -> None:
        async def call(engine: Engine) -> object:
            return await engine.rename_session(session_id, name)

        self._run(partial(self._serialised, call), "engine", "rename a session")

    def submit(self, session_id: str, text: str) -> None:
        self._run(partial(self._submit, session_id, text), "submit", "send a line")

    def stop_answer(self, session_id: str) -> bool:
        """Stop the answer being written in ``session_id``; False when none is."""
        return self.engine is not None and self.engine.cancel_turn(session_id)

    # -- the workers ------------------------------------------------------------------------
    async def _start(self) -> None:
        started_here = self.engine is None  # as `sylk` starts: the app's whole life ahead
        if self.engine is None:
            built = await self._built()
            if built is None:
                return
            self._set_ready(built)
        engine = await self.ready()
        async with self._ops:
            front = await engine.ensure_session()
        self._app.post_message(SessionsLoaded(engine.list_sessions(), front.id))
        self._run(partial(self._index, front.id), "index", "index the workspace")
        self._run(self._resume_plans, "plans", "resume the plans that were running")
        if started_here:
            self._app.set_timer(HEAP_SETTLE_S, self._freeze_heap)

    async def _resume_plans(self) -> None:
        """Plans whose DAG was running when Sylk stopped go on (passed nodes stay done);
        their progress arrives as events, like any run's."""
        engine = await self.ready()
        await engine.resume_dags()

    async def _built(self) -> Engine | None:
        """The engine built from the function handed over; None if the app ends instead."""
        assert self._build is not None
        try:
            # Import its modules off the UI thread: the first frame is already drawn.
            await asyncio.to_thread(importlib.import_module, "backend.engine")
            engine = self._build()
        except Exception as error:  # a corrupt archive, an unreadable data dir: stop, and
            self.startup_error = error  # the CLI reports it as it does any start-up failure
            self._app.exit(return_code=1)
            return None
        if self._closed:  # the user quit while it was being built
            await engine.aclose()
            return None
        return engine

    async def _index(self, session_id: str) -> None:
        """Build the Librarian's index of the session's workspace; its progress arrives
        as IndexChanged messages. The worker lasts until the first build is done."""
        knowledge = await (await self.ready()).start_indexing(session_id)
        await knowledge.wait_ready()

    async def _load_transcript(self, session_id: str) -> None:
        messages = None
        try:
            engine = await self.ready()
            messages = await engine.transcript(session_id, limit=self.transcript_limit)
            self._say_unreadable(engine, session_id, messages)
        finally:
            self._app.post_message(TranscriptLoaded(session_id, messages))

    def _say_unreadable(self, engine: Engine, session_id: str, messages: Transcript) -> None:
        """Damaged rows the archive skipped: a warning naming the session and the rows,
        once per row (a transcript is read again after a switch or a refresh)."""
        from backend.archive.transcript_rows import ReadTranscript  # loaded with the engine

        if not isinstance(messages, ReadTranscript):
            return
        fresh = tuple(r for r in messages.unreadable if (session_id, r.seq) not in self._told)
        self._told.update((session_id, r.seq) for r in fresh)
        sessions = engine.list_sessions(include_closed=True)
        name = next((s.name for s in sessions if s.id == session_id), None)
        problem = ReadTranscript(unreadable=fresh, path=messages.path).problem(name)
        if problem is not None:
            self._app.notify(str(problem), severity="warning", timeout=15, markup=False)

    async def _load_older(self, session_id: str, first_id: str, shown: int) -> None:
        """The ``OLDER_CHUNK`` messages before ``first_id``; the archive reads the newest
        ``shown + OLDER_CHUNK + 1`` (one more says whether older ones remain; all of them
        if more arrived meanwhile than that)."""
        older: Transcript = []
        more = True  # on failure: the transcript may ask again
        try:
            engine = await self.ready()
            limit: int | None = shown + OLDER_CHUNK + 1
            while True:
                messages = await engine.transcript(session_id, limit=limit)
                self._say_unreadable(engine, session_id, messages)
                at = next((n for n, m in enumerate(messages) if m.id == first_id), None)
                if at is not None or limit is None:
                    break
                limit = None
            at = at or 0
            older = messages[max(0, at - OLDER_CHUNK) : at]
            more = at > OLDER_CHUNK
        finally:
            self._app.post_message(OlderLoaded(session_id, older, more))

    async def _serialised(self, call: Callable[[Engine], Awaitable[object]]) -> None:
        engine = await self.ready()
        async with self._ops:
            await call(engine)

    async def _switch(self, session_id: str) -> None:
        await (await self.ready()).switch_session(session_id)

    def _front(self) -> str | None:
        active = self.engine.active_session() if self.engine is not None else None
        return active.id if active is not None else None

    async def _submit(self, session_id: str, text: str) -> None:
        # Not serialised with the other calls: an agent's answer can take long,
        # and the composer is cleared as soon as the line itself is recorded.
        try:
            await (await self.ready()).submit(session_id, text)
        except BaseException:
            self._app.post_message(SubmitSettled(session_id, text, accepted=False))
            raise
        self._app.post_message(SubmitSettled(session_id, text, accepted=True))
