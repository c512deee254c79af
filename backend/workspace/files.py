"""File access that never leaves a session's workspace, with no window to race.

The root is opened once; every path is walked from it one name at a time on
directory descriptors (:mod:`backend.workspace.dirfd`), and the file itself is
opened, created or renamed relative to its directory's descriptor with
``O_NOFOLLOW``. Swapping a name for a symlink while an operation runs cannot
lead it outside: it sees the link and follows it only where it stays inside.

Refused, with typed errors (:mod:`backend.workspace.file_errors`): paths whose
real location is outside the root, Sylk's own data (``protected``; listings and
walks leave it out), a file with more than one name (a hard link's other name
may be outside), writes into ``.git/``, binary files read as text, reads over
the cap. A failed write (full disk, read-only filesystem, permissions) leaves
the old file as it was.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from backend.workspace.dirfd import MAX_RETRIES, SWAPPED, Located, Protection, Walker
from backend.workspace.file_errors import (
    BinaryFileError,
    ChangedUnderfootError,
    FileTooLargeError,
    GitInternalsError,
    HardLinkError,
    NotAFileError,
    PathOutsideWorkspaceError,
    ProtectedPathError,
    WorkspaceError,
    os_failure,
)

__all__ = [
    "MAX_READ_BYTES", "BinaryFileError", "FileTooLargeError", "GitInternalsError",
    "HardLinkError", "NotAFileError", "PathOutsideWorkspaceError", "ProtectedPathError",
    "Workspace", "WorkspaceError",
]  # fmt: skip

MAX_READ_BYTES = 256 * 1024
MAX_PATH_BYTES = 4096  # Linux's PATH_MAX
MAX_NAME_BYTES = 255  # and NAME_MAX
BINARY_SNIFF_BYTES = 8 * 1024  # a NUL in the first 8 KiB: not text
MAX_LIST_ENTRIES = 500
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_LIST_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _line_range(raw: BinaryIO, path: str, first: int, last: int | None) -> str:
    """Lines ``first`` to ``last`` (1-based, inclusive), at most MAX_READ_BYTES of them."""
    kept: list[bytes] = []
    taken = 0
    for number, line in enumerate(raw, start=1):
        if last is not None and number > last:
            break
        if number < first:
            continue
        taken += len(line)
        if taken > MAX_READ_BYTES:
            raise WorkspaceError(
                f"lines {first}-{last or 'end'} of {path!r} are over {MAX_READ_BYTES} bytes",
                help_hint=f"ask for fewer lines (up to line {number - 1} fits)",
            )
        kept.append(line)
    return b"".join(kept).decode("utf-8", errors="replace")


class Workspace:
    """One workspace root, opened once; ``protected`` paths inside it are never touched.

    Holds a descriptor of the root: close it with :meth:`close` (or a ``with``
    block); a dropped instance closes it too.
    """

    def __init__(self, root: Path, protected: Iterable[Path] = ()) -> None:
        self.root = root.resolve(strict=True)
        self._fd = os.open(self.root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        given = root.expanduser().absolute()
        self._walker = Walker(self.root, self._fd, Protection(self.root, protected), [given])

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    # -- resolving -------------------------------------------------------------------

    def _names(self, path: str | os.PathLike[str]) -> tuple[str, list[str]]:
        raw = os.fspath(path)
        if "\x00" in raw:
            raise WorkspaceError(f"path {raw!r} contains a NUL byte")
        spelled = os.path.expanduser(raw)
        if len(os.fsencode(spelled)) > MAX_PATH_BYTES or any(
            len(os.fsencode(part)) > MAX_NAME_BYTES for part in spelled.split("/")
        ):
            raise WorkspaceError(
                f"path {raw[:80]!r}... is too long",
                help_hint=f"names are at most {MAX_NAME_BYTES} bytes, paths {MAX_PATH_BYTES}",
            )
        if not spelled.startswith("/"):
            return raw, spelled.split("/")
        below = self._walker.under_root(spelled)
        if below is None:  # another spelling of a place inside? walked all the same
            below = self._walker.under_root(os.path.realpath(spelled))
        if below is None:
            raise PathOutsideWorkspaceError(raw, self.root)
        return raw, below

    def _locate(self, path: str | os.PathLike[str], **how: bool) -> tuple[str, Located]:
        raw, names = self._names(path)
        return raw, self._walker.locate(raw, names, **how)

    def resolve(self, path: str | os.PathLike[str]) -> Path:
        """The real location of ``path`` (links inside followed); it need not exist."""
        _, found = self._locate(path)
        found.close()
        return self.root.joinpath(*found.parts)

    def relative(self, real: Path) -> str:
        return real.relative_to(self.root).as_posix() or "."

    def stat(self, path: str | os.PathLike[str]) -> os.stat_result | None:
        """What ``path`` is (links inside followed), or None if it does not exist."""
        _, found = self._locate(path)
        found.close()
        return found.st

    # -- reading ---------------------------------------------------------------------

    def _open_file(self, path: str | os.PathLike[str]) -> tuple[str, int, os.stat_result]:
        """A read descriptor of the regular file ``path``, checked after it is open."""
        for _ in range(MAX_RETRIES):
            raw, found = self._locate(path)
            with found:
                if found.st is None or not stat.S_ISREG(found.st.st_mode):
                    raise NotAFileError(raw)
                try:
                    fd = os.open(found.name, _READ_FLAGS, dir_fd=found.parent)
                except OSError as exc:
                    if exc.errno in SWAPPED:  # replaced by a link since the lstat: again
                        continue
                    raise os_failure(exc, raw, "read") from None
            st = os.fstat(fd)
            problem: WorkspaceError | None = None
            if not stat.S_ISREG(st.st_mode):
                problem = NotAFileError(raw)
            elif st.st_nlink > 1:
                problem = HardLinkError(raw, st.st_nlink)
            elif self._walker.protection.covers(found.parts, st):
                problem = ProtectedPathError(raw)
            if problem is not None:
                os.close(fd)
                raise problem
            return raw, fd, st
        raise ChangedUnderfootError(os.fspath(path))

    def read_bytes(self, path: str | os.PathLike[str], limit: int = MAX_READ_BYTES) -> bytes:
        """The whole file, if it is at most ``limit`` bytes (FileTooLargeError if not)."""
        raw, fd, st = self._open_file(path)
        with os.fdopen(fd, "rb") as handle:
            if st.st_size > limit:
                raise FileTooLargeError(raw, st.st_size, limit)
            data = handle.read(limit + 1)
        if len(data) > limit:  # it grew since the fstat
            raise FileTooLargeError(raw, len(data), limit)
        return data

    def read_text(
        self,
        path: str | os.PathLike[str],
        *,
        start_line: int | None = None,
        end_line: int | None = None,
        limit: int = MAX_READ_BYTES,
        strict: bool = False,
    ) -> str:
        """The file's text (bounded by ``limit``, or a line range under the read cap).

        Undecodable bytes become U+FFFD, unless ``strict`` (an edit writes the text
        back: a file that is not UTF-8 is refused rather than silently changed).
        """
        raw, fd, st = self._open_file(path)
        with os.fdopen(fd, "rb") as handle:
            if st.st_size > limit and start_line is None:
                raise FileTooLargeError(raw, st.st_size, limit)
            if b"\x00" in handle.read(BINARY_SNIFF_BYTES):
                raise BinaryFileError(raw, st.st_size)
            handle.seek(0)
            if start_line is None and end_line is None:
                data = handle.read(limit + 1)
                if len(data) > limit:
                    raise FileTooLargeError(raw, len(data), limit)
                try:
                    return data.decode("utf-8", errors="strict" if strict else "replace")
                except UnicodeDecodeError:
                    raise WorkspaceError(
                        f"{raw!r} is not UTF-8 text", help_hint="it cannot be edited as text"
                    ) from None
            return _line_range(handle, raw, max(1, start_line or 1), end_line)

    def _open_dir(self, path: str | os.PathLike[str]) -> tuple[int, Located]:
        for _ in range(MAX_RETRIES):
            raw, found = self._locate(path)
            with found:
                if found.st is None or not stat.S_ISDIR(found.st.st_mode):
                    raise NotAFileError(raw, "a directory")
                try:
                    fd = os.open(found.name or ".", _LIST_FLAGS, dir_fd=found.parent)
                except OSError as exc:
                    if exc.errno in SWAPPED:
                        continue
                    raise os_failure(exc, raw, "list") from None
            if self._walker.protection.covers(found.parts, os.fstat(fd)):
                os.close(fd)
                raise ProtectedPathError(raw)
            return fd, found
        raise ChangedUnderfootError(os.fspath(path))

    def _entries(self, fd: int, parts: tuple[str, ...]) -> list[os.DirEntry[str]]:
        """The directory's entries by name, Sylk's own left out."""
        dev = os.fstat(fd).st_dev
        guard = self._walker.protection
        with os.scandir(fd) as scan:
            entries = sorted(scan, key=lambda e: e.name)
        if not guard:
            return entries
        return [
            e
            for e in entries
            if (dev, e.inode()) not in guard.inodes and not guard.covers((*parts, e.name))
        ]

    def list_dir(self, path: str = ".", limit: int | None = MAX_LIST_ENTRIES) -> list[str]:
        """Names in the directory ``path`` (a directory's with a trailing ``/``), sorted."""
        fd, found = self._open_dir(path)
        try:
            entries = self._entries(fd, found.parts)[:limit]
        finally:
            os.close(fd)
        return [f"{e.name}/" if e.is_dir(follow_symlinks=False) else e.name for e in entries]

    def walk_files(
        self, start: str = ".", keep_dir: Callable[[str, str], bool] | None = None
    ) -> Iterator[str]:
        """Workspace-relative paths of the files under ``start``, in name order.

        Directories are descended by descriptor, never through a link;
        ``keep_dir(rel, name)`` prunes. A link to a file is yielded only when
        it leads to a regular file inside (reading it follows it again, safely).
        """
        fd, found = self._open_dir(start)
        yield from self._walk(fd, found.parts, keep_dir)

    def _walk(
        self, fd: int, parts: tuple[str, ...], keep_dir: Callable[[str, str], bool] | None
    ) -> Iterator[str]:
        try:
            entries = self._entries(fd, parts)
        except OSError:
            os.close(fd)
            return
        try:
            for entry in entries:
                rel = "/".join((*parts, entry.name))
                try:
                    if entry.is_symlink():
                        with contextlib.suppress(WorkspaceError, OSError):
                            st = self.stat(rel)
                            if st is not None and stat.S_ISREG(st.st_mode):
                                yield rel
                    elif entry.is_dir(follow_symlinks=False):
                        if keep_dir is None or keep_dir(rel, entry.name):
                            child = os.open(entry.name, _LIST_FLAGS, dir_fd=fd)
                            yield from self._walk(child, (*parts, entry.name), keep_dir)
                    elif entry.is_file(follow_symlinks=False):
                        yield rel
                except OSError:  # gone, or swapped for a link, since the listing
                    continue
        finally:
            os.close(fd)

    # -- writing ---------------------------------------------------------------------

    def resolve_for_write(self, path: str | os.PathLike[str]) -> Path:
        """Where a write of ``path`` would land: inside, never in ``.git/`` or Sylk's data."""
        _, found = self._locate(path, write=True)
        found.close()
        return self.root.joinpath(*found.parts)

    def write_text(self, path: str | os.PathLike[str], content: str) -> Path:
        """Write atomically (temp file, then rename, both in the file's directory).

        The temp file gets a fresh random name and is created exclusively, without
        following links: a name planted in the repository (say a link
        ``.settings.py.sylk-tmp -> ~/.bashrc``) is never written through.
        Missing directories are made one at a time, each inside and checked.
        """
        data = content.encode("utf-8")
        raw, found = self._locate(path, write=True, create_dirs=True)
        with found:
            if not found.name or (found.st is not None and stat.S_ISDIR(found.st.st_mode)):
                raise WorkspaceError(f"{raw!r} is a directory")
            mode = None
            if found.st is not None:
                if not stat.S_ISREG(found.st.st_mode):
                    raise WorkspaceError(f"{raw!r} is not a regular file")
                if found.st.st_nlink > 1:
                    raise HardLinkError(raw, found.st.st_nlink)
                mode = found.st.st_mode & 0o7777
            self._replace(raw, found, data, mode)
        return self.root.joinpath(*found.parts)

    @staticmethod
    def _replace(raw: str, found: Located, data: bytes, mode: int | None) -> None:
        made = ""
        try:
            for _ in range(16):
                tmp = f".{found.name}.{secrets.token_hex(6)}.sylk-tmp"
                try:  # the umask applies, as for any new file
                    fd = os.open(tmp, _TEMP_FLAGS, 0o666, dir_fd=found.parent)
                except FileExistsError:
                    continue
                made = tmp
                break
            else:
                raise WorkspaceError(f"could not create a temporary file beside {raw!r}")
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                if mode is not None:
                    os.fchmod(out.fileno(), mode)  # an edit keeps the file's permissions
            os.replace(made, found.name, src_dir_fd=found.parent, dst_dir_fd=found.parent)
        except BaseException as exc:
            if made:
                with contextlib.suppress(OSError):
                    os.unlink(made, dir_fd=found.parent)
            if isinstance(exc, OSError):
                raise os_failure(exc, raw, "write") from None
            raise
