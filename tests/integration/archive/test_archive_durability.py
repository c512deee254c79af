"""Durability under SIGKILL: whatever the archive acknowledged is in the database,
and nothing is in it half-written; on SQLite and on PostgreSQL.

Writers (``archive_child.py``, forked by one fork server that imported the project
once) append messages through ``Archive.append_messages`` and print each id only
after the call returned. We kill each with SIGKILL at a random moment, many rounds
over the same database, so each round also reopens (and probes, and migrates) an
archive that was just crashed. On PostgreSQL we also SIGKILL the server itself while
a writer writes. Set ``SYLK_CRASH_SEED`` to replay a failing run.
"""

from __future__ import annotations

import os
import queue
import random
import signal
import sqlite3
import struct
import time
from pathlib import Path
from typing import Any

import pytest

from backend.archive.store import DB_NAME, Archive
from backend.messages import Message, MessageType
from tests.integration.archive.crash_harness import (
    READY_TIMEOUT,
    ForkServer,
    Round,
    Writer,
    damage,
    stored_rows,
)
from tests.support.postgres import running_server

ROUNDS = 24


def run_round(server: ForkServer, writer: Writer, rng: random.Random, seed: int) -> Round:
    """Let the writer write, SIGKILL it at a random moment, collect its acknowledgements."""
    # Kill plan: after a random number of acknowledgements, or after a random
    # delay from the fork (which may land inside open, probe or schema creation).
    by_acks = rng.random() < 0.6
    want_acks = rng.randint(0, 400)
    delay = rng.uniform(0.0, rng.choice((0.012, 0.06, 0.3)))
    started = time.monotonic()
    result = Round()
    if by_acks:
        while not result.eof and not (result.opened and len(result.acked) >= want_acks):
            result.take(writer.lines.get(timeout=READY_TIMEOUT))
    else:
        while not result.eof and (left := delay - (time.monotonic() - started)) > 0:
            try:
                result.take(writer.lines.get(timeout=left))
            except queue.Empty:
                break
    assert not result.eof, f"seed={seed}: the writer ended by itself{writer.errors()}"
    os.kill(writer.pid, signal.SIGKILL)
    assert server.reap(writer) == -signal.SIGKILL, f"seed={seed}{writer.errors()}"
    while not result.eof:  # every complete line printed before the kill was acknowledged
        result.take(writer.lines.get(timeout=10))
    return result


def _check(url: str, scratch: Path, acked: list[str], where: str) -> list[str]:
    """Every acknowledged id stored, nothing damaged; the ids in commit order."""
    check, rows = stored_rows(url, scratch)
    assert check == "ok", f"{where}: the database's check: {check}"
    assert not (broken := damage(rows)), f"{where}: stored in part: {broken[:5]}"
    ids = [row.id for row in rows]
    present = set(ids)
    missing = [i for i in acked if i not in present]
    assert not missing, f"{where}: {len(missing)} acknowledged ids lost: {missing[:5]}"
    assert len(present) == len(ids), f"{where}: duplicate ids"
    return ids


def _reopened(url: str, tmp_path: Path, acked: list[str], seed: int) -> None:
    """The crashed database opened through the project's own open path."""
    archive = Archive(tmp_path / "data", url=url)
    try:
        assert archive.integrity_check() == "ok"
        stored: list[str] = []
        for n in range(3):
            stored.extend(m.id for m in archive.load_transcript(f"crash-session-{n}"))
        assert set(acked) <= set(stored), f"seed={seed}"
        assert len(stored) == len(set(stored)), f"seed={seed}: duplicate ids"
    finally:
        archive.close()


@pytest.mark.slow
def test_acknowledged_writes_survive_sigkill(archive_url: str, tmp_path: Path) -> None:
    seed = int(os.environ.get("SYLK_CRASH_SEED", random.randrange(2**32)))
    print(f"SYLK_CRASH_SEED={seed}")
    rng = random.Random(seed)
    logs = tmp_path / "logs"
    logs.mkdir()
    acked_all: list[str] = []
    early = 0
    server = ForkServer(archive_url, logs)
    try:
        for round_no in range(ROUNDS):
            writer = server.writer(round_no, rng.randrange(2**32))
            result = run_round(server, writer, rng, seed)
            where = f"seed={seed} round={round_no}"
            assert not result.errors, f"{where}: {result.errors}{writer.errors()}"
            early += not result.opened
            acked_all.extend(result.acked)
            ids = _check(archive_url, tmp_path / "check", acked_all, where)
            # One writer per round: commit order is acknowledgement order.
            this_round = set(result.acked)
            assert [i for i in ids if i in this_round] == result.acked, where
    finally:
        server.close()
    print(f"rounds={ROUNDS} acknowledged={len(acked_all)} killed_before_open={early}")
    assert acked_all, f"seed={seed}: no round acknowledged anything"
    _reopened(archive_url, tmp_path, acked_all, seed)


@pytest.mark.slow
def test_acknowledged_writes_survive_a_killed_postgres_server(tmp_path: Path) -> None:
    """SIGKILL the postmaster (every backend goes with it) while a writer writes, start
    the server again on the same data folder: every acknowledged write is there (crash
    recovery replays the WAL that COMMIT flushed), the writer was told with a typed
    error, not a traceback, and writes again once the server is back."""
    seed = int(os.environ.get("SYLK_CRASH_SEED", random.randrange(2**32)))
    rng = random.Random(seed)
    logs = tmp_path / "logs"
    logs.mkdir()
    with running_server() as pg:  # a server of this test's own: it is killed
        assert pg.execute("SHOW fsync") == [("on",)]
        assert pg.execute("SHOW synchronous_commit") == [("on",)]
        url = pg.create_database()
        server = ForkServer(url, logs)
        try:
            writer = server.writer(0, rng.randrange(2**32))
            result = Round()
            kill_after = rng.randint(20, 200)
            while not (result.opened and len(result.acked) >= kill_after):
                result.take(writer.lines.get(timeout=READY_TIMEOUT))
                assert not result.eof, f"seed={seed}{writer.errors()}"
            before = len(result.acked)
            pg.kill_and_restart()
            while len(result.acked) < before + 50:  # it writes again on the new server
                result.take(writer.lines.get(timeout=READY_TIMEOUT))
                assert not result.eof, f"seed={seed}: the writer ended{writer.errors()}"
            os.kill(writer.pid, signal.SIGKILL)
            assert server.reap(writer) == -signal.SIGKILL, f"seed={seed}{writer.errors()}"
            while not result.eof:
                result.take(writer.lines.get(timeout=10))
        finally:
            server.close()
        print(f"SYLK_CRASH_SEED={seed} acknowledged={len(result.acked)} "
              f"failed_writes={len(result.errors)}")  # fmt: skip
        assert result.errors, f"seed={seed}: no write failed while the server was down"
        typed = {"error ArchiveWriteError archive_unavailable", "error ArchiveUnavailableError -"}
        assert set(result.errors) <= typed, f"seed={seed}: {result.errors}"
        assert "Traceback" not in writer.errors(), f"seed={seed}: logged{writer.errors()}"
        _check(url, tmp_path / "check", result.acked, f"seed={seed}")
        _reopened(url, tmp_path, result.acked, seed)


# -- a child killed while a brand-new archive switches to WAL ------------------------


def killed_while_switching_to_wal(db: Path) -> None:
    """The files a first open leaves when SIGKILLed inside its only rollback-journal
    transaction, ``PRAGMA journal_mode=WAL`` on the empty file: page 1 is written,
    the ``-journal`` (a header for a database of 0 pages) is not yet deleted.

    Byte for byte what a writer of ``archive_child.py`` leaves when killed at that
    ``unlink`` (the journal's random nonce aside); the random kills of
    :func:`test_acknowledged_writes_survive_sigkill` land there only rarely.
    """
    os.close(os.open(db, os.O_CREAT | os.O_WRONLY, 0o600))
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
    conn.close()
    # magic, record count, checksum nonce, pages before the transaction, sector, page size
    header = bytes.fromhex("d9d505f920a163d7") + struct.pack(">5I", 0, 0x2E8D62C2, 0, 512, 4096)
    Path(f"{db}-journal").write_bytes(header.ljust(512, b"\0"))


def test_a_first_open_killed_while_switching_to_wal(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    db = data_dir / DB_NAME
    killed_while_switching_to_wal(db)
    files = {p.name: p.read_bytes() for p in data_dir.iterdir()}
    assert sorted(files) == [DB_NAME, f"{DB_NAME}-journal"]
    # The journal is hot: only a connection that may write can roll it back.
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        with pytest.raises(sqlite3.OperationalError, match="readonly") as refused:
            conn.execute("SELECT name FROM sqlite_master").fetchall()
        assert refused.value.sqlite_errorname == "SQLITE_READONLY_ROLLBACK"
    finally:
        conn.close()

    # The harness's check reads it as recovered, and leaves it for the next round.
    assert stored_rows(f"sqlite:///{db}", tmp_path / "check") == ("ok", [])
    assert {p.name: p.read_bytes() for p in data_dir.iterdir()} == files

    # What a user sees: Sylk reopens the crashed archive and keeps working.
    sent = [
        Message[dict[str, Any]](
            session_id="s", source="user", type=MessageType.USER_INPUT, payload={"text": "hi"}
        )
    ]
    archive = Archive(data_dir)
    try:
        archive.append_messages(sent)
        assert [m.id for m in archive.load_transcript("s")] == [sent[0].id]
        assert archive.integrity_check() == "ok"
    finally:
        archive.close()
    assert not Path(f"{db}-journal").exists()
    check, rows = stored_rows(f"sqlite:///{db}", tmp_path / "check")
    assert (check, [row.id for row in rows]) == ("ok", [sent[0].id])
