"""The small list of completions shown over the transcript, just above the composer.

It never takes the focus: the composer keeps typing and moves the highlight
(up/down), takes the highlighted offer (Tab or Enter) or closes it (Esc).
"""

from __future__ import annotations

from rich.text import Text
from textual.geometry import Offset
from textual.widgets.option_list import Option

from widgets.composer.completion import Offer
from widgets.option_list import OptionList

MENU_ROWS = 8
"""Offers visible at once; the list scrolls past that."""


class CompletionMenu(OptionList):
    DEFAULT_CSS = """
    CompletionMenu {
        overlay: screen;
        position: absolute;
        width: auto;
        min-width: 16;
        max-width: 64;
        height: auto;
        max-height: 10;
        border: round $border;
        background: $surface;
        padding: 0 1;
        display: none;
    }
    """

    def __init__(self) -> None:
        super().__init__(id="completion-menu")
        self.can_focus = False
        self.offers: list[Offer] = []

    def show_offers(self, offers: list[Offer], anchor: Offset) -> None:
        """List ``offers`` with its bottom-left corner just above ``anchor`` (screen cells)."""
        kept = self.chosen  # narrowing keeps the highlighted offer where it still is
        self.offers = offers
        self.clear_options()
        self.add_options(
            Option(Text.assemble(offer.text, "  ", (offer.kind, "dim"))) for offer in offers
        )
        self.highlighted = offers.index(kept) if kept in offers else 0
        rows = min(len(offers), MENU_ROWS) + 2  # the border
        self.styles.offset = (anchor.x, max(0, anchor.y - rows))
        self.display = True

    def close(self) -> None:
        self.display = False
        self.offers = []

    @property
    def is_open(self) -> bool:
        return bool(self.display and self.offers)

    def move(self, step: int) -> None:
        if self.offers:
            self.highlighted = ((self.highlighted or 0) + step) % len(self.offers)

    @property
    def chosen(self) -> Offer | None:
        if not self.is_open or self.highlighted is None:
            return None
        return self.offers[self.highlighted]
