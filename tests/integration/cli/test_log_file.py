"""The log file stays private to the user, the files written after a rotation too."""

from __future__ import annotations

import logging
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from backend.redaction import Redactor
from sylk_tui.logs import LOG_NAME, configure_logging


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        if handler not in handlers:
            root.removeHandler(handler)
            handler.close()
    root.setLevel(level)


def test_every_log_file_is_0600_after_rotation(tmp_path: Path, restore_logging: None) -> None:
    (tmp_path / LOG_NAME).write_text("left by an older Sylk\n")
    (tmp_path / LOG_NAME).chmod(0o644)
    path = configure_logging(tmp_path, Redactor(["sk-secret-123456"]), max_bytes=2_000)
    log = logging.getLogger("sylk.test")
    for n in range(100):
        log.info("line %d with sk-secret-123456 in it", n)
    files = sorted(tmp_path.glob(f"{LOG_NAME}*"))
    assert [f.name for f in files] == [LOG_NAME, f"{LOG_NAME}.1", f"{LOG_NAME}.2"]  # rotated
    assert {stat.S_IMODE(f.stat().st_mode) for f in files} == {0o600}
    assert path == tmp_path / LOG_NAME
    assert not any("sk-secret-123456" in f.read_text() for f in files)
