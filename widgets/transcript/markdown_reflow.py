"""Soft line breaks in markdown answers, joined so the transcript can wrap them.

Models and the built-in library write markdown hard-wrapped at 80-90 columns.
Wrapped again at the transcript's width, every source line break shows as a
ragged short line. Markdown treats a single newline inside a paragraph as a
space, so this joins such lines, leaving alone what must keep its lines:
fenced and indented code, headings, tables, block quotes, rules, list items
(each starts a new line; its indented continuation joins it) and hard breaks
(two trailing spaces or a backslash).
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^\s*(```|~~~)")
_LIST_ITEM = re.compile(r"^(\s*)([-*+]|\d{1,3}[.)])\s+")
_BLOCK_START = re.compile(r"^\s*(#{1,6}\s|>|\||([-*_])(\s*\2){2,}\s*$)")


def list_indent(line: str) -> int:
    """Columns a list item's wrapped lines hang under (0 for other lines)."""
    match = _LIST_ITEM.match(line)
    return match.end() if match else 0


def reflow_markdown(text: str) -> str:
    """``text`` with paragraph-internal line breaks replaced by spaces."""
    out: list[str] = []
    in_fence = False
    in_code = False  # an indented code block (four spaces after a blank line)
    joinable = False  # may the next line be appended to the last one?
    for line in text.split("\n"):
        stripped = line.strip()
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and stripped:
            in_code = line.startswith("    ") and (in_code or not out or not out[-1].strip())
            starts_block = bool(_BLOCK_START.match(line) or _LIST_ITEM.match(line))
            if joinable and not in_code and not starts_block:
                out[-1] = f"{out[-1].rstrip()} {stripped}"
            else:
                out.append(line)
            heading_or_table = bool(_BLOCK_START.match(line)) and not stripped.startswith(">")
            hard_break = line.endswith("  ") or line.endswith("\\")
            joinable = not (in_code or heading_or_table or hard_break)
            continue
        out.append(line)
        joinable = False
    return "\n".join(out)


__all__ = ["list_indent", "reflow_markdown"]
