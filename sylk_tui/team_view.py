"""The app's view of the teammates on a shared archive: the indicator and ``/team``.

On start, and whenever another user's session is made or moves (``ArchiveChanged``
with ``teammate``, as :class:`TeamChanged`), the sessions table is read off the UI
thread (``Engine.team.team_rows``: names, states and owners only) and the main
screen's indicator and an open ``/team`` list are redrawn: no restart, no polling here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from backend.archive.team.ownership import TeamRow
    from backend.engine import Engine
    from sylk_tui.app import SylkApp


class TeamChanged(Message):
    """A teammate's session was made, or its state, name or closing changed."""


class TeamView:
    """Keeps the teammates' open sessions for the indicator and the ``/team`` screen."""

    def __init__(self, app: SylkApp, clock: Callable[[], datetime]) -> None:
        self._app = app
        self._clock = clock
        self._engine: Engine | None = None
        self.rows: list[TeamRow] = []

    def attach(self, engine: Engine) -> None:
        self._engine = engine
        self.refresh()

    def refresh(self) -> None:
        if self._engine is not None:
            self._app.run_worker(self._read(self._engine), group="team", exclusive=True)

    async def _read(self, engine: Engine) -> None:
        team = engine.team
        rows = await asyncio.to_thread(team.team_rows)
        self.rows = [r for r in rows if not r.closed and r.owner.user != team.reader.user]
        self._draw()

    def _draw(self) -> None:
        from screens.team_sessions import TeamScreen
        from widgets.team_indicator import TeamIndicator

        for screen in self._app.screen_stack:
            for indicator in screen.query(TeamIndicator):
                indicator.show(self.rows)
            if isinstance(screen, TeamScreen):
                screen.show(self.rows)

    def open(self) -> None:
        """``/team``: the list, drawn from what is known and refreshed at once."""
        from screens.team_sessions import TeamScreen

        if not isinstance(self._app.screen, TeamScreen):
            self._app.push_screen(TeamScreen(self.rows, self._clock))
        self.refresh()
