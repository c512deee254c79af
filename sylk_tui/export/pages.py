"""A Markdown export as a self-contained HTML page or an SVG picture of a terminal.

The HTML page loads nothing: its style is inline, a Content-Security-Policy forbids any
other source, raw HTML in the Markdown is escaped (``html: False``) and images are not
rendered (an image would be fetched from wherever its URL points, telling that server
the page was opened); links keep only the schemes markdown-it deems safe.

The SVG is the transcript printed by Rich on a recording console; Rich's template names
web fonts by URL, which are dropped so the picture needs no network either.
"""

from __future__ import annotations

import html
import io
import re

PAGE_STYLE = """
body { margin: 2em auto; max-width: 60em; padding: 0 1em; font: 15px/1.5 system-ui, sans-serif;
       color: #1f2328; background: #ffffff; }
pre { background: #f6f8fa; padding: .8em; overflow-x: auto; border-radius: 6px; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, monospace; font-size: 90%; }
blockquote { margin: 0; padding: 0 1em; color: #59636e; border-left: .25em solid #d1d9e0; }
h1, h2 { border-bottom: 1px solid #d1d9e0; padding-bottom: .3em; }
table { border-collapse: collapse; } td, th { border: 1px solid #d1d9e0; padding: .2em .6em; }
@media (prefers-color-scheme: dark) {
  body { color: #e6edf3; background: #0d1117; } pre { background: #161b22; }
  blockquote { color: #9198a1; border-color: #3d444d; } td, th, h1, h2 { border-color: #3d444d; }
}
"""
CSP = "default-src 'none'; style-src 'unsafe-inline'"
_FONT_URL = re.compile(r',\s*url\("[^"]*"\)\s*format\("[^"]*"\)')


def html_page(title: str, markdown: str) -> str:
    """The Markdown as one HTML page that needs nothing else to be read."""
    from markdown_it import MarkdownIt

    renderer = MarkdownIt("commonmark", {"html": False}).enable("table").disable("image")
    body = renderer.render(markdown)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>{PAGE_STYLE}</style>\n</head>\n"
        f"<body>\n{body}</body>\n</html>\n"
    )


def without_font_urls(svg: str) -> str:
    """An SVG with its web-font URLs dropped (local fonts, then monospace, are used)."""
    return _FONT_URL.sub("", svg)


def terminal_svg(title: str, markdown: str, *, width: int = 100) -> str:
    """The Markdown as Rich prints it in a terminal ``width`` columns wide, as an SVG."""
    from rich.console import Console
    from rich.markdown import Markdown

    console = Console(
        record=True, width=width, file=io.StringIO(), force_terminal=True,
        color_system="truecolor", legacy_windows=False,
    )  # fmt: skip
    console.print(Markdown(markdown, hyperlinks=False))
    return without_font_urls(console.export_svg(title=title))
