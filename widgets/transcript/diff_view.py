"""How a unified diff is coloured: each line gets a component class by its first characters.

The classes (``transcript--diff-add`` for ``+``, ``-del`` for ``-``, ``-hunk`` for
``@@``, ``-file`` for the ``---``/``+++`` headers, ``-context`` for the rest) are
declared by the widget that draws the diff, so a theme decides the colours. Lines
are folded, never wrapped at words: columns in code must stay where they are.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

from rich.cells import chop_cells
from rich.style import Style

DIFF_CLASSES = (
    "transcript--diff-add",
    "transcript--diff-del",
    "transcript--diff-hunk",
    "transcript--diff-file",
    "transcript--diff-context",
)


_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def diff_classes(lines: Iterable[str]) -> Iterator[str]:
    """The component class of each line of a unified diff.

    Hunks are counted by their headers, so a removed line that reads ``--- x`` (a
    SQL comment, a rule) is a deletion, not the next file's header.
    """
    old = new = 0  # lines of the current hunk still to come
    for line in lines:
        if old > 0 or new > 0:
            if line.startswith("-"):
                old -= 1
                yield "transcript--diff-del"
            elif line.startswith("+"):
                new -= 1
                yield "transcript--diff-add"
            else:  # context (or "\\ No newline at end of file")
                if not line.startswith("\\"):
                    old, new = old - 1, new - 1
                yield "transcript--diff-context"
            continue
        hunk = _HUNK.match(line)
        if hunk is not None:
            old = int(hunk.group(1)) if hunk.group(1) is not None else 1
            new = int(hunk.group(2)) if hunk.group(2) is not None else 1
            yield "transcript--diff-hunk"
        elif line.startswith(("--- ", "+++ ", "diff ", "index ")):
            yield "transcript--diff-file"
        elif line.startswith("+"):
            yield "transcript--diff-add"
        elif line.startswith("-"):
            yield "transcript--diff-del"
        else:
            yield "transcript--diff-context"


def diff_lines(
    diff: str, width: int, style: Callable[[str], Style], *, limit: int | None = None
) -> Iterator[tuple[str, Style]]:
    """``(text, style)`` per screen line of ``diff``, folded at ``width`` cells.

    With ``limit``, at most that many diff lines are drawn and a last line says how
    many more there are.
    """
    lines = diff.expandtabs(4).rstrip("\n").split("\n")
    shown = lines if limit is None else lines[:limit]
    for line, name in zip(shown, diff_classes(shown), strict=True):
        line_style = style(name)
        for part in chop_cells(line, max(1, width)) or [""]:
            yield part, line_style
    if len(shown) < len(lines):
        yield f"… {len(lines) - len(shown)} more diff lines", style("transcript--tool-muted")
