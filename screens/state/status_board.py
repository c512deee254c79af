"""The engine's status facts for the session on screen, as the status bar shows them.

The app reads them (``sylk_tui.status_feed``) after the events that change them and
puts them here; the screen subscribes to ``signal``. The facts are the engine's
``StatusFacts``, typed here only for the checker: the UI loads no engine module
before its first frame.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.dom import DOMNode
from textual.signal import Signal

if TYPE_CHECKING:
    from backend.engine.status_facts import StatusFacts


class StatusBoard:
    def __init__(self, owner: DOMNode) -> None:
        self.facts: StatusFacts | None = None
        self.signal: Signal[StatusFacts] = Signal(owner, "status")
        """New facts were read (about the session on screen, usually)."""

    def publish(self, facts: StatusFacts) -> None:
        if facts != self.facts:
            self.facts = facts
            self.signal.publish(facts)
