"""Textual's ``OptionList``, safe to measure in a terminal shrunk to a cell or two.

Textual 8.2 measures each option's height at the list's width less the option's
padding; below three cells that width is zero or negative and Rich's wrapping raises
``ValueError`` (``range() arg 3 must not be zero``), which ends the app. A terminal
dragged small while the approvals inbox or a question is open does exactly that.
Every option list of the UI is this one, so such a resize draws a cramped list and
the app lives on.
"""

from __future__ import annotations

from textual.geometry import Size
from textual.widgets import OptionList as TextualOptionList


class OptionList(TextualOptionList):
    """An ``OptionList`` that measures its options at one cell at least."""

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        padding = self.get_component_styles("option-list--option").padding.width
        return super().get_content_height(container, viewport, max(width, padding + 1))
