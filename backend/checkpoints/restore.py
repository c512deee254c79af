"""Putting files back as a checkpoint had them, without ever leaving the workspace.

Every path is reached from a file descriptor of the workspace root, one directory
at a time, each opened with ``O_NOFOLLOW``: a directory swapped for a symlink (to
``~`` or ``/etc``) on the way is refused, never followed, and there is no window
between a check and the use. Files are written to a fresh, exclusively created
temporary name and renamed over the target; links are recreated as links;
deletions unlink the entry itself. ``.git/`` and Sylk's protected paths are never
touched (they are never in a checkpoint either).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from backend.checkpoints.git_process import CheckpointError
from backend.errors import ErrorKind

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class RestoreError(CheckpointError):
    """A path could not be restored safely; ``done`` names what was restored before it."""

    error_kind = ErrorKind.CONFLICT

    def __init__(self, path: str, reason: str, done: list[str]) -> None:
        hint = f"restored before this: {', '.join(done)}" if done else "nothing was changed"
        super().__init__(f"cannot restore {path!r}: {reason}", help_hint=hint)
        self.path = path
        self.done = done

    def failure_word(self) -> str:
        return "restore_refused"


@dataclass(frozen=True)
class Restoration:
    """Make ``path`` hold ``content`` with git ``mode`` (100644, 100755, 120000), or
    delete it (``mode`` None)."""

    path: str
    mode: str | None
    content: bytes = b""


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class _Walker:
    def __init__(self, root: Path, protected: tuple[str, ...]) -> None:
        self.root_fd = os.open(root, _DIR_FLAGS)
        self.protected = protected
        self.done: list[str] = []

    def close(self) -> None:
        os.close(self.root_fd)

    def refuse(self, path: str, reason: str) -> RestoreError:
        return RestoreError(path, reason, list(self.done))

    def check(self, path: str) -> list[str]:
        parts = path.split("/")
        if not path or path.startswith("/") or any(p in ("", ".", "..", ".git") for p in parts):
            raise self.refuse(path, "not a path a checkpoint may hold")
        if any(path == p or path.startswith(p + "/") for p in self.protected):
            raise self.refuse(path, "it is one of Sylk's protected paths")
        return parts

    def parent(self, path: str, parts: list[str], *, create: bool) -> int | None:
        """An fd of ``path``'s directory (None if it is gone and ``create`` is off)."""
        fd = os.dup(self.root_fd)
        try:
            for n, part in enumerate(parts[:-1]):
                try:
                    child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        os.close(fd)
                        return None
                    os.mkdir(part, 0o777, dir_fd=fd)
                    child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                        where = "/".join(parts[: n + 1])
                        raise self.refuse(
                            path, f"{where!r} is a symlink or a file now; not followed"
                        ) from None
                    raise
                os.close(fd)
                fd = child
        except BaseException:
            with contextlib.suppress(OSError):
                os.close(fd)
            raise
        return fd

    def delete(self, item: Restoration) -> None:
        parts = self.check(item.path)
        fd = self.parent(item.path, parts, create=False)
        if fd is None:
            return
        try:
            os.unlink(parts[-1], dir_fd=fd)
        except FileNotFoundError:
            pass
        except IsADirectoryError:
            raise self.refuse(item.path, "a directory is there now") from None
        finally:
            os.close(fd)
        self.done.append(item.path)

    def prune(self, path: str, keep: set[str]) -> None:
        """Remove the directories above ``path`` that are empty now and not kept."""
        parts = path.split("/")[:-1]
        while parts:
            where = "/".join(parts)
            if where in keep:
                return
            fd = self.parent(where, parts, create=False)
            if fd is None:
                return
            try:
                os.rmdir(parts[-1], dir_fd=fd)
            except OSError:
                return  # not empty (or not ours to remove): stop here
            finally:
                os.close(fd)
            parts.pop()

    def write(self, item: Restoration) -> None:
        parts = self.check(item.path)
        fd = self.parent(item.path, parts, create=True)
        assert fd is not None
        name = parts[-1]
        try:
            perms = self._make_room(fd, item.path, name)
            tmp = f".{name[:200]}.{secrets.token_hex(6)}.sylk-undo"
            if item.mode == "120000":
                os.symlink(os.fsdecode(item.content), tmp, dir_fd=fd)
            else:
                out = os.open(tmp, _NEW_FILE, 0o600, dir_fd=fd)
                try:
                    with os.fdopen(out, "wb") as stream:
                        stream.write(item.content)
                        execute = item.mode == "100755"
                        bits = (perms & ~0o111) | ((0o111 & ~_umask()) if execute else 0)
                        os.fchmod(stream.fileno(), bits)
                except BaseException:
                    with contextlib.suppress(OSError):
                        os.unlink(tmp, dir_fd=fd)
                    raise
            try:
                os.rename(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=fd)
                raise self.refuse(item.path, exc.strerror or str(exc)) from None
        finally:
            os.close(fd)
        self.done.append(item.path)

    def _make_room(self, fd: int, path: str, name: str) -> int:
        """The permission bits to write with; an empty directory in the way is removed."""
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return 0o666 & ~_umask()
        if stat.S_ISDIR(info.st_mode):
            try:
                os.rmdir(name, dir_fd=fd)
            except OSError:
                raise self.refuse(path, "a directory with files in it is there now") from None
            return 0o666 & ~_umask()
        return stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else 0o666 & ~_umask()


def read_file(root: Path, path: str, protected: tuple[str, ...] = ()) -> bytes | None:
    """``path``'s bytes as the workspace holds them now, reached the same careful way
    (no link followed on the way or at the end); None when it is not there."""
    walker = _Walker(root, protected)
    try:
        parts = walker.check(path)
        try:
            fd = walker.parent(path, parts, create=False)
        except RestoreError:
            return None  # a link or a file where a directory was: not the file we wrote
        if fd is None:
            return None
        try:
            opened = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
        except OSError:
            return None
        finally:
            os.close(fd)
        with os.fdopen(opened, "rb") as stream:
            return stream.read() if stat.S_ISREG(os.fstat(stream.fileno()).st_mode) else None
    finally:
        walker.close()


def restore(
    root: Path,
    items: Iterable[Restoration],
    *,
    keep_dirs: set[str],
    protected: tuple[str, ...] = (),
) -> list[str]:
    """Apply ``items`` (deletions first, deepest first; then writes); the paths done.

    ``keep_dirs`` are the directories the target state has: a directory emptied by
    a deletion and not among them is removed (the turn had made it).
    """
    items = list(items)
    walker = _Walker(root, protected)
    try:
        gone = sorted((i for i in items if i.mode is None), key=lambda i: -i.path.count("/"))
        for item in gone:
            walker.delete(item)
        for item in gone:
            walker.prune(item.path, keep_dirs)
        for item in sorted((i for i in items if i.mode is not None), key=lambda i: i.path):
            walker.write(item)
        return walker.done
    finally:
        walker.close()
