"""Word wrapping of plain, single-style text into terminal cells.

The transcript wraps every message of a session when it comes on screen, so
this is on the switching path: it does only what one style needs (no spans),
which makes it several times faster than ``rich.text.Text.wrap``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rich.cells import cell_len, chop_cells

_WORDS = re.compile(r"\s*\S+\s*")
_COLUMN_GAP = re.compile(r"\S(\s{2,})(?=\S)")


def wrap_plain(text: str, width: int, hang: Callable[[str], int] | None = None) -> list[str]:
    """Lines of at most ``width`` cells; breaks at spaces, folds longer words.

    Newlines start new lines, a paragraph's leading indentation is kept and
    trailing spaces at a break are dropped. Tabs should be expanded first.
    ``hang`` gives the columns a paragraph's wrapped lines are indented by
    (a list item's text hangs under its first word).
    """
    width = max(1, width)
    lines: list[str] = []
    for raw in text.split("\n"):
        paragraph = raw.rstrip()
        if cell_len(paragraph) <= width:
            lines.append(paragraph)
            continue
        indent = " " * min(hang(paragraph) if hang else 0, width // 2)
        first = len(lines)
        line, used = "", 0
        for word in _WORDS.findall(paragraph):
            bare = word.rstrip()
            if used + cell_len(bare) <= width:
                line += word
                used += cell_len(word)
                continue
            if line:
                lines.append(line.rstrip())
            start = indent + word.lstrip() if indent and len(lines) > first else word
            if cell_len(start.rstrip()) > width >= cell_len(bare.lstrip()):
                start = word.lstrip()  # the hang would split a word that fits a line
            bare = start.rstrip()
            if cell_len(bare) > width:
                *full, rest = chop_cells(bare, width)
                lines.extend(full)
                start = rest + " "
            line, used = start, cell_len(start)
        lines.append(line.rstrip())
    return lines


def column_hang(line: str) -> int:
    """Where a laid-out row's second column starts (else its indentation): a folded
    row's continuation lines hang there, under the column they continue."""
    gap = _COLUMN_GAP.search(line)
    return gap.end(1) if gap else len(line) - len(line.lstrip())


def wrap_columns(text: str, width: int) -> list[str]:
    """Text laid out in columns (``/status``, ``/help``, ``/session list``): a row that
    fits is kept as it is, one that does not folds at spaces, hanging under its second
    column, so no word is cut in two ("na / me") unless it is longer than a line."""
    return wrap_plain(text, width, hang=column_hang)
