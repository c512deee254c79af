"""Opening a bad file: a clear typed error, and the file is left exactly as it was.

Every case is a real file on disk. We compare the bytes and mtime of the
database, and the directory listing (no ``-wal``/``-shm`` may appear where none
was), before and after the refused open, through ``Archive`` and through the
``Engine``.
"""

from __future__ import annotations

import os
import random
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from backend.archive.schema import SCHEMA_VERSION
from backend.archive.store import DB_NAME, Archive
from backend.engine import Engine, EngineConfig
from backend.errors import ArchiveCorruptError, ArchiveError, ArchiveVersionError
from backend.messages import Message, MessageType

Builder = Callable[[Path], None]


def _message(session_id: str, n: int, text: str = "") -> Message[dict[str, Any]]:
    return Message[dict[str, Any]](
        session_id=session_id,
        source="user",
        target="guide",
        type=MessageType.USER_INPUT,
        payload={"text": text or f"message {n}"},
    )


# -- bad files -------------------------------------------------------------------


def random_bytes(db: Path) -> None:
    db.write_bytes(random.Random(20240601).randbytes(64 * 1024))


def _foreign(db: Path, *, wal: bool, app_id: int = 0) -> None:
    conn = sqlite3.connect(db)
    if wal:
        conn.execute("PRAGMA journal_mode=WAL")
    if app_id:
        conn.execute(f"PRAGMA application_id={app_id}")
        # Even a table of the same name does not make it ours.
        conn.execute("CREATE TABLE schema_meta (key TEXT PRIMARY KEY, value TEXT)")
        conn.execute("INSERT INTO schema_meta VALUES ('version', '1')")
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    conn.executemany("INSERT INTO notes (body) VALUES (?)", [(f"note {n}",) for n in range(50)])
    conn.commit()
    conn.close()  # the last connection: WAL checkpointed, -wal/-shm removed


def foreign_db(db: Path) -> None:
    _foreign(db, wal=False)


def foreign_db_wal(db: Path) -> None:
    _foreign(db, wal=True)


def foreign_app_id(db: Path) -> None:
    _foreign(db, wal=False, app_id=0x0F055112)


def _real_archive(db: Path, messages: int) -> None:
    archive = Archive(db.parent)
    for start in range(0, messages, 500):
        archive.append_messages(
            _message(f"s{n % 7}", n, "payload " * 40) for n in range(start, start + 500)
        )
    archive.close()
    assert not Path(f"{db}-wal").exists()


def newer_version(db: Path) -> None:
    _real_archive(db, 10)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE schema_meta SET value = ? WHERE key = 'version'", (SCHEMA_VERSION + 1,))
    conn.commit()
    conn.close()


def damaged_page(db: Path) -> None:
    _real_archive(db, 3000)
    page_size = 4096
    pages = db.stat().st_size // page_size
    assert pages > 100
    with db.open("r+b") as f:  # one whole page in the middle: not a b-tree page any more
        f.seek((pages // 2) * page_size)
        f.write(b"\xa5" * page_size)


# name -> (make the file, the error expected, a regex its message matches)
CASES: dict[str, tuple[Builder, type[ArchiveError], str]] = {
    "random-bytes": (random_bytes, ArchiveCorruptError, "unreadable"),
    "foreign-sqlite": (foreign_db, ArchiveCorruptError, "not a Sylk archive"),
    "foreign-sqlite-wal": (foreign_db_wal, ArchiveCorruptError, "not a Sylk archive"),
    "foreign-application-id": (foreign_app_id, ArchiveCorruptError, "not a Sylk archive"),
    "newer-version": (newer_version, ArchiveVersionError, f"schema version {SCHEMA_VERSION + 1}"),
    "damaged-page": (damaged_page, ArchiveCorruptError, "damaged|unreadable"),
}


def _state(directory: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(directory.iterdir())}


@pytest.fixture(params=list(CASES))
def bad_case(request: pytest.FixtureRequest, data_dir: Path) -> tuple[str, dict[str, Any]]:
    name: str = request.param
    builder, _, _ = CASES[name]
    builder(data_dir / DB_NAME)
    return name, _state(data_dir)


def _open_archive(data_dir: Path, _workspace: Path) -> None:
    Archive(data_dir).close()


def _open_engine(data_dir: Path, workspace: Path) -> None:
    Engine(EngineConfig(data_dir=data_dir, workspace=workspace))


OPENERS = {"archive": _open_archive, "engine": _open_engine}


@pytest.mark.parametrize("opener", list(OPENERS))
def test_bad_file_is_refused_with_a_typed_error_and_left_unchanged(
    bad_case: tuple[str, dict[str, tuple[bytes, int]]],
    opener: str,
    data_dir: Path,
    workspace: Path,
) -> None:
    name, before = bad_case
    _, error, fragment = CASES[name]
    for _attempt in range(2):  # refusing is repeatable: the first try changed nothing
        with pytest.raises(error) as info:
            OPENERS[opener](data_dir, workspace)
        assert type(info.value) is error
        assert re.search(fragment, str(info.value)), str(info.value)
        assert str(data_dir / DB_NAME) in str(info.value)
        assert info.value.help_hint  # tells the user what to do
        after = _state(data_dir)
        assert after[DB_NAME] == before[DB_NAME], "database bytes or mtime changed"


@pytest.mark.parametrize("opener", list(OPENERS))
def test_refused_open_creates_no_wal_or_shm(
    bad_case: tuple[str, dict[str, tuple[bytes, int]]],
    opener: str,
    data_dir: Path,
    workspace: Path,
) -> None:
    _name, before = bad_case
    with pytest.raises(ArchiveError):
        OPENERS[opener](data_dir, workspace)
    assert sorted(_state(data_dir)) == sorted(before)
    assert _state(data_dir) == before


def test_empty_file_is_a_new_archive(data_dir: Path) -> None:
    db = data_dir / DB_NAME
    db.touch()
    archive = Archive(data_dir)
    try:
        sent = [_message("s", n) for n in range(5)]
        archive.append_messages(sent[:1])
        archive.append_messages(sent[1:])
        assert [m.id for m in archive.load_transcript("s")] == [m.id for m in sent]
        assert archive.integrity_check() == "ok"
    finally:
        archive.close()
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT value FROM schema_meta WHERE key='version'").fetchone() == (
            str(SCHEMA_VERSION),
        )
    finally:
        conn.close()
    # ... and it opens again as an existing archive.
    archive = Archive(data_dir)
    try:
        assert len(archive.load_transcript("s")) == 5
    finally:
        archive.close()


async def test_empty_file_through_the_engine(data_dir: Path, workspace: Path) -> None:
    (data_dir / DB_NAME).touch()
    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace))
    try:
        session = await engine.create_session("first")
        assert [s.id for s in engine.list_sessions()] == [session.id]
    finally:
        await engine.aclose()


# -- data directories whose names mean something in a URI -----------------------

URI_NAMES = ["data#1", "data?x=1", "data%41", "data with space"]


@pytest.mark.parametrize("dirname", URI_NAMES)
def test_healthy_archive_in_a_dir_with_uri_characters(tmp_path: Path, dirname: str) -> None:
    base = tmp_path / "base"
    base.mkdir()
    data_dir = base / dirname
    sent = [_message("s", n) for n in range(3)]
    archive = Archive(data_dir)
    try:
        archive.append_messages(sent)
    finally:
        archive.close()
    archive = Archive(data_dir)
    try:
        assert [m.id for m in archive.load_transcript("s")] == [m.id for m in sent]
    finally:
        archive.close()
    # Nothing was created beside the data dir (a URI cut at '#' or '?' would).
    assert sorted(os.listdir(base)) == [dirname]


@pytest.mark.parametrize("dirname", URI_NAMES)
def test_corrupt_archive_in_a_dir_with_uri_characters(tmp_path: Path, dirname: str) -> None:
    base = tmp_path / "base"
    data_dir = base / dirname
    data_dir.mkdir(parents=True)
    random_bytes(data_dir / DB_NAME)
    before = _state(data_dir)
    with pytest.raises(ArchiveCorruptError):
        Archive(data_dir)
    assert _state(data_dir) == before
    assert sorted(os.listdir(base)) == [dirname]
