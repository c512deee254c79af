"""The app's log file: in the data dir, private to the user, every configured key redacted."""

from __future__ import annotations

import io
import logging
import os
from logging.handlers import RotatingFileHandler
from pathlib import Path

from backend.redaction import RedactingFilter, Redactor

LOG_NAME = "sylk.log"


class PrivateRotatingFile(RotatingFileHandler):
    """A rotating log whose every file, the new one after each rotation too, is 0600."""

    def _open(self) -> io.TextIOWrapper:
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.fchmod(fd, 0o600)  # a file left by an older Sylk may be wider
        stream = open(fd, self.mode, encoding=self.encoding, errors=self.errors)  # noqa: SIM115
        assert isinstance(stream, io.TextIOWrapper)  # text mode ("a")
        return stream


def configure_logging(
    data_dir: Path, redactor: Redactor, level: int = logging.INFO, *, max_bytes: int = 2_000_000
) -> Path:
    path = data_dir / LOG_NAME
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "sylk", False):
            root.removeHandler(handler)
            handler.close()
    handler = PrivateRotatingFile(path, maxBytes=max_bytes, backupCount=2, encoding="utf-8")
    handler.sylk = True  # type: ignore[attr-defined]
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactingFilter(redactor))
    root.addHandler(handler)
    root.setLevel(level)
    return path
