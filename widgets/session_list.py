"""The session list: one line per session, drawn with Textual's line API.

Only visible rows are ever rendered, and a change to one session repaints that
one row, so a list of hundreds of sessions costs what the screen shows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import ClassVar

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from backend.sessions.models import Session, SessionState
from backend.sessions.phases import SessionPhase

Clock = Callable[[], datetime]

STATE_WIDTH = 9  # "completed", "suspended"
PHASE_WIDTH = 4  # "plan", "exec"
AGO_WIDTH = 7  # "59m ago"

PHASE_MARKS: dict[SessionPhase, str] = {
    SessionPhase.IDLE: "",  # no planned work: nothing to say
    SessionPhase.RESEARCH: "rsch",
    SessionPhase.PLANNING: "plan",
    SessionPhase.EXECUTION: "exec",
    SessionPhase.INSPECTION: "insp",
    SessionPhase.TESTING: "test",
    SessionPhase.COMPLETE: "done",
}
"""The phase as a row shows it: four letters beside the name."""


def ago(then: datetime, now: datetime) -> str:
    """A short, coarse "how long ago": ``now``, ``5m ago``, ``3h ago``, ``2d ago``."""
    seconds = (now - then).total_seconds()
    if seconds < 60:
        return "now"
    minutes = int(seconds // 60)
    if minutes < 60:
        return f"{minutes}m ago"
    hours = minutes // 60
    if hours < 24:
        return f"{hours}h ago"
    days = hours // 24
    if days < 14:
        return f"{days}d ago"
    if days < 60:
        return f"{days // 7}w ago"
    if days < 365:
        return f"{days // 30}mo ago"
    return f"{days // 365}y ago"


def _fit(text: str, width: int) -> str:
    """``text`` cut or padded to exactly ``width`` cells, with an ellipsis if cut."""
    if width <= 0:
        return ""
    if cell_len(text) > width:
        return set_cell_size(text, width - 1) + "…"
    return set_cell_size(text, width)


class SessionList(ScrollView, can_focus=True):
    """Every visible session: number, name, phase, state and last activity."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "session-list--cursor",
        "session-list--dim",
        "session-list--foreground",
        "session-list--marker",
        "session-list--phase",
        "session-list--state-created",
        "session-list--state-active",
        "session-list--state-suspended",
        "session-list--state-completed",
        "session-list--state-failed",
    }

    DEFAULT_CSS = """
    SessionList {
        background: $surface;
        color: $foreground;
        overflow-x: hidden;
        overflow-y: auto;
        scrollbar-gutter: stable;
        & > .session-list--cursor { background: $boost; }
        &:focus > .session-list--cursor { background: $primary 35%; }
        & > .session-list--dim { color: $text-muted; }
        & > .session-list--foreground { text-style: bold; }
        & > .session-list--marker { color: $success; text-style: bold; }
        & > .session-list--phase { color: $accent; }
        & > .session-list--state-created { color: $text-muted; }
        & > .session-list--state-active { color: $success; }
        & > .session-list--state-suspended { color: $warning; }
        & > .session-list--state-completed { color: $text-muted; }
        & > .session-list--state-failed { color: $error; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "up", "cursor(-1)", "Up", show=False, id="session-list.up", tooltip="Previous row."
        ),
        Binding(
            "down", "cursor(1)", "Down", show=False, id="session-list.down", tooltip="Next row."
        ),
        Binding(
            "pageup",
            "page(-1)",
            "Page up",
            show=False,
            id="session-list.page-up",
            tooltip="A page of rows up.",
        ),
        Binding(
            "pagedown",
            "page(1)",
            "Page down",
            show=False,
            id="session-list.page-down",
            tooltip="A page of rows down.",
        ),
        Binding(
            "home", "first", "First", show=False, id="session-list.first", tooltip="First row."
        ),
        Binding("end", "last", "Last", show=False, id="session-list.last", tooltip="Last row."),
        Binding(
            "enter",
            "pick",
            "Open",
            id="session-list.open",
            tooltip="Switch to the session under the cursor.",
        ),
    ]

    @dataclass
    class Picked(Message):
        """The user chose a row (Enter or a click)."""

        session_list: SessionList
        session_id: str

        @property
        def control(self) -> SessionList:
            return self.session_list

    def __init__(
        self,
        *,
        clock: Clock | None = None,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.clock: Clock = clock or (lambda: datetime.now(UTC))
        self._sessions: list[Session] = []
        self._index: dict[str, int] = {}
        self._activity: dict[str, datetime] = {}
        self._foreground_id: str | None = None
        self._viewed_id: str | None = None
        self._cursor = 0
        self._base_style = Style()

    # -- state handed down ---------------------------------------------------
    @property
    def sessions(self) -> tuple[Session, ...]:
        return tuple(self._sessions)

    @property
    def cursor(self) -> int:
        return self._cursor

    def set_sessions(self, sessions: Iterable[Session]) -> None:
        self._sessions = [s for s in sessions if s.closed_at is None]
        self._index = {s.id: n for n, s in enumerate(self._sessions)}
        self._activity = {s.id: s.last_active_at for s in self._sessions}
        self._resize_virtual()
        self._move_cursor(self._index.get(self._viewed_id or "", self._cursor))
        self.refresh()

    def upsert(self, session: Session) -> None:
        """Show ``session``'s new state: repaints its row, or adds one at the end."""
        if session.closed_at is not None:
            self.remove_session(session.id)
            return
        row = self._index.get(session.id)
        previous = self._activity.get(session.id, session.last_active_at)
        self._activity[session.id] = max(previous, session.last_active_at)
        if row is None:
            self._index[session.id] = len(self._sessions)
            self._sessions.append(session)
            self._resize_virtual()
            self.refresh_line(len(self._sessions) - 1)
        else:
            self._sessions[row] = session
            self.refresh_line(row)

    def remove_session(self, session_id: str) -> None:
        if session_id not in self._index:
            return
        self.set_sessions(s for s in self._sessions if s.id != session_id)

    def touch(self, session_id: str, at: datetime) -> None:
        """Record activity (a message) in a session."""
        row = self._index.get(session_id)
        if row is not None and at > self._activity.get(session_id, at):
            self._activity[session_id] = at
            self.refresh_line(row)

    @property
    def foreground_id(self) -> str | None:
        return self._foreground_id

    @foreground_id.setter
    def foreground_id(self, session_id: str | None) -> None:
        old, self._foreground_id = self._foreground_id, session_id
        self._refresh_ids(old, session_id)

    @property
    def viewed_id(self) -> str | None:
        return self._viewed_id

    @viewed_id.setter
    def viewed_id(self, session_id: str | None) -> None:
        old, self._viewed_id = self._viewed_id, session_id
        self._refresh_ids(old, session_id)
        if session_id in self._index:
            self._move_cursor(self._index[session_id])

    def _refresh_ids(self, *session_ids: str | None) -> None:
        for session_id in session_ids:
            if session_id in self._index:
                self.refresh_line(self._index[session_id])

    def _resize_virtual(self) -> None:
        self.virtual_size = Size(1, len(self._sessions))

    # -- cursor ----------------------------------------------------------------
    def _move_cursor(self, row: int) -> None:
        row = max(0, min(row, len(self._sessions) - 1))
        old, self._cursor = self._cursor, row
        if old < len(self._sessions):
            self.refresh_line(old)
        if self._sessions:
            self.refresh_line(row)
            self.scroll_to_region(Region(0, row, 1, 1), animate=False, immediate=True)

    def action_cursor(self, delta: int) -> None:
        self._move_cursor(self._cursor + delta)

    def action_page(self, direction: int) -> None:
        self._move_cursor(self._cursor + direction * max(1, self.scrollable_content_region.height))

    def action_first(self) -> None:
        self._move_cursor(0)

    def action_last(self) -> None:
        self._move_cursor(len(self._sessions) - 1)

    def action_pick(self) -> None:
        if 0 <= self._cursor < len(self._sessions):
            self.post_message(self.Picked(self, self._sessions[self._cursor].id))

    async def _on_click(self, event: events.Click) -> None:
        row = event.style.meta.get("row")
        if isinstance(row, int) and 0 <= row < len(self._sessions):
            event.stop()
            self._move_cursor(row)
            self.action_pick()

    def _on_blur(self, _event: events.Blur) -> None:
        # Away from the list, its cursor shows the session on screen again.
        if self._viewed_id in self._index:
            self._move_cursor(self._index[self._viewed_id])

    # -- rendering ---------------------------------------------------------------
    def render_lines(self, crop: Region) -> list[Strip]:
        self._base_style = self.rich_style  # computed once per paint, not per line
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        row = self.scroll_offset.y + y
        width = self.scrollable_content_region.width
        base = self._base_style
        if row >= len(self._sessions):
            return Strip.blank(width, base)
        session = self._sessions[row]
        style = self.get_component_rich_style
        row_style = base
        if row == self._cursor:
            row_style = base + style("session-list--cursor")
        foreground = session.id == self._foreground_id
        name_style = style("session-list--foreground") if foreground else Style()
        dim = style("session-list--dim")
        # Narrow lists drop the last-activity column first, then the phase, then the state.
        show_state, show_phase, show_when = True, True, True
        name_width = width - (4 + 2 + 1 + PHASE_WIDTH + 1 + STATE_WIDTH + 1 + AGO_WIDTH)
        if name_width < 10:
            show_when, name_width = False, width - (4 + 2 + 1 + PHASE_WIDTH + 1 + STATE_WIDTH)
        if name_width < 10:
            show_phase, name_width = False, width - (4 + 2 + 1 + STATE_WIDTH)
        if name_width < 8:
            show_state, name_width = False, width - 6
        segments = [
            Segment(f"{row + 1:>3} ", dim),
            Segment("● " if foreground else "  ", style("session-list--marker")),
            Segment(_fit(session.name, name_width), name_style),
        ]
        if show_phase:
            mark = PHASE_MARKS[session.phase]
            segments += [
                Segment(" "),
                Segment(_fit(mark, PHASE_WIDTH), style("session-list--phase")),
            ]
        if show_state:
            state = session.state
            segments += [
                Segment(" "),
                Segment(_fit(state.value, STATE_WIDTH), style(_state_class(state))),
            ]
        if show_when:
            when = ago(self._activity.get(session.id, session.last_active_at), self.clock())
            segments += [Segment(" "), Segment(when.rjust(AGO_WIDTH), dim)]
        strip = Strip(segments).extend_cell_length(width).crop(0, width)
        return strip.apply_style(row_style).apply_meta({"row": row})


def _state_class(state: SessionState) -> str:
    return f"session-list--state-{state.value}"
