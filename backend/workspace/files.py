"""File access that never leaves a session's workspace.

Every path is resolved to its real location (symlinks followed, ``..``
collapsed) before it is read, listed or written; a path whose real location is
outside the workspace root is refused with a typed error, whatever the
spelling that led there.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path
from typing import BinaryIO

from backend.errors import ErrorKind, SylkError

MAX_READ_BYTES = 256 * 1024
MAX_PATH_BYTES = 4096  # Linux's PATH_MAX
MAX_NAME_BYTES = 255  # and NAME_MAX
BINARY_SNIFF_BYTES = 8 * 1024  # a NUL in the first 8 KiB: not text
MAX_LIST_ENTRIES = 500


class WorkspaceError(SylkError):
    """A file operation inside the workspace failed."""

    error_kind = ErrorKind.INVALID

    def failure_word(self) -> str:
        return "workspace"


class PathOutsideWorkspaceError(WorkspaceError):
    error_kind = ErrorKind.DENIED

    def failure_word(self) -> str:
        return "outside_workspace"

    def __init__(self, path: str, root: Path) -> None:
        super().__init__(
            f"{path!r} resolves outside the workspace {root}",
            help_hint="agents may only touch files inside their session's workspace",
        )
        self.path = path


class GitInternalsError(WorkspaceError):
    """A write into ``.git/``: a hook or ``core.fsmonitor`` there would run as the user."""

    error_kind = ErrorKind.DENIED

    def __init__(self, path: str) -> None:
        super().__init__(
            f"{path!r} is inside .git/; agents may not write there",
            help_hint="hooks and git config run code as you: change them yourself",
        )
        self.path = path

    def failure_word(self) -> str:
        return "git_internals"


class BinaryFileError(WorkspaceError):
    """A file that is not text (it holds NUL bytes) was asked for as text."""

    def __init__(self, path: str, size: int) -> None:
        super().__init__(
            f"{path!r} is a binary file ({size} bytes); it cannot be read as text",
            help_hint="read a text file, or list the directory to see what it holds",
        )
        self.path = path

    def failure_word(self) -> str:
        return "binary_file"


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
    def __init__(self, root: Path) -> None:
        self.root = root.resolve(strict=True)

    def resolve(self, path: str | os.PathLike[str]) -> Path:
        raw = os.fspath(path)
        if "\x00" in raw:
            raise WorkspaceError(f"path {raw!r} contains a NUL byte")
        candidate = Path(raw).expanduser()
        if not candidate.is_absolute():
            candidate = self.root / candidate
        if len(os.fsencode(candidate)) > MAX_PATH_BYTES or any(
            len(os.fsencode(part)) > MAX_NAME_BYTES for part in candidate.parts
        ):
            raise WorkspaceError(
                f"path {raw[:80]!r}... is too long",
                help_hint=f"names are at most {MAX_NAME_BYTES} bytes, paths {MAX_PATH_BYTES}",
            )
        try:
            real = candidate.resolve(strict=False)
        except RuntimeError:  # Python's word for a symlink loop
            raise WorkspaceError(
                f"{raw!r} is a symlink loop", help_hint="it points back at itself"
            ) from None
        except OSError as exc:
            raise WorkspaceError(f"{raw!r} cannot be resolved: {exc.strerror}") from None
        if real != self.root and self.root not in real.parents:
            raise PathOutsideWorkspaceError(raw, self.root)
        return real

    def relative(self, real: Path) -> str:
        return real.relative_to(self.root).as_posix() or "."

    def read_text(
        self, path: str, *, start_line: int | None = None, end_line: int | None = None
    ) -> str:
        real = self.resolve(path)
        if not real.is_file():
            raise WorkspaceError(f"{path!r} is not a file in the workspace")
        size = real.stat().st_size
        if size > MAX_READ_BYTES and start_line is None:
            raise WorkspaceError(
                f"{path!r} is {size} bytes; read it by line range",
                help_hint="pass start_line and end_line",
            )
        with real.open("rb") as raw:
            if b"\x00" in raw.read(BINARY_SNIFF_BYTES):
                raise BinaryFileError(path, size)
            raw.seek(0)
            if start_line is None and end_line is None:
                return raw.read().decode("utf-8", errors="replace")
            return _line_range(raw, path, max(1, start_line or 1), end_line)

    def list_dir(self, path: str = ".") -> list[str]:
        real = self.resolve(path)
        if not real.is_dir():
            raise WorkspaceError(f"{path!r} is not a directory in the workspace")
        entries = sorted(real.iterdir(), key=lambda p: p.name)[:MAX_LIST_ENTRIES]
        return [f"{e.name}/" if e.is_dir() else e.name for e in entries]

    def resolve_for_write(self, path: str) -> Path:
        """Where a write of ``path`` would land: inside the workspace, never in ``.git/``."""
        real = self.resolve(path)
        if ".git" in real.relative_to(self.root).parts:
            raise GitInternalsError(path)
        return real

    def write_text(self, path: str, content: str) -> Path:
        """Write atomically (temp file, then rename) inside the workspace.

        The temp file gets a fresh random name and is created exclusively, without
        following links: a name planted in the repository (say a link
        ``.settings.py.sylk-tmp -> ~/.bashrc``) is never written through.
        """
        real = self.resolve_for_write(path)
        real.parent.mkdir(parents=True, exist_ok=True)
        self.resolve(real.parent)  # the directories made must be inside too
        mode = real.stat().st_mode & 0o7777 if real.is_file() else None
        data = content.encode("utf-8")
        for _ in range(16):
            tmp = real.with_name(f".{real.name}.{secrets.token_hex(6)}.sylk-tmp")
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            try:
                fd = os.open(tmp, flags, 0o666)  # the umask applies, as for any new file
            except FileExistsError:
                continue
            break
        else:
            raise WorkspaceError(f"could not create a temporary file beside {path!r}")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                if mode is not None:
                    os.fchmod(out.fileno(), mode)  # an edit keeps the file's permissions
            os.replace(tmp, real)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return real
