"""The app's log file: in the data dir, with every configured key redacted."""

from __future__ import annotations

import logging
from logging.handlers import RotatingFileHandler
from pathlib import Path

from backend.redaction import RedactingFilter, Redactor

LOG_NAME = "sylk.log"


def configure_logging(data_dir: Path, redactor: Redactor, level: int = logging.INFO) -> Path:
    path = data_dir / LOG_NAME
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "sylk", False):
            root.removeHandler(handler)
            handler.close()
    handler = RotatingFileHandler(path, maxBytes=2_000_000, backupCount=2, encoding="utf-8")
    handler.sylk = True  # type: ignore[attr-defined]
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactingFilter(redactor))
    root.addHandler(handler)
    root.setLevel(level)
    path.chmod(0o600)
    return path
