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


class WrapMemo:
    """What the last wrap of each paragraph (by position) made, for text that grows.

    An answer streaming in is wrapped again on every repaint; only its end changes.
    Greedy wrapping never moves a break once the words before it are known, so a
    paragraph that extends the one wrapped last time keeps every line but the last
    few and folds only the words after them.
    """

    def __init__(self) -> None:
        self.width = 0
        self.paragraphs: list[_Folded] = []


class _Folded:
    __slots__ = ("ends", "indent", "lines", "paragraph", "starts")

    def __init__(
        self, paragraph: str, indent: str, lines: list[str], starts: list[int], ends: list[int]
    ) -> None:
        self.paragraph = paragraph
        self.indent = indent
        self.lines = lines
        self.starts = starts
        """For each line, where the word it opens with starts (-1: a folded word's rest)."""
        self.ends = ends
        """For each line, where in the paragraph the word it opens with ends (-1: a rest)."""


_NOTHING = _Folded("", "", [], [], [])


def wrap_plain(
    text: str,
    width: int,
    hang: Callable[[str], int] | None = None,
    memo: WrapMemo | None = None,
) -> list[str]:
    """Lines of at most ``width`` cells; breaks at spaces, folds longer words.

    Newlines start new lines, a paragraph's leading indentation is kept and
    trailing spaces at a break are dropped. Tabs should be expanded first.
    ``hang`` gives the columns a paragraph's wrapped lines are indented by
    (a list item's text hangs under its first word). ``memo``: text that grows
    (a streaming answer) folds only what is new since the last call.
    """
    width = max(1, width)
    if memo is not None and memo.width != width:
        memo.width, memo.paragraphs = width, []
    lines: list[str] = []
    for at, raw in enumerate(text.split("\n")):
        paragraph = raw.rstrip()
        if len(paragraph) <= width and cell_len(paragraph) <= width:  # else folded: the same
            lines.append(paragraph)
            continue
        indent = " " * min(hang(paragraph) if hang else 0, width // 2)
        kept = memo.paragraphs[at] if memo is not None and at < len(memo.paragraphs) else None
        if kept is not None and kept.paragraph == paragraph and kept.indent == indent:
            lines.extend(kept.lines)
            continue
        folded = _fold(paragraph, width, indent, kept)
        lines.extend(folded.lines)
        if memo is not None:
            kept_ones = memo.paragraphs
            kept_ones.extend([_NOTHING] * (at + 1 - len(kept_ones)))
            kept_ones[at] = folded
    return lines


def _fold(paragraph: str, width: int, indent: str, before: _Folded | None) -> _Folded:
    """One paragraph's lines, resumed from ``before`` where the two agree."""
    lines: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    resume, at = _resume_line(paragraph, indent, before), 0
    if before is not None and resume:
        lines, starts, ends = before.lines[:resume], before.starts[:resume], before.ends[:resume]
        at = before.starts[resume]
    resuming = bool(lines)  # the first word opens a line of its own
    line, used = "", 0
    opened, closed = 0, -1  # where the line's opening word starts and ends (-1: not known)
    for token in _WORDS.finditer(paragraph, at):
        word = token.group()
        bare = word.rstrip()
        if not resuming and used + cell_len(bare) <= width:
            line += word
            used += cell_len(word)
            continue
        resuming = False
        if line:
            lines.append(line.rstrip())
            starts.append(opened)
            ends.append(closed)
        start = indent + word.lstrip() if indent and lines else word
        if cell_len(start.rstrip()) > width >= cell_len(bare.lstrip()):
            start = word.lstrip()  # the hang would split a word that fits a line
        opened, closed = token.start(), token.start() + len(bare)
        bare = start.rstrip()
        if cell_len(bare) > width:
            *full, rest = chop_cells(bare, width)
            lines.extend(full)
            starts.extend([opened] + [-1] * (len(full) - 1))
            ends.extend([closed] + [-1] * (len(full) - 1))
            start, opened, closed = rest + " ", -1, -1
        line, used = start, cell_len(start)
    lines.append(line.rstrip())
    starts.append(opened)
    ends.append(closed)
    return _Folded(paragraph, indent, lines, starts, ends)


def _resume_line(paragraph: str, indent: str, before: _Folded | None) -> int:
    """The last line of ``before`` but the first that opens with a whole word the new
    paragraph has too, the text before it alike: every break before it stays (0: none).
    (A streaming answer's end changes: " …" gives way to the words that follow.)"""
    if before is None or before.indent != indent:
        return 0
    for n in range(len(before.starts) - 1, 0, -1):
        end = before.ends[n]
        if end >= 0 and paragraph.startswith(before.paragraph[:end]):
            return n
    return 0


def column_hang(line: str) -> int:
    """Where a laid-out row's second column starts (else its indentation): a folded
    row's continuation lines hang there, under the column they continue."""
    gap = _COLUMN_GAP.search(line)
    return gap.end(1) if gap else len(line) - len(line.lstrip())


def wrap_columns(text: str, width: int) -> list[str]:
    """Text laid out in columns (``/status``, ``/help``, ``/session list``): a row that
    fits is kept as it is, one that does not folds at spaces, hanging under its second
    column, so no word is cut in two ("na / me") unless it is longer than a line.

    A row whose first column fills its width ("orchestrator offline", one space
    between) hangs under the column of the row above when its words line up with it.
    """
    rows = text.split("\n")
    hangs = [column_hang(row) for row in rows]
    for n in range(1, len(rows)):
        row, above = rows[n], hangs[n - 1]
        indent = len(row) - len(row.lstrip())
        lines_up = indent < above < len(row) and row[above - 1] == " " and row[above] != " "
        if hangs[n] == indent and lines_up:
            hangs[n] = above
    lines: list[str] = []
    for row, hang in zip(rows, hangs, strict=True):
        lines.extend(wrap_plain(row, width, hang=_at(hang)))
    return lines


def _at(column: int) -> Callable[[str], int]:
    return lambda _row: column
