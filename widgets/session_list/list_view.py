"""The session list: two lines per session, drawn with Textual's line API.

Only visible rows are ever rendered, and a change to one session repaints that one
row, so a list of hundreds of sessions costs what the screen shows. A filter
(``start_filter``; typing narrows by name) keeps the sessions' numbers, which are
what alt+1…9 and ``/session switch N`` use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, ClassVar

from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from widgets.session_list.activity import Activity
from widgets.session_list.rows import ROW_HEIGHT, RowLook, RowUsage, first_line, second_line

if TYPE_CHECKING:  # the engine's models (pydantic) load after the first frame
    from backend.sessions.models import Session

Clock = Callable[[], datetime]

TITLE = "Sessions"


class SessionList(ScrollView, can_focus=True):
    """Every visible session: number, activity, name, phase, state, usage, last activity."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "session-list--cursor",
        "session-list--dim",
        "session-list--foreground",
        "session-list--marker",
        "session-list--phase",
        *(f"session-list--activity-{a.name.lower()}" for a in Activity),
        *(f"session-list--state-{s}" for s in ("created", "active", "suspended")),
        *(f"session-list--state-{s}" for s in ("completed", "failed")),
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
        & > .session-list--activity-waiting { color: $warning; text-style: bold; }
        & > .session-list--activity-working { color: $accent; text-style: bold; }
        & > .session-list--activity-failed { color: $error; text-style: bold; }
        & > .session-list--activity-unread { color: $primary; text-style: bold; }
        & > .session-list--activity-done { color: $success; }
        & > .session-list--activity-quiet { color: $text-muted; }
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
        self._all: list[Session] = []
        self._number: dict[str, int] = {}
        self._sessions: list[Session] = []  # the rows shown: all, or those the filter keeps
        self._index: dict[str, int] = {}
        self._activity: dict[str, datetime] = {}
        self._marks: dict[str, Activity] = {}
        self._usage: dict[str, RowUsage] = {}
        self._filter: str | None = None
        self._foreground_id: str | None = None
        self._viewed_id: str | None = None
        self._cursor = 0
        self._base_style = Style()

    # -- state handed down ---------------------------------------------------
    @property
    def sessions(self) -> tuple[Session, ...]:
        """Every session listed, whatever the filter shows."""
        return tuple(self._all)

    @property
    def shown(self) -> tuple[Session, ...]:
        """The sessions whose rows are shown (the filter's)."""
        return tuple(self._sessions)

    @property
    def cursor(self) -> int:
        return self._cursor

    def set_sessions(self, sessions: Iterable[Session]) -> None:
        self._all = [s for s in sessions if s.closed_at is None]
        self._number = {s.id: n for n, s in enumerate(self._all, 1)}
        self._activity = {s.id: s.last_active_at for s in self._all}
        self._apply_filter()

    def _apply_filter(self) -> None:
        wanted = (self._filter or "").casefold()
        self._sessions = [s for s in self._all if wanted in s.name.casefold()]
        self._index = {s.id: n for n, s in enumerate(self._sessions)}
        self.virtual_size = Size(1, len(self._sessions) * ROW_HEIGHT)
        self._move_cursor(self._index.get(self._viewed_id or "", self._cursor))
        self.refresh()

    def upsert(self, session: Session) -> None:
        """Show ``session``'s new state: repaints its row, or adds one at the end."""
        if session.closed_at is not None:
            self.remove_session(session.id)
            return
        previous = self._activity.get(session.id, session.last_active_at)
        self._activity[session.id] = max(previous, session.last_active_at)
        if session.id not in self._number:
            self._all.append(session)
            self._number[session.id] = len(self._all)
        else:
            old = self._all[self._number[session.id] - 1]
            self._all[self._number[session.id] - 1] = session
            if self._filter and old.name != session.name:  # it may leave or join the rows
                self._apply_filter()
                return
        row = self._index.get(session.id)
        if row is not None:
            self._sessions[row] = session
            self._refresh_row(row)
        elif self._matches(session):
            self._index[session.id] = len(self._sessions)
            self._sessions.append(session)
            self.virtual_size = Size(1, len(self._sessions) * ROW_HEIGHT)
            self._refresh_row(len(self._sessions) - 1)

    def _matches(self, session: Session) -> bool:
        return (self._filter or "").casefold() in session.name.casefold()

    def remove_session(self, session_id: str) -> None:
        if session_id not in self._number:
            return
        self._marks.pop(session_id, None)
        self._usage.pop(session_id, None)
        self.set_sessions(s for s in self._all if s.id != session_id)

    def touch(self, session_id: str, at: datetime) -> None:
        """Record activity (a message) in a session."""
        if session_id in self._number and at > self._activity.get(session_id, at):
            self._activity[session_id] = at
            self._refresh_id(session_id)

    def mark(self, session_id: str, activity: Activity) -> None:
        """Show what ``session_id`` is doing; repaints its row only if that changed."""
        if self._marks.get(session_id, Activity.QUIET) is not activity:
            self._marks[session_id] = activity
            self._refresh_id(session_id)

    def activity(self, session_id: str) -> Activity:
        return self._marks.get(session_id, Activity.QUIET)

    def set_usage(self, usage: Mapping[str, RowUsage]) -> None:
        """Every session's tokens and cost (those not named have none); changed rows repaint."""
        changed = {
            k for k in usage.keys() | self._usage.keys() if usage.get(k) != self._usage.get(k)
        }
        self._usage = dict(usage)
        for session_id in changed:
            self._refresh_id(session_id)

    def usage(self, session_id: str) -> RowUsage | None:
        return self._usage.get(session_id)

    @property
    def foreground_id(self) -> str | None:
        return self._foreground_id

    @foreground_id.setter
    def foreground_id(self, session_id: str | None) -> None:
        old, self._foreground_id = self._foreground_id, session_id
        self._refresh_id(old)
        self._refresh_id(session_id)

    @property
    def viewed_id(self) -> str | None:
        return self._viewed_id

    @viewed_id.setter
    def viewed_id(self, session_id: str | None) -> None:
        old, self._viewed_id = self._viewed_id, session_id
        self._refresh_id(old)
        self._refresh_id(session_id)
        if session_id in self._index:
            self._move_cursor(self._index[session_id])

    def _refresh_id(self, session_id: str | None) -> None:
        if session_id in self._index:
            self._refresh_row(self._index[session_id])

    def _refresh_row(self, row: int) -> None:
        for line in range(ROW_HEIGHT):
            self.refresh_line(row * ROW_HEIGHT + line)

    # -- the filter --------------------------------------------------------------
    @property
    def filter_text(self) -> str | None:
        """What the filter narrows by (``None``: no filter is open)."""
        return self._filter

    def start_filter(self) -> None:
        """Open the filter: typing narrows the rows by name; Enter opens the row under
        the cursor, Escape closes the filter and shows every row again."""
        if self._filter is None:
            self._filter = ""
            self._show_filter()
        self.focus()

    def set_filter(self, text: str | None) -> None:
        self._filter = text
        self._show_filter()
        self._apply_filter()

    def _show_filter(self) -> None:
        self.border_title = TITLE if self._filter is None else f"{TITLE} · filter: {self._filter}▏"

    async def _on_key(self, event: events.Key) -> None:
        if self._filter is None:
            return
        if event.key == "escape":
            self.set_filter(None)
        elif event.key == "backspace":
            self.set_filter(self._filter[:-1])
        elif event.key == "enter":
            self.action_pick()
            self.set_filter(None)
        elif event.is_printable and event.character is not None:
            self.set_filter(self._filter + event.character)
        else:
            return
        event.stop()
        event.prevent_default()

    # -- cursor ----------------------------------------------------------------
    def _move_cursor(self, row: int) -> None:
        row = max(0, min(row, len(self._sessions) - 1))
        old, self._cursor = self._cursor, row
        if old < len(self._sessions):
            self._refresh_row(old)
        if self._sessions:
            self._refresh_row(row)
            region = Region(0, row * ROW_HEIGHT, 1, ROW_HEIGHT)
            self.scroll_to_region(region, animate=False, immediate=True)

    def action_cursor(self, delta: int) -> None:
        self._move_cursor(self._cursor + delta)

    def action_page(self, direction: int) -> None:
        rows = max(1, self.scrollable_content_region.height // ROW_HEIGHT)
        self._move_cursor(self._cursor + direction * rows)

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
        line = self.scroll_offset.y + y
        row, part = divmod(line, ROW_HEIGHT)
        width = self.scrollable_content_region.width
        base = self._base_style
        if row >= len(self._sessions):
            return Strip.blank(width, base)
        session = self._sessions[row]
        style = self.get_component_rich_style
        row_style = base + style("session-list--cursor") if row == self._cursor else base
        look = RowLook(
            number=self._number[session.id],
            foreground=session.id == self._foreground_id,
            activity=self._marks.get(session.id, Activity.QUIET),
            when=self._activity.get(session.id, session.last_active_at),
            now=self.clock(),
            usage=self._usage.get(session.id),
        )
        if part == 0:
            segments = first_line(session, look, width, style)
        else:
            segments = second_line(session, look, style)
        strip = Strip(segments).extend_cell_length(width).crop(0, width)
        return strip.apply_style(row_style).apply_meta({"row": row})
