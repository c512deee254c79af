"""The engine's idle timer: suspends sessions left idle (``backend.sessions.idle``).

``sweep`` is one look, with the injected wall clock (tests move a fake one and call
it; nothing sleeps); ``start`` runs it every ``[sessions] idle_check_s`` in an owned,
named task that ``aclose`` cancels. The session a front end shows (the foreground,
while a front end is attached to answer questions) is never suspended under the user;
without a front end (``sylk mcp serve``, scripts) the foreground idles out too.
A session is busy while a turn or a DAG of it runs or a question of it waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from backend.clock import utc_now
from backend.errors import SylkError
from backend.sessions.idle import idle_sessions

if TYPE_CHECKING:
    from backend.engine.build import EngineParts

log = logging.getLogger(__name__)


class IdleTimer:
    def __init__(self, parts: EngineParts, clock: Callable[[], datetime] = utc_now) -> None:
        self._parts = parts
        self.clock = clock
        settings = parts.settings.sessions
        after = settings.auto_suspend_after_s
        self.default = timedelta(seconds=after) if after is not None else None
        self.every_s = settings.idle_check_s
        self._task: asyncio.Task[None] | None = None

    def busy(self, session_id: str) -> bool:
        parts = self._parts
        return bool(
            parts.dispatcher.running(session_id)
            or parts.dags.running(session_id)
            or parts.questions.pending(session_id)
        )

    async def sweep(self) -> list[str]:
        """Suspend every session idle past its limit now; their ids."""
        sessions = self._parts.sessions
        shown = sessions.active_id if self._parts.questions.answered_here else None
        due = idle_sessions(
            sessions.list_sessions(), self.clock(), default=self.default, busy=self.busy,
            shown=shown,
        )  # fmt: skip
        done: list[str] = []
        for session_id in due:
            try:
                await sessions.suspend_session(session_id)
            except SylkError as exc:  # it moved meanwhile (completed, closed): leave it
                log.info("idle session %s not suspended: %s", session_id, exc)
                continue
            await sessions.notice(session_id, "Suspended after idling (auto_suspend_after).")
            done.append(session_id)
        return done

    @property
    def started(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        """Look every ``idle_check_s`` from now on (once; needs a running loop)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop(), name="idle-timer")

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.every_s)
            try:
                await self.sweep()
            except Exception:  # an archive hiccup: logged, the next look tries again
                log.exception("idle sweep failed")

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
