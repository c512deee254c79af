"""Conflict warnings while sessions work, not at merge time.

Each write a session makes is reported here (:meth:`ConflictWatch.written`) with
where the session works (:class:`SessionPlace`). When another live session of the
same repository (the same shared tree, or a worktree of the same repository; paths
compared relative to the repository's root) has also changed that file, the watch
answers with a :class:`Conflict`: "same file", or "overlapping lines a-b" when their
hunks meet, both sessions in a shared tree (by :class:`LineOwners`) or both in
worktrees (each one's diff against its base, :mod:`hunks`). A pair of sessions is
warned about a file once, and once more if a same-file warning becomes an overlap.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from backend.resources.hunks import overlap, worktree_ranges
from backend.resources.line_owners import LineOwners, Span


@dataclass(frozen=True)
class SessionPlace:
    """Where a session's files live: its repository (the key sessions are compared by),
    the root its paths are relative to, and for a worktree the base it was made from."""

    session_id: str
    repo: Path
    root: Path
    base: str | None = None  # set for a worktree: hunks are diffed against it

    @property
    def shared(self) -> bool:
        return self.base is None


@dataclass(frozen=True)
class Conflict:
    """Two live sessions changed one file: ``first`` before ``second``."""

    repo: str
    path: str  # relative to the repository's root
    first: str
    second: str
    lines: Span | None = None

    @property
    def what(self) -> str:
        if self.lines is None:
            return "same file"
        start, end = self.lines
        return f"overlapping lines {start}-{end}" if end != start else f"overlapping line {start}"

    def other(self, session_id: str) -> str:
        return self.second if session_id == self.first else self.first

    def involves(self, session_id: str) -> bool:
        return session_id in (self.first, self.second)


class ConflictWatch:
    """Which files each session changed, and the conflicts found between live ones."""

    def __init__(self, is_live: Callable[[str], bool]) -> None:
        self._is_live = is_live
        self.owners = LineOwners()
        self._changed: dict[str, dict[tuple[Path, str], SessionPlace]] = {}
        self._found: dict[tuple[frozenset[str], Path, str], Conflict] = {}

    def changed_by(self, session_id: str) -> list[str]:
        return sorted(rel for _, rel in self._changed.get(session_id, {}))

    def note_changed(self, place: SessionPlace, rels: Iterable[str]) -> None:
        """Files a session changed by other means (the file-tracking hook's record)."""
        mine = self._changed.setdefault(place.session_id, {})
        for rel in rels:
            mine.setdefault((place.repo, rel), place)

    def forget_session(self, session_id: str) -> None:
        self._changed.pop(session_id, None)
        for key in [k for k in self._found if session_id in k[0]]:
            del self._found[key]

    def current(self, session_id: str | None = None) -> list[Conflict]:
        """The conflicts between sessions still live (``session_id``'s only, if given)."""
        found = [
            c
            for c in self._found.values()
            if self._is_live(c.first) and self._is_live(c.second)
            and (session_id is None or c.involves(session_id))
        ]  # fmt: skip
        return sorted(found, key=lambda c: (c.path, c.first, c.second))

    async def written(
        self, place: SessionPlace, rel: str, shared_touched: dict[str, Span]
    ) -> list[Conflict]:
        """``place``'s session wrote ``rel``; the new conflicts this makes (each once).

        ``shared_touched``: what :meth:`LineOwners.record` said of this write when the
        session works in a shared tree (other sessions' lines it changed).
        """
        key = (place.repo, rel)
        self._changed.setdefault(place.session_id, {})[key] = place
        new: list[Conflict] = []
        for other_id, files in list(self._changed.items()):
            theirs = files.get(key)
            if other_id == place.session_id or theirs is None or not self._is_live(other_id):
                continue
            pair = (frozenset({other_id, place.session_id}), place.repo, rel)
            before = self._found.get(pair)
            if before is not None and before.lines is not None:
                continue  # an overlap was said: nothing more to find for this pair
            lines = await self._lines(place, theirs, rel, shared_touched)
            conflict = Conflict(str(place.repo), rel, other_id, place.session_id, lines)
            if before is not None and lines is None:
                continue  # said already (an overlap is never downgraded to "same file")
            self._found[pair] = conflict
            new.append(conflict)
        return new

    async def _lines(
        self, ours: SessionPlace, theirs: SessionPlace, rel: str, shared_touched: dict[str, Span]
    ) -> Span | None:
        if ours.shared and theirs.shared:
            return shared_touched.get(theirs.session_id)
        if ours.base is None or theirs.base is None:
            return None  # one shared tree, one worktree: no common numbering
        mine = await worktree_ranges(ours.repo, ours.root, ours.base, rel)
        other = await worktree_ranges(theirs.repo, theirs.root, theirs.base, rel)
        if mine is None or other is None:
            return None
        return overlap(mine, other)
