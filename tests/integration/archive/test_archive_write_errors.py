"""A write the storage refuses is a typed ArchiveWriteError naming the file, what was
not stored and what to do; the writer serves on and nothing half-written remains.

SQLite is made to refuse for real: ``PRAGMA max_page_count`` on the writer's connection
makes it report "database or disk is full", ``PRAGMA query_only`` "attempt to write a
readonly database".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from backend.archive.store import DB_NAME, Archive
from backend.errors import ArchiveWriteError, ErrorKind
from backend.messages import Message, MessageType


def message(text: str) -> Message[dict[str, Any]]:
    return Message[dict[str, Any]](
        session_id="s1", source="user", target="guide", type=MessageType.USER_INPUT,
        payload={"text": text},
    )  # fmt: skip


def pragma(archive: Archive, statement: str) -> None:
    archive.write(lambda conn: conn.exec_driver_sql(f"PRAGMA {statement}"))


@pytest.mark.parametrize(
    ("refuse", "allow", "reason", "said"),
    [
        ("max_page_count={pages}", "max_page_count=1073741823", "full", "the disk is full"),
        ("query_only=ON", None, "read_only", "it is read-only"),
    ],
)
async def test_a_refused_write_is_typed_and_the_writer_serves_on(
    tmp_path: Path, refuse: str, allow: str | None, reason: str, said: str
) -> None:
    archive = Archive(tmp_path)
    try:
        archive.append_messages([message("kept")])
        pages = archive.read(lambda conn: conn.exec_driver_sql("PRAGMA page_count").scalar())
        pragma(archive, refuse.format(pages=pages))
        unsaved = [message("x" * 200_000), message("second")]
        with pytest.raises(ArchiveWriteError) as refused:
            await archive.aappend_messages(unsaved)
        error = refused.value
        assert error.reason == reason and error.error_kind is ErrorKind.CONFLICT
        assert error.path == tmp_path / DB_NAME and error.unsaved == tuple(unsaved)
        assert f"cannot write the archive {tmp_path / DB_NAME}: {said}" in str(error)
        assert str(tmp_path) in error.help_hint
        with pytest.raises(ArchiveWriteError):
            archive.append_messages([message("y" * 200_000)])
        assert archive.transcript_counts() == {"s1": 1}  # nothing half-written

        if allow is None:  # a query-only connection stays so (it cannot lift it itself)
            return
        pragma(archive, allow)
        await archive.aappend_messages(unsaved)  # the cause gone, the same write succeeds
        assert archive.transcript_counts() == {"s1": 3}
        assert archive.integrity_check() == "ok"
    finally:
        archive.close()


def test_a_data_dir_that_cannot_be_written_is_typed(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(Exception) as raised:
        Archive(blocker / "data")  # its parent is a file: ENOTDIR, not a storage refusal
    assert not isinstance(raised.value, ArchiveWriteError)
