"""One line naming the teammates at work on a shared archive: "team: alice 2 · bob 1 · 2 active".

Only what a teammate may know of another's session reaches it (owner, state); it takes
no room on an archive nobody shares. ``/team`` lists the sessions themselves.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual.widgets import Static

if TYPE_CHECKING:  # the engine's modules load lazily, after the first frame
    from backend.archive.team.ownership import TeamRow


def team_text(rows: Sequence[TeamRow]) -> str:
    """``team: alice 2 · bob 1 · 1 active`` (teammates by open sessions, most first)."""
    if not rows:
        return ""
    counts = Counter(r.owner.user for r in rows)
    people = " · ".join(f"{user} {n}" for user, n in counts.most_common())
    active = sum(r.state == "active" for r in rows)
    return f"team: {people}" + (f" · {active} active" if active else "") + " · /team lists them"


class TeamIndicator(Static):
    """The teammates' open sessions, counted; hidden while there are none."""

    DEFAULT_CSS = """
    TeamIndicator {
        height: 1;
        width: 1fr;
        padding: 0 1;
        background: $panel;
        color: $text-muted;
        display: none;
    }
    TeamIndicator.-team {
        display: block;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self.text = ""

    def show(self, rows: Sequence[TeamRow]) -> None:
        self.text = team_text(rows)
        self.set_class(bool(rows), "-team")
        self.update(self.text)
