"""The composer: the one line the user types requests and /commands into."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import Input


class Composer(Input):
    """An Input that remembers what was sent (up/down recall it).

    Enter posts Input's own ``Submitted``; the composer keeps its text until
    ``accepted`` says the line was recorded, so a refused line is never lost.
    """

    DEFAULT_CSS = """
    Composer {
        border: tall $border-blurred;
        background: $surface;
        &:focus { border: tall $border; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "up",
            "history(-1)",
            "Previous line",
            show=False,
            id="composer.history-back",
            tooltip="Bring back the line sent before.",
        ),
        Binding(
            "down",
            "history(1)",
            "Next line",
            show=False,
            id="composer.history-forward",
            tooltip="The line sent after; past the last, what you were typing.",
        ),
    ]

    def __init__(
        self,
        *,
        reserved_keys: Iterable[str] = (),
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes, select_on_focus=False)
        self.reserved_keys = frozenset(reserved_keys)
        """Printable keys left to the screen's bindings instead of being typed."""
        self.history: list[str] = []
        self._position = 0
        self._draft = ""

    def check_consume_key(self, key: str, character: str | None) -> bool:
        return key not in self.reserved_keys and super().check_consume_key(key, character)

    def accepted(self, text: str) -> None:
        """``text`` was recorded: remember it and clear the line if it still holds it."""
        if not self.history or self.history[-1] != text:
            self.history.append(text)
        self._position = len(self.history)
        self._draft = ""
        if self.value == text:
            self.value = ""

    def action_history(self, step: int) -> None:
        if not self.history:
            return
        if self._position == len(self.history):
            self._draft = self.value
        position = max(0, min(len(self.history), self._position + step))
        if position == self._position:
            return
        self._position = position
        self.value = self._draft if position == len(self.history) else self.history[position]
        self.cursor_position = len(self.value)
