"""Keeps the status bar's facts current: read after the events that change them.

A message committed (usage after a turn, a route counted), a session changed (its
model, its state), another session put on screen or its index moving on (the file
watcher starts with it) asks for a read; reads happen at
most once a second (a burst of events costs one), and every ``HEALTH_SECONDS`` for
what no event announces (the file watcher's and MCP servers' health). A read is
the engine's ``status_facts``: one small archive query, done on the loop as
``/status`` is.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.app import App

from backend.errors import SylkError
from screens.state.store import UiState

if TYPE_CHECKING:
    from backend.engine import Engine

MIN_SECONDS = 1.0
"""The least time between two reads."""
HEALTH_SECONDS = 10.0
"""How often the facts are read with no event asking (health changes announce nothing)."""


class StatusFeed:
    def __init__(self, app: App[Any], state: UiState, engine: Callable[[], Engine | None]) -> None:
        self._app = app
        self._state = state
        self._engine = engine
        self._due = False
        self._last = 0.0

    def attach(self) -> None:
        """Follow the state (call once the app runs)."""
        state, app = self._state, self._app
        state.appended_signal.subscribe(app, lambda _message: self.want())
        state.sessions_signal.subscribe(app, lambda _session: self.want())
        state.shown_signal.subscribe(app, lambda _shown: self.want())
        state.index_signal.subscribe(app, lambda _workspace: self.want())  # the watcher too
        app.set_interval(HEALTH_SECONDS, self.want, name="status-health")

    def want(self) -> None:
        """Read soon: now if the last read is a second old, else when it will be."""
        if self._due or self._state.viewed_id is None:  # nothing on screen to read about
            return
        self._due = True
        wait = self._last + MIN_SECONDS - time.monotonic()
        if wait > 0.01:  # a timer of a few ns rounds to 0, which Textual's timer divides by
            self._app.set_timer(wait, self.read, name="status-read")
        else:
            self._app.call_later(self.read)

    def read(self) -> None:
        self._due = False
        self._last = time.monotonic()
        engine, session_id = self._engine(), self._state.viewed_id
        if engine is None or session_id is None or session_id not in self._state.sessions:
            return
        try:
            facts = engine.status_facts(session_id)
        except SylkError:  # the session went meanwhile: the next event reads again
            return
        self._state.status.publish(facts)
