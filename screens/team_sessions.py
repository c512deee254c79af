"""``/team``: every teammate's open session on a shared archive, live.

Owner (``user@host``), name, state and when it was last active: what a teammate may
know of another's session, never its transcript, workspace or chronicle. Nothing here
opens a session (a teammate's is theirs); Escape closes the list. The app refreshes it
whenever another user's session is made or moves (an ``ArchiveChanged`` event).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Label

from widgets.session_list.rows import ago

if TYPE_CHECKING:
    from backend.archive.team.ownership import TeamRow

COLUMNS = ("owner", "name", "state", "last active")


def row_cells(row: TeamRow, now: datetime) -> tuple[str, str, str, str]:
    try:
        when = ago(datetime.fromisoformat(row.last_active_at), now)
    except ValueError:
        when = "?"
    return str(row.owner), row.name, row.state, when


class TeamScreen(ModalScreen[None]):
    """The teammates' sessions, one row each, newest activity first."""

    CSS = """
    TeamScreen { align: center middle; background: $background 60%; }
    #team-dialog {
        width: 100; max-width: 100%; height: auto; max-height: 80%;
        padding: 1 2; border: thick $accent; background: $panel;
    }
    #team-title { text-style: bold; width: 1fr; }
    #team-empty { color: $text-muted; margin-top: 1; }
    #team-table { height: auto; max-height: 30; margin-top: 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "Close", id="team.close", tooltip="Close the team list."),
    ]

    def __init__(self, rows: Sequence[TeamRow], clock: Callable[[], datetime]) -> None:
        super().__init__()
        self._rows = list(rows)
        self._clock = clock

    def compose(self) -> ComposeResult:
        with Vertical(id="team-dialog"):
            yield Label("Teammates' sessions on the shared archive", id="team-title")
            yield Label("", id="team-empty")
            yield DataTable(id="team-table", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns(*COLUMNS)
        self.show(self._rows)
        self.query_one(DataTable).focus()

    def show(self, rows: Sequence[TeamRow]) -> None:
        """Redraw with ``rows`` (the app calls it on each teammate's change)."""
        self._rows = sorted(rows, key=lambda r: r.last_active_at, reverse=True)
        table = self.query_one(DataTable)
        table.clear()
        now = self._clock()
        for row in self._rows:
            table.add_row(*row_cells(row, now), key=row.id)
        empty = "" if self._rows else "No teammate has an open session here."
        self.query_one("#team-empty", Label).update(empty)

    @property
    def shown(self) -> list[tuple[str, ...]]:
        """The rows as drawn (what a test or a screen reader reads)."""
        table = self.query_one(DataTable)
        return [tuple(str(c) for c in table.get_row_at(i)) for i in range(table.row_count)]
