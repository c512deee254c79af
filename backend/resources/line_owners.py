"""Who changed which lines of a file that several sessions edit in one shared tree.

In a shared tree every session sees the others' edits at once, so a diff against a
session's starting point mixes everyone's work. Instead each write is diffed against
the file just before it (under the file's write lock, so nothing slips between) and
the lines it replaced or added are marked as the writer's. A later write by another
session that replaces or deletes lines marked as someone else's overlaps that
session's change; where, is said in the file's new line numbers.

A file changed by something that is not a tracked write (a shell command) no longer
matches its record: the record starts again from that file, unmarked.
"""

from __future__ import annotations

from difflib import SequenceMatcher
from pathlib import Path

Span = tuple[int, int]  # 1-based, inclusive
_NOBODY: frozenset[str] = frozenset()


def _widen(span: Span | None, start: int, end: int) -> Span:
    return (start, end) if span is None else (min(span[0], start), max(span[1], end))


class LineOwners:
    """Per shared file, the sessions whose write last changed each line."""

    def __init__(self) -> None:
        self._owners: dict[Path, list[frozenset[str]]] = {}

    def forget_file(self, path: Path) -> None:
        self._owners.pop(path, None)

    def record(
        self, path: Path, session_id: str, before: list[str] | None, after: list[str] | None
    ) -> dict[str, Span]:
        """Mark what ``session_id`` changed from ``before`` to ``after``; returns the other
        sessions whose changed lines it touched, with the span it touched (new numbering).

        ``None`` for a side means the text is unknown (binary, too large, gone): the
        record is dropped and nothing is said about lines.
        """
        if before is None or after is None:
            self.forget_file(path)
            return {}
        owners = self._owners.get(path)
        if owners is None or len(owners) != len(before):
            owners = [_NOBODY] * len(before)
        mine = frozenset({session_id})
        touched: dict[str, Span] = {}
        updated: list[frozenset[str]] = []
        matcher = SequenceMatcher(None, before, after, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                updated.extend(owners[i1:i2])
                continue
            start, end = j1 + 1, max(j2, j1 + 1)
            if j2 == j1:  # a deletion: the line after the gap, or the last one
                start = end = max(1, min(j1 + 1, len(after)))
            one_for_one = i2 - i1 == j2 - j1  # a line rewritten in place: say just that line
            for offset, who in enumerate(owners[i1:i2]):
                at = (j1 + offset + 1, j1 + offset + 1) if one_for_one else (start, end)
                for other in who - mine:
                    touched[other] = _widen(touched.get(other), *at)
            updated.extend([mine] * (j2 - j1))
        self._owners[path] = updated
        return touched

    def spans_of(self, path: Path, session_id: str) -> list[Span]:
        """The runs of lines ``session_id`` changed last, in the file's current numbering."""
        spans: list[Span] = []
        for number, who in enumerate(self._owners.get(path, []), start=1):
            if session_id not in who:
                continue
            if spans and spans[-1][1] == number - 1:
                spans[-1] = (spans[-1][0], number)
            else:
                spans.append((number, number))
        return spans
