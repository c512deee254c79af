"""The bearer tokens of ``sylk mcp serve``, kept in the data dir with mode 0600.

One JSON file (``mcp_tokens.json``) maps each token's name to its value. A token is
made on first use (``secrets.token_urlsafe(32)``) and replaced by :meth:`TokenStore.rotate`;
every write goes to a fresh 0600 file renamed over the old one, under a lock, so a
reader sees the old tokens or the new, never half a file. A file that others may read
(or that is not the user's own, or is a symlink) is refused with
:class:`TokenFileError`: a leaked token is a remote shell into the user's sessions.

A running server asks :meth:`TokenStore.identify` on every request; the file is
re-read whenever its inode, size, mode, mtime or ctime changed, so a rotated token is
refused from the next request on, and a file opened up to others shuts everyone out.
Values are compared as SHA-256 digests with :func:`hmac.compare_digest`, against every
token, so timing says nothing of which or how much matched. Nothing here logs a token.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import json
import os
import secrets
import stat
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

from backend.errors import ErrorKind, SylkError

TOKEN_FILE = "mcp_tokens.json"
LOCK_FILE = "mcp_tokens.lock"
PRIVATE = 0o600


class TokenFileError(SylkError):
    """The token file cannot be trusted or read: refused rather than used."""

    error_kind = ErrorKind.DENIED

    def __init__(self, path: Path, reason: str, hint: str) -> None:
        super().__init__(f"refusing the MCP token file {path}: {reason}", help_hint=hint)
        self.path = path


class UnknownTokenError(SylkError):
    """A token name neither ``default`` nor configured under ``[mcp_server.tokens]``."""

    error_kind = ErrorKind.NOT_FOUND

    def __init__(self, name: str, known: Iterable[str]) -> None:
        super().__init__(
            f"no MCP token named {name!r} (known: {', '.join(known)})",
            help_hint="add [mcp_server.tokens.NAME] to the config file",
        )
        self.name = name


def _digest(value: str) -> bytes:
    return hashlib.sha256(value.encode("utf-8", "surrogateescape")).digest()


class TokenStore:
    """The token file in ``data_dir``; see the module docstring."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / TOKEN_FILE
        self._lock_path = data_dir / LOCK_FILE
        self._seen: tuple[int, ...] | None = None
        self._tokens: dict[str, str] = {}
        self._guard = threading.Lock()

    # -- reading ------------------------------------------------------------------------
    def tokens(self) -> dict[str, str]:
        """Name -> value, re-read when the file changed; {} when there is no file yet."""
        try:
            info = os.stat(self.path, follow_symlinks=False)
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise TokenFileError(self.path, exc.strerror or str(exc), "check its folder") from None
        # ctime and mode too: a chmod that opens the file up must be seen at once.
        key = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_mode)
        with self._guard:
            if key != self._seen:
                self._tokens = self._read()
                self._seen = key
            return dict(self._tokens)

    def _read(self) -> dict[str, str]:
        flags = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(self.path, flags)
        except FileNotFoundError:
            return {}
        except OSError as exc:  # ELOOP: a symlink put in its place
            raise TokenFileError(
                self.path, exc.strerror or str(exc), "remove it; `sylk mcp token rotate` makes anew"
            ) from None
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            self._check(info)
            try:
                raw = json.loads(handle.read(1 << 20))
            except (ValueError, UnicodeDecodeError):
                raw = None
        if not isinstance(raw, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and v for k, v in raw.items()
        ):
            raise TokenFileError(
                self.path, "it is not a JSON object of names to tokens",
                "remove it; `sylk mcp token rotate` makes anew",
            )  # fmt: skip
        return dict(raw)

    def _check(self, info: os.stat_result) -> None:
        if not stat.S_ISREG(info.st_mode):
            raise TokenFileError(self.path, "it is not a regular file", "remove it")
        if info.st_uid != os.geteuid():
            raise TokenFileError(
                self.path, f"it belongs to uid {info.st_uid}, not to you", "remove it"
            )
        if info.st_mode & 0o077:
            mode = stat.S_IMODE(info.st_mode)
            raise TokenFileError(
                self.path,
                f"group or others may read or change it (mode {mode:04o}); its tokens may "
                "have leaked",
                f"chmod 600 {self.path}, then `sylk mcp token rotate` each token",
            )

    def identify(self, presented: str) -> str | None:
        """The name of the token ``presented`` is, or None; constant time over all tokens."""
        wanted = _digest(presented)
        found: str | None = None
        for name, value in self.tokens().items():
            if hmac.compare_digest(wanted, _digest(value)) and found is None:
                found = name
        return found

    # -- writing ------------------------------------------------------------------------
    def ensure(self, names: Iterable[str]) -> list[str]:
        """Make the tokens among ``names`` that do not exist yet; returns their names."""
        with self._locked():
            tokens = self._fresh()
            made = [name for name in names if name not in tokens]
            if made:
                tokens.update((name, secrets.token_urlsafe(32)) for name in made)
                self._write(tokens)
        return made

    def value(self, name: str) -> str:
        """Token ``name``'s value, made first if it does not exist yet."""
        self.ensure([name])
        return self.tokens()[name]

    def rotate(self, name: str) -> None:
        """Replace token ``name`` (or make it): the old value is refused from now on."""
        with self._locked():
            tokens = self._fresh()
            tokens[name] = secrets.token_urlsafe(32)
            self._write(tokens)

    def _fresh(self) -> dict[str, str]:
        self._seen = None
        return self.tokens()

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, PRIVATE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _write(self, tokens: dict[str, str]) -> None:
        temporary = self.path.with_name(f".{TOKEN_FILE}.{secrets.token_hex(6)}")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        fd = os.open(temporary, flags, PRIVATE)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                os.fchmod(handle.fileno(), PRIVATE)  # whatever the umask
                json.dump(tokens, handle, indent=1)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                temporary.unlink()
            raise
        self._seen = None
