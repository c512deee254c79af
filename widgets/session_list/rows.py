"""One session as two lines of the list: who and what (number, markers, name, when),
then where it stands (phase, state, tokens and cost)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style

from backend.session_states import SessionPhase, SessionState
from widgets.session_list.activity import ACTIVITY_MARKS, Activity

if TYPE_CHECKING:  # the engine's models (pydantic) load after the first frame
    from backend.sessions.models import Session

ROW_HEIGHT = 2
"""Lines per session."""
AGO_WIDTH = 7  # "59m ago"
INDENT = 8  # the second line starts under the name

PHASE_MARKS: dict[SessionPhase, str] = {
    SessionPhase.IDLE: "",  # no planned work: nothing to say
    SessionPhase.RESEARCH: "rsch",
    SessionPhase.PLANNING: "plan",
    SessionPhase.EXECUTION: "exec",
    SessionPhase.INSPECTION: "insp",
    SessionPhase.TESTING: "test",
    SessionPhase.COMPLETE: "done",
}
"""The phase as a row shows it: four letters."""


@dataclass(frozen=True)
class RowUsage:
    """A session's tokens and cost, as its row shows them."""

    tokens: int
    cost_usd: float
    complete: bool = True
    """False when some call's model had no price: the cost is a lower bound."""

    def text(self) -> str:
        cost = compact_cost(self.cost_usd) + ("" if self.complete else "+")
        return f"{compact_tokens(self.tokens)} tok {cost}"


def compact_tokens(count: int) -> str:
    """``850``, ``1.2k``, ``34k``, ``1.2M``: at most four cells."""
    if count < 1000:
        return str(count)
    if count < 10_000:
        return f"{count / 1000:.1f}k"
    if count < 1_000_000:
        return f"{count // 1000}k"
    return f"{count / 1_000_000:.1f}M"


def compact_cost(usd: float) -> str:
    """``$0``, ``<$0.01``, ``$0.04``, ``$12.30``, ``$1234``."""
    if usd <= 0:
        return "$0"
    if usd < 0.005:
        return "<$0.01"
    if usd < 100:
        return f"${usd:.2f}"
    return f"${usd:.0f}"


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


def fit(text: str, width: int) -> str:
    """``text`` cut or padded to exactly ``width`` cells, with an ellipsis if cut."""
    if width <= 0:
        return ""
    if cell_len(text) > width:
        return set_cell_size(text, width - 1) + "…"
    return set_cell_size(text, width)


StyleOf = Callable[[str], Style]


@dataclass(frozen=True)
class RowLook:
    """What one row needs besides its session, gathered by the list."""

    number: int
    foreground: bool
    activity: Activity
    when: datetime
    now: datetime
    usage: RowUsage | None


def first_line(session: Session, look: RowLook, width: int, style: StyleOf) -> list[Segment]:
    """``  3 ● ◐ api-refactor      5m ago``: the ago column goes first when narrow."""
    dim = style("session-list--dim")
    name_style = style("session-list--foreground") if look.foreground else Style()
    name_width = width - (INDENT + 1 + AGO_WIDTH)
    show_when = name_width >= 10
    if not show_when:
        name_width = width - INDENT
    mark = ACTIVITY_MARKS[look.activity]
    segments = [
        Segment(f"{look.number:>3} ", dim),
        Segment("● " if look.foreground else "  ", style("session-list--marker")),
        Segment(f"{mark} ", style(f"session-list--activity-{look.activity.name.lower()}")),
        Segment(fit(session.name, name_width), name_style),
    ]
    if show_when:
        segments += [Segment(" "), Segment(ago(look.when, look.now).rjust(AGO_WIDTH), dim)]
    return segments


def second_line(session: Session, look: RowLook, style: StyleOf) -> list[Segment]:
    """``        exec · suspended · 12k tok $0.04``: cut at the list's edge when narrow."""
    segments = [Segment(" " * INDENT)]
    phase = PHASE_MARKS[session.phase]
    if phase:
        segments += [Segment(phase, style("session-list--phase")), Segment(" · ")]
    segments.append(Segment(session.state.value, style(state_class(session.state))))
    if look.usage is not None:
        segments += [Segment(" · "), Segment(look.usage.text(), style("session-list--dim"))]
    if session.branch_name:  # its own worktree (backend.worktrees)
        segments += [
            Segment(" · "),
            Segment(f"⎇ {session.branch_name}", style("session-list--dim")),
        ]
    if session.state is SessionState.FAILED and (why := session.metadata.get("failure")):
        segments += [Segment(" · "), Segment(str(why), style(state_class(session.state)))]
    return segments


def state_class(state: SessionState) -> str:
    return f"session-list--state-{state.value}"
