"""Rich's Markdown as the transcript draws it, loaded at the first answer with Markdown.

Three changes to Rich's: headings sit on the left (Rich centres a first-level one), code
blocks carry no blank padding rows, and raw HTML is text (an answer's ``<T>`` is shown,
not dropped). markdown-it and Pygments (through ``rich.syntax``) take ~60 ms to import:
``markdown_render`` imports this module only when it draws a block with Markdown in it.
"""

from __future__ import annotations

from typing import ClassVar

from markdown_it import MarkdownIt
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, Heading, Markdown, MarkdownElement
from rich.syntax import Syntax

# CommonMark without raw HTML: a model's "<T>" or "<div>" is text to show.
_PARSER = MarkdownIt("commonmark", {"html": False}).enable(["strikethrough", "table"])


class _LeftHeading(Heading):
    """A heading on the left, as every other line of the transcript."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        text = self.text.copy()
        text.justify = "left"
        yield text


class _CodeBlock(CodeBlock):
    """Syntax-highlighted, wrapped to the width, one cell of padding at the sides only."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        background = console.get_style("markdown.code_block").bgcolor
        yield Syntax(
            str(self.text).rstrip(),
            self.lexer_name,
            theme=self.theme,
            word_wrap=True,
            padding=(0, 1),
            background_color=background.name if background is not None else None,
        )


class AnswerMarkdown(Markdown):
    """Rich's Markdown with the transcript's headings and code blocks, HTML as text."""

    elements: ClassVar[dict[str, type[MarkdownElement]]] = {
        **Markdown.elements,
        "heading_open": _LeftHeading,
        "fence": _CodeBlock,
        "code_block": _CodeBlock,
    }

    def __init__(self, markup: str, code_theme: str) -> None:
        # Rich's own __init__ builds a parser (with HTML on) per document: one is shared.
        self.markup = markup
        self.parsed = _PARSER.parse(markup)
        self.code_theme = code_theme
        self.justify = None
        self.style = "none"
        self.hyperlinks = False  # a link shows its address: terminals differ on OSC 8
        self.inline_code_lexer = None
        self.inline_code_theme = code_theme


__all__ = ["AnswerMarkdown"]
