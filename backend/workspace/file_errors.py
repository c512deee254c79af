"""The typed errors of workspace file operations.

Each says what went wrong in words a model or a user can act on, and carries a
stable ``failure_word`` (the envelope's ``details.reason``). An ``OSError`` met
while reading or writing becomes one of these through :func:`os_failure`, so a
full disk or a read-only filesystem is an answer, never a traceback.
"""

from __future__ import annotations

import errno

from backend.errors import ErrorKind, SylkError


class WorkspaceError(SylkError):
    """A file operation inside the workspace failed."""

    error_kind = ErrorKind.INVALID

    def failure_word(self) -> str:
        return "workspace"


class PathOutsideWorkspaceError(WorkspaceError):
    error_kind = ErrorKind.DENIED

    def failure_word(self) -> str:
        return "outside_workspace"

    def __init__(self, path: str, root: object) -> None:
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


class ProtectedPathError(WorkspaceError):
    """Sylk's own config, archive or logs: an agent never reads, lists or writes them."""

    error_kind = ErrorKind.DENIED

    def __init__(self, path: str) -> None:
        super().__init__(
            f"{path!r} is Sylk's own data (its config, archive or logs); agents may not touch it",
            help_hint="it holds your API keys and every session's history",
        )
        self.path = path

    def failure_word(self) -> str:
        return "sylk_private"


class HardLinkError(WorkspaceError):
    """A file with more than one name: its other name may be outside the workspace."""

    error_kind = ErrorKind.DENIED

    def __init__(self, path: str, links: int) -> None:
        super().__init__(
            f"{path!r} has {links} names (hard links); its other name may be outside the "
            "workspace, so it is neither read nor written",
            help_hint="copy the file if you need its content here (cp, not ln)",
        )
        self.path = path

    def failure_word(self) -> str:
        return "hard_link"


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


class NotAFileError(WorkspaceError):
    """The path names nothing, or something that is not a regular file."""

    error_kind = ErrorKind.NOT_FOUND

    def __init__(self, path: str, what: str = "a file") -> None:
        super().__init__(f"{path!r} is not {what} in the workspace")
        self.path = path

    def failure_word(self) -> str:
        return "not_found"


class FileTooLargeError(WorkspaceError):
    """A whole read of a file over the cap; a line range (or a smaller file) is the way."""

    def __init__(self, path: str, size: int, limit: int) -> None:
        super().__init__(
            f"{path!r} is {size} bytes; read it by line range",
            help_hint=f"pass start_line and end_line (a whole read is capped at {limit} bytes)",
        )
        self.path = path
        self.size = size

    def failure_word(self) -> str:
        return "too_large"


class SymlinkLoopError(WorkspaceError):
    def __init__(self, path: str) -> None:
        super().__init__(
            f"{path!r} is a symlink loop",
            help_hint="it points back at itself, or through more than 40 links",
        )

    def failure_word(self) -> str:
        return "symlink_loop"


class ChangedUnderfootError(WorkspaceError):
    """The path kept changing while it was resolved (something swaps it in a loop)."""

    error_kind = ErrorKind.CONFLICT

    def __init__(self, path: str) -> None:
        super().__init__(
            f"{path!r} kept changing while Sylk resolved it",
            help_hint="another process is renaming or replacing it; try again when it settles",
        )

    def failure_word(self) -> str:
        return "changed_underfoot"


class DiskFullError(WorkspaceError):
    error_kind = ErrorKind.CONFLICT

    def failure_word(self) -> str:
        return "disk_full"


class ReadOnlyFilesystemError(WorkspaceError):
    error_kind = ErrorKind.CONFLICT

    def failure_word(self) -> str:
        return "read_only_filesystem"


class FilePermissionError(WorkspaceError):
    error_kind = ErrorKind.DENIED

    def failure_word(self) -> str:
        return "permission_denied"


def os_failure(exc: OSError, path: str, action: str) -> WorkspaceError:
    """What an ``OSError`` met while ``action``-ing ``path`` means, as a typed error.

    Nothing was changed when one of these is raised: a write goes to a temp file
    first, which is removed, so the old content is still there.
    """
    code = exc.errno
    reason = exc.strerror or str(exc)
    if code in (errno.ENOSPC, errno.EDQUOT):
        return DiskFullError(
            f"cannot {action} {path!r}: the disk (or your quota) is full",
            help_hint="free some space; the file was left as it was",
        )
    if code == errno.EROFS:
        return ReadOnlyFilesystemError(
            f"cannot {action} {path!r}: the filesystem is mounted read-only",
            help_hint="the workspace cannot be changed here; the file was left as it was",
        )
    if code in (errno.EACCES, errno.EPERM):
        return FilePermissionError(
            f"cannot {action} {path!r}: permission denied",
            help_hint="its permissions (or an immutable flag) forbid it; change them yourself",
        )
    if code == errno.ENAMETOOLONG:
        return WorkspaceError(f"cannot {action} {path[:80]!r}: a name is too long")
    if code == errno.ELOOP:
        return SymlinkLoopError(path)
    if code in (errno.ENOENT, errno.ENOTDIR):
        return NotAFileError(path)
    if code == errno.EISDIR:
        return WorkspaceError(f"{path!r} is a directory")
    return WorkspaceError(f"cannot {action} {path!r}: {reason}")
