"""Agent answers drawn as Markdown: headings, emphasis, lists, tables, links, code.

Rich's Markdown elements do the drawing, with three changes for a transcript:
headings sit on the left (Rich centres a first-level one), code blocks carry no blank
padding rows, and raw HTML is text (an answer's ``<T>`` is shown, not dropped).
Colours come from the transcript's component classes through a Rich theme, so the
app's theme decides.

Re-drawing is bounded while an answer streams: the text is cut into its top-level
blocks (at blank lines outside a code fence) and each block is drawn once per width
and kept, so a repaint draws only the block still being written, the tail.
:attr:`MarkdownRenderer.renders` counts the blocks actually drawn, for tests and
benchmarks. Text with no Markdown in it takes the plain word wrap, which is several
times cheaper, so switching between chatty sessions stays fast. The parser and Rich's
Markdown (``markdown_rich``, with Pygments behind it) load when the first block with
Markdown in it is drawn, not before the app's first frame.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable

from rich.cells import cell_len
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.theme import Theme
from textual.cache import LRUCache

from widgets.line_wrap import WrapMemo, wrap_plain
from widgets.transcript.markdown_reflow import list_indent, reflow_markdown

StyleOf = Callable[[str], Style]
Line = tuple[list[Segment], int]
"""A screen line: its segments and its width in cells."""

MARKDOWN_CLASSES = {
    "transcript--md-heading",
    "transcript--md-strong",
    "transcript--md-code",
    "transcript--md-code-block",
    "transcript--md-link",
    "transcript--md-quote",
    "transcript--md-bullet",
    "transcript--md-table",
    "transcript--md-rule",
}
MARKDOWN_CSS = """
        & > .transcript--md-heading { color: $accent; text-style: bold; }
        & > .transcript--md-strong { text-style: bold; }
        & > .transcript--md-code { color: $warning; background: $boost; }
        & > .transcript--md-code-block { background: $boost; }
        & > .transcript--md-link { color: $primary; text-style: underline; }
        & > .transcript--md-quote { color: $text-muted; }
        & > .transcript--md-bullet { color: $secondary; text-style: bold; }
        & > .transcript--md-table { color: $text-muted; }
        & > .transcript--md-rule { color: $text-muted; }
"""

_MARKUP = re.compile(r"[*_`#|>\[~<]|^\s*(?:[-+]|\d{1,3}[.)])\s|^\s*(?:-{3,}|={3,})\s*$", re.M)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r"^ {0,3}(?:[-*+]|\d{1,9}[.)])(?:\s|$)")


def has_markup(text: str) -> bool:
    """Whether ``text`` may hold Markdown (False: plain words, wrapped as they are)."""
    return _MARKUP.search(text) is not None


def split_blocks(text: str) -> list[str]:
    """``text``'s top-level blocks: cut at blank lines outside code fences.

    A blank line followed by an indented line (a list item's next paragraph, indented
    code) or by a list item after a list does not cut, so a list stays one list.
    """
    blocks: list[list[str]] = [[]]
    fence: str | None = None
    blank = False
    for line in text.split("\n"):
        current = blocks[-1]
        opened = _FENCE.match(line)
        if fence is not None:
            current.append(line)
            if opened and opened.group(1).startswith(fence):
                fence = None
            continue
        if not line.strip():
            blank = bool(current)
            if current:
                current.append(line)
            continue
        if blank and not line.startswith((" ", "\t")):
            in_list = any(_LIST_ITEM.match(kept) for kept in current)
            if not (in_list and _LIST_ITEM.match(line)):
                while current and not current[-1].strip():
                    current.pop()
                blocks.append([])
                current = blocks[-1]
        blank = False
        if opened:
            fence = opened.group(1)
        current.append(line)
    return ["\n".join(lines).rstrip() for lines in blocks if lines]


def _theme(style: StyleOf) -> Theme:
    """Rich's Markdown style names, drawn in the transcript's component classes."""
    heading = style("transcript--md-heading")
    code = style("transcript--md-code")
    quote = style("transcript--md-quote")
    bullet = style("transcript--md-bullet")
    table = style("transcript--md-table")
    link = style("transcript--md-link")
    styles = {
        "markdown.h1": heading + Style(underline=True),
        "markdown.h2": heading,
        "markdown.h3": heading,
        "markdown.h4": heading + Style(italic=True),
        "markdown.h5": heading + Style(italic=True),
        "markdown.h6": heading + Style(dim=True),
        "markdown.strong": style("transcript--md-strong"),
        "markdown.code": code,
        "markdown.code_block": style("transcript--md-code-block"),
        "markdown.block_quote": quote,
        "markdown.list": bullet,
        "markdown.item.bullet": bullet,
        "markdown.item.number": bullet,
        "markdown.hr": style("transcript--md-rule"),
        "markdown.link": link,
        "markdown.link_url": link + Style(dim=True),
        "markdown.table.border": table,
        "markdown.table.header": heading,
    }
    return Theme(styles, inherit=True)


class MarkdownRenderer:
    """Draws answers' text as screen lines; ``kept`` blocks are remembered (0: none)."""

    def __init__(self, style: StyleOf, *, dark: bool = True, kept: int = 0) -> None:
        self._style = style
        self._code_theme = "monokai" if dark else "friendly"
        self._console = Console(
            file=io.StringIO(),
            force_terminal=True,
            color_system="truecolor",
            legacy_windows=False,
            theme=_theme(style),
            width=80,
        )
        self._kept: LRUCache[tuple[str, int], list[Line]] | None = LRUCache(kept) if kept else None
        self._memo = WrapMemo() if kept else None  # the draft's text grows: fold only its end
        self.renders = 0
        """Blocks drawn (a block found among those kept is not counted)."""

    def rows(self, text: str, width: int, base: Style) -> list[Line]:
        """``text`` as lines at most ``width`` cells wide, in ``base`` where unstyled."""
        if not has_markup(text):
            lines = wrap_plain(reflow_markdown(text), width, hang=list_indent, memo=self._memo)
            return [([Segment(line, base)], cell_len(line)) for line in lines]
        rows: list[Line] = []
        for index, block in enumerate(split_blocks(text)):
            if index:
                rows.append(([], 0))
            rows.extend(self._block(block, width, base))
        return rows

    def _block(self, block: str, width: int, base: Style) -> list[Line]:
        kept = self._kept
        key = (block, width)
        if kept is not None:
            found = kept.get(key)
            if found is not None:
                return found
        from widgets.transcript.markdown_rich import AnswerMarkdown  # its parser, at first use

        self.renders += 1
        options = self._console.options.update_width(max(1, width))
        drawn = self._console.render_lines(
            AnswerMarkdown(block, self._code_theme), options, style=base, pad=False
        )
        # Rich opens or ends some blocks (a table) with a blank line: blocks space themselves.
        while drawn and _blank(drawn[-1]):
            drawn.pop()
        start = next((n for n, line in enumerate(drawn) if not _blank(line)), len(drawn))
        drawn = drawn[start:]
        rows = [(line, Segment.get_line_length(line)) for line in drawn]
        rows = [
            (line, length) if length <= width else _cropped(line, width) for line, length in rows
        ]
        if kept is not None:
            kept[key] = rows
        return rows


def _blank(line: list[Segment]) -> bool:
    return not "".join(segment.text for segment in line).strip()


def _cropped(line: list[Segment], width: int) -> Line:
    """A line wider than the screen (a table that cannot shrink more), cut at its edge."""
    return list(Segment.adjust_line_length(line, width)), width


__all__ = [
    "MARKDOWN_CLASSES",
    "MARKDOWN_CSS",
    "MarkdownRenderer",
    "has_markup",
    "split_blocks",
]
