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
            bare = start.rstrip()
            if cell_len(bare) > width:
                *full, rest = chop_cells(bare, width)
                lines.extend(full)
                start = rest + " "
            line, used = start, cell_len(start)
        lines.append(line.rstrip())
    return lines
