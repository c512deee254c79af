"""Walking a workspace path one name at a time on directory file descriptors.

A path checked by name and then used by name can be swapped for a symlink in
between (a repository's own script, or a second agent, can do it in a loop).
So nothing here opens a path by name from the root: every directory is opened
relative to its parent's descriptor with ``O_NOFOLLOW``, and what the caller
finally opens, creates or renames is opened relative to the last of them.
A name swapped for a link after its ``lstat`` makes the ``O_NOFOLLOW`` open
fail (``ELOOP``/``ENOTDIR``); the step is then taken again, seeing the link.

Symlinks inside the workspace are still followed, by hand: the link is read
relative to its directory's descriptor and its target walked from there (an
absolute target must name a place under the root), at most 40 links deep. A
``..`` pops the walked stack, so it can never climb above the root.

The protected paths (Sylk's own data) are refused by their real relative path
and by their inode, so a rename of the directory does not hide it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from backend.workspace.file_errors import (
    ChangedUnderfootError,
    GitInternalsError,
    PathOutsideWorkspaceError,
    ProtectedPathError,
    SymlinkLoopError,
    WorkspaceError,
    os_failure,
)

MAX_LINKS = 40  # as the kernel's own limit on links followed in one lookup
MAX_RETRIES = 40  # lookups restarted because a name changed underneath
DIR_FLAGS = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
SWAPPED = (errno.ELOOP, errno.ENOTDIR, errno.ENOENT)  # a name replaced since its lstat

Parts = tuple[str, ...]


class Protection:
    """Sylk's own paths inside one workspace: by real relative path and by inode."""

    def __init__(self, root: Path, protected: Iterable[Path]) -> None:
        rels: list[Parts] = []
        inodes: set[tuple[int, int]] = set()
        for path in protected:
            real = Path(path).expanduser().resolve()
            if real == root or root not in real.parents:
                continue  # outside the workspace: no walk can reach it anyway
            rels.append(real.relative_to(root).parts)
            with contextlib.suppress(OSError):
                st = os.lstat(real)
                inodes.add((st.st_dev, st.st_ino))
        self.rels = tuple(rels)
        self.inodes = frozenset(inodes)

    def covers(self, parts: Parts, st: os.stat_result | None = None) -> bool:
        if st is not None and (st.st_dev, st.st_ino) in self.inodes:
            return True
        return any(parts[: len(p)] == p for p in self.rels)

    def __bool__(self) -> bool:
        return bool(self.rels or self.inodes)


@dataclass
class Located:
    """Where a path landed: an open descriptor of its directory and its final name.

    ``name`` is "" when the path is the root itself (``parent`` is then the root).
    ``st`` is the final entry's ``lstat`` (never a link: links were followed), None
    when it does not exist; ``complete`` is False when a directory on the way is
    missing too (``parts`` then completes the path by its spelling alone).
    """

    parent: int
    name: str
    parts: Parts
    st: os.stat_result | None
    complete: bool = True

    def close(self) -> None:
        os.close(self.parent)

    def __enter__(self) -> Located:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _lexical(parts: list[str], rest: Iterable[str], raw: str, root: Path) -> Parts:
    """``parts`` continued by ``rest`` by spelling alone (below a missing directory)."""
    out = list(parts)
    for name in rest:
        if name in ("", "."):
            continue
        if name == "..":
            if not out:
                raise PathOutsideWorkspaceError(raw, root)
            out.pop()
        else:
            out.append(name)
    return tuple(out)


class _Walk:
    """The state of one walk: the open directories, their names, what is left."""

    def __init__(self, walker: Walker, raw: str, names: list[str]) -> None:
        self.walker = walker
        self.raw = raw
        self.stack = [os.dup(walker.root_fd)]
        self.parts: list[str] = []
        self.pending = deque(names)
        self.links = self.retries = 0

    def close(self) -> None:
        for fd in self.stack:
            os.close(fd)

    def again(self, name: str) -> None:
        """Take this step again: the name changed since it was looked at."""
        self.retries += 1
        if self.retries > MAX_RETRIES:
            raise ChangedUnderfootError(self.raw)
        self.pending.appendleft(name)

    def up(self) -> None:
        if not self.parts:
            raise PathOutsideWorkspaceError(self.raw, self.walker.root)
        os.close(self.stack.pop())
        self.parts.pop()

    def follow(self, name: str) -> None:
        """Replace the link ``name`` by its target's names (walked from here or the root)."""
        self.links += 1
        if self.links > MAX_LINKS:
            raise SymlinkLoopError(self.raw)
        try:
            target = os.readlink(name, dir_fd=self.stack[-1])
        except OSError:  # gone or replaced since the lstat
            self.again(name)
            return
        if target.startswith("/"):
            below = self.walker.under_root(target)
            if below is None:
                raise PathOutsideWorkspaceError(self.raw, self.walker.root)
            while len(self.stack) > 1:
                os.close(self.stack.pop())
            self.parts.clear()
            self.pending.extendleft(reversed(below))
        else:
            self.pending.extendleft(reversed(target.split("/")))

    def make_dir(self, name: str) -> None:
        try:
            os.mkdir(name, 0o777, dir_fd=self.stack[-1])  # the umask applies
        except FileExistsError:
            pass
        except OSError as exc:
            raise os_failure(exc, self.raw, "create a directory for") from None
        self.again(name)

    def enter(self, name: str, st: os.stat_result, write: bool) -> None:
        """Open the directory ``name`` relative to the current one, never through a link."""
        try:
            fd = os.open(name, DIR_FLAGS, dir_fd=self.stack[-1])
        except OSError as exc:
            if exc.errno not in SWAPPED:
                raise os_failure(exc, self.raw, "open") from None
            self.again(name)  # swapped for a link or a file since the lstat
            return
        self.stack.append(fd)
        self.parts.append(name)
        opened = os.fstat(fd)
        if (opened.st_dev, opened.st_ino) != (st.st_dev, st.st_ino):
            self.walker.guard(self.raw, tuple(self.parts), opened, write)  # renamed in


class Walker:
    """Resolves workspace-relative names below ``root_fd`` (an ``O_PATH`` directory)."""

    def __init__(
        self, root: Path, root_fd: int, protection: Protection, spellings: Iterable[Path]
    ) -> None:
        self.root = root
        self.root_fd = root_fd
        self.protection = protection
        self.spellings = tuple(dict.fromkeys([root, *spellings]))

    def under_root(self, absolute: str) -> list[str] | None:
        """The names of ``absolute`` below the root, if it is spelled under it."""
        parts = Path(absolute).parts
        for spelling in self.spellings:
            if parts[: len(spelling.parts)] == spelling.parts:
                return list(parts[len(spelling.parts) :])
        return None

    def guard(self, raw: str, parts: Parts, st: os.stat_result | None, write: bool) -> None:
        if self.protection.covers(parts, st):
            raise ProtectedPathError(raw)
        if write and ".git" in parts:
            raise GitInternalsError(raw)

    def locate(
        self, raw: str, names: list[str], *, write: bool = False, create_dirs: bool = False
    ) -> Located:
        """Walk ``names`` from the root; the caller closes the result.

        ``write`` refuses ``.git/`` on the way; ``create_dirs`` makes missing
        directories one at a time (``mkdirat``), each checked before it is made.
        """
        walk = _Walk(self, raw, names)
        try:
            while walk.pending:
                name = walk.pending.popleft()
                if name in ("", "."):
                    continue
                if name == "..":
                    walk.up()
                    continue
                here = walk.stack[-1]
                try:
                    st: os.stat_result | None = os.stat(name, dir_fd=here, follow_symlinks=False)
                except FileNotFoundError:
                    st = None
                except OSError as exc:
                    raise os_failure(exc, raw, "resolve") from None
                if st is not None and stat.S_ISLNK(st.st_mode):
                    walk.follow(name)
                    continue
                parts = (*walk.parts, name)
                if not walk.pending:  # the final name: the caller opens it
                    self.guard(raw, parts, st, write)
                    return Located(os.dup(here), name, parts, st)
                if st is not None and stat.S_ISDIR(st.st_mode):
                    self.guard(raw, parts, st, write)
                    walk.enter(name, st, write)
                elif not create_dirs:
                    full = _lexical(walk.parts, [name, *walk.pending], raw, self.root)
                    self.guard(raw, full, None, write)
                    return Located(os.dup(here), full[-1] if full else "", full, None, False)
                else:
                    self.guard(raw, parts, st, write)
                    if st is not None:
                        raise WorkspaceError(f"{raw!r}: {'/'.join(parts)} is not a directory")
                    walk.make_dir(name)
            top = walk.stack[-1]
            return Located(os.dup(top), "", tuple(walk.parts), os.fstat(top))
        finally:
            walk.close()
