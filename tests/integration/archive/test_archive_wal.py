"""WAL mode, synchronous=FULL and the busy timeout are really in force, against a
second real process that takes SQLite's write lock."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Connection, Engine, event
from sqlalchemy.exc import OperationalError

import backend.archive.store as archive_module
from backend.archive.store import BUSY_TIMEOUT_MS, DB_NAME, Archive
from backend.messages import Message, MessageType
from tests.support.polling import HANG, finishes, until_sync

REPO_ROOT = Path(__file__).resolve().parents[3]
CHILD = Path(__file__).with_name("archive_child.py")


def _message(session_id: str, n: int) -> Message[dict[str, Any]]:
    return Message[dict[str, Any]](
        session_id=session_id,
        source="user",
        type=MessageType.USER_INPUT,
        payload={"text": f"message {n}"},
    )


def _child(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(CHILD), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )


@contextmanager
def write_lock_held(db: Path) -> Iterator[Callable[[], None]]:
    """Another process holds the database's write lock until the yielded ``release``
    is called (or the block ends); ``release`` returns once the lock is gone."""
    proc = _child("hold-lock", str(db))
    assert proc.stdout is not None and proc.stdin is not None
    stdin, stdout = proc.stdin, proc.stdout

    def release() -> None:
        if not stdin.closed:
            stdin.write("release\n")
            stdin.close()
            assert stdout.readline().strip() == "released"

    try:
        assert stdout.readline().strip() == "locked"
        yield release
        release()
    finally:
        if not stdin.closed:
            stdin.close()
        proc.wait(timeout=HANG)


def test_wal_synchronous_full_and_busy_timeout_on_the_writer(data_dir: Path) -> None:
    archive = Archive(data_dir)
    try:

        def pragmas(conn: Connection) -> tuple[Any, ...]:
            return tuple(
                conn.exec_driver_sql(f"PRAGMA {name}").scalar()
                for name in ("journal_mode", "synchronous", "busy_timeout")
            )

        assert archive.write(pragmas) == ("wal", 2, BUSY_TIMEOUT_MS)  # 2 = FULL
        assert BUSY_TIMEOUT_MS >= 1000
        archive.append_messages([_message("s", 0)])
        # While open, the WAL sidecar exists and the file itself says WAL.
        assert Path(f"{data_dir / DB_NAME}-wal").exists()
    finally:
        archive.close()
    header = (data_dir / DB_NAME).read_bytes()[:100]
    assert header[18:20] == b"\x02\x02"  # file format: WAL for reading and writing
    conn = sqlite3.connect(data_dir / DB_NAME)
    try:  # any other connection is in WAL mode too: it is a property of the file
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()


def test_a_brief_write_lock_in_another_process_only_delays_our_writes(data_dir: Path) -> None:
    archive = Archive(data_dir)
    try:
        archive.append_messages([_message("s", 0)])
        asking = threading.Event()

        def on_statement(conn: Any, cursor: Any, statement: str, *rest: Any) -> None:
            if statement == "BEGIN IMMEDIATE":  # our writer asks for the write lock
                asking.set()

        with (
            write_lock_held(data_dir / DB_NAME) as release,
            ThreadPoolExecutor(1) as pool,
        ):
            # WAL: readers are not blocked by the other process's write lock (which
            # stays held until we release it; a blocked read would fail after the
            # busy timeout).
            assert len(archive.load_transcript("s")) == 1
            # Writers wait (busy timeout) instead of failing.
            event.listen(Engine, "before_cursor_execute", on_statement)
            try:
                write = pool.submit(archive.append_messages, [_message("s", 1)])
                until_sync(asking.is_set, what="our write to ask for the lock")
            finally:
                event.remove(Engine, "before_cursor_execute", on_statement)
            assert len(archive.load_transcript("s")) == 1  # not in while the lock is held
            release()
            write.result(timeout=HANG)  # it waited and then landed: no "database is locked"
            archive.append_messages([_message("s", n) for n in range(2, 10)])
        assert len(archive.load_transcript("s")) == 10
        assert archive.integrity_check() == "ok"
    finally:
        archive.close()


def test_two_processes_writing_at_once_both_land(data_dir: Path) -> None:
    Archive(data_dir).close()
    other = _child("write", str(data_dir), "7", "7")
    try:
        assert other.stdout is not None and other.stdin is not None
        assert other.stdout.readline().strip() == "imported"
        other.stdin.write("go\n")
        other.stdin.flush()
        assert other.stdout.readline().strip() == "open"
        archive = Archive(data_dir)
        try:
            mine = [_message("mine", n) for n in range(300)]
            for m in mine:
                archive.append_messages([m])
            assert [m.id for m in archive.load_transcript("mine")] == [m.id for m in mine]
        finally:
            archive.close()
    finally:
        os.kill(other.pid, signal.SIGKILL)
        out, _ = other.communicate(timeout=10)
    acked = [line for line in out.splitlines() if line.startswith("r007-")]
    assert acked, "the other process wrote nothing while we did"
    archive = Archive(data_dir)
    try:
        theirs: set[str] = set()
        for n in range(3):
            theirs.update(m.id for m in archive.load_transcript(f"crash-session-{n}"))
        assert set(acked) <= theirs
        assert archive.integrity_check() == "ok"
    finally:
        archive.close()


async def test_a_lock_held_past_the_busy_timeout_fails_the_write_instead_of_hanging(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If BEGIN IMMEDIATE itself gives up (database is locked), the waiting
    writes must fail with that error, not wait forever."""
    monkeypatch.setattr(archive_module, "BUSY_TIMEOUT_MS", 200)
    archive = Archive(data_dir)
    try:
        with write_lock_held(data_dir / DB_NAME) as release:  # held until released
            with pytest.raises(OperationalError, match="locked"):
                await finishes(
                    archive.aappend_messages([_message("s", 0)]), what="the busy timeout"
                )
            await asyncio.to_thread(release)
        # Once the lock is gone, writing works again.
        await finishes(archive.aappend_messages([_message("s", 1)]), what="the write")
        assert len(archive.load_transcript("s")) == 1
    finally:
        await asyncio.to_thread(archive.close)
