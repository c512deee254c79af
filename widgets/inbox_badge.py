"""The badge that counts what waits on the user (F2 opens the approvals inbox)."""

from __future__ import annotations

from textual.reactive import reactive
from textual.widgets import Static


def badge_text(count: int, key: str = "F2") -> str:
    what = "question waits" if count == 1 else "questions wait"
    return f"⚑ {count} {what} on you · {key} opens the inbox"


class InboxBadge(Static):
    """Counts what waits on the user, for the screen that holds it (which sets ``count``);
    "⚑ 2 questions wait on you · F2 opens the inbox", taking no room while nothing waits."""

    DEFAULT_CSS = """
    InboxBadge {
        height: 1;
        width: 1fr;
        padding: 0 1;
        background: $warning-muted;
        color: $text;
        text-style: bold;
        display: none;
    }
    InboxBadge.-waiting {
        display: block;
    }
    """

    count: reactive[int] = reactive(0)

    def __init__(self, *, key: str = "F2", id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self.key = key

    def watch_count(self, count: int) -> None:
        self.set_class(count > 0, "-waiting")
        self.update(badge_text(count, self.key) if count else "")
