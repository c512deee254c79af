"""Durability under SIGKILL: whatever the archive acknowledged is in the file.

A real child process (``archive_child.py write``) appends messages through
``Archive.append_messages`` and prints each id only after the call returned.
We kill it with SIGKILL at a random moment, many rounds over the same file, so
each round also reopens (and probes) an archive that was just crashed. Set
``SYLK_CRASH_SEED`` to replay a failing run.
"""

from __future__ import annotations

import os
import queue
import random
import shutil
import signal
import sqlite3
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from backend.archive.store import DB_NAME, Archive
from backend.messages import Message, MessageType

REPO_ROOT = Path(__file__).resolve().parents[3]
CHILD = Path(__file__).with_name("archive_child.py")
ROUNDS = 24
READY_TIMEOUT = 30.0


@dataclass
class Child:
    proc: subprocess.Popen[str]
    lines: queue.SimpleQueue[str | None] = field(default_factory=queue.SimpleQueue)
    stderr_path: Path | None = None

    def start_reader(self) -> None:
        def pump() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:  # complete lines only; a torn tail has no "\n"
                if line.endswith("\n"):
                    self.lines.put(line.rstrip("\n"))
            self.lines.put(None)  # EOF

        threading.Thread(target=pump, daemon=True).start()

    def expect(self, word: str, seed: int) -> None:
        line = self.lines.get(timeout=READY_TIMEOUT)
        assert line == word, f"seed={seed}: child said {line!r}, expected {word!r}{self.errors()}"

    def errors(self) -> str:
        if self.stderr_path is None or not self.stderr_path.exists():
            return ""
        return "\n--- child stderr ---\n" + self.stderr_path.read_text()


def spawn(data_dir: Path, round_no: int, seed: int, logs: Path) -> Child:
    stderr_path = logs / f"child-{round_no:03d}.stderr"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    with stderr_path.open("w") as stderr:
        proc = subprocess.Popen(
            [sys.executable, str(CHILD), "write", str(data_dir), str(round_no), str(seed)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            bufsize=1,
            cwd=REPO_ROOT,
            env=env,
        )
    child = Child(proc, stderr_path=stderr_path)
    child.start_reader()
    return child


def stored_ids(db: Path, scratch: Path) -> tuple[str, list[str]]:
    """integrity_check and the transcript ids in commit order, as a reopening Sylk finds them.

    Read from a copy in ``scratch``, opened read-write: recovering a killed
    writer's file (rolling back a hot ``-journal``, rebuilding the WAL index)
    needs write access. A child killed while a brand-new archive switches to
    WAL leaves such a journal, and a ``mode=ro`` connection then fails with
    "attempt to write a readonly database" (SQLITE_READONLY_ROLLBACK). The copy
    also leaves the real file exactly as the killed child left it for the next
    round. ``-shm`` is not copied: it only indexes ``-wal`` and is rebuilt from it.
    """
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir()
    copy = scratch / db.name
    for suffix in ("", "-wal", "-journal"):
        if Path(f"{db}{suffix}").exists():
            shutil.copyfile(f"{db}{suffix}", f"{copy}{suffix}")
    conn = sqlite3.connect(copy, isolation_level=None)
    try:
        check = "\n".join(r[0] for r in conn.execute("PRAGMA integrity_check"))
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "transcript" not in tables:
            return check, []
        return check, [r[0] for r in conn.execute("SELECT id FROM transcript ORDER BY seq")]
    finally:
        conn.close()


@dataclass
class Round:
    """What one child said before it died."""

    acked: list[str] = field(default_factory=list)
    opened: bool = False
    eof: bool = False

    def take(self, line: str | None) -> None:
        if line is None:
            self.eof = True
        elif line == "open":
            self.opened = True
        elif line != "done":
            self.acked.append(line)


def run_round(child: Child, rng: random.Random, seed: int, spawn_next: Callable[[], None]) -> Round:
    """Let the child write, SIGKILL it at a random moment, collect its acknowledgements."""
    child.expect("imported", seed)
    # Kill plan: after a random number of acknowledgements, or after a random
    # delay from "go" (which may land inside open, probe or schema creation).
    by_acks = rng.random() < 0.6
    want_acks = rng.randint(0, 400)
    delay = rng.uniform(0.0, rng.choice((0.012, 0.06, 0.3)))
    assert child.proc.stdin is not None
    child.proc.stdin.write("go\n")
    child.proc.stdin.flush()
    started = time.monotonic()
    spawn_next()  # the next child imports while this one writes
    result = Round()
    if by_acks:
        while not result.eof and not (result.opened and len(result.acked) >= want_acks):
            result.take(child.lines.get(timeout=READY_TIMEOUT))
    else:
        while not result.eof and (left := delay - (time.monotonic() - started)) > 0:
            try:
                result.take(child.lines.get(timeout=left))
            except queue.Empty:
                break
    assert not result.eof, f"seed={seed}: the child ended by itself{child.errors()}"
    os.kill(child.proc.pid, signal.SIGKILL)
    child.proc.wait(timeout=10)
    assert child.proc.returncode == -signal.SIGKILL, f"seed={seed}{child.errors()}"
    while not result.eof:  # every complete line printed before the kill was acknowledged
        result.take(child.lines.get(timeout=10))
    return result


@pytest.mark.slow
def test_acknowledged_writes_survive_sigkill(tmp_path: Path) -> None:
    seed = int(os.environ.get("SYLK_CRASH_SEED", random.randrange(2**32)))
    print(f"SYLK_CRASH_SEED={seed}")
    rng = random.Random(seed)
    data_dir = tmp_path / "data"
    db = data_dir / DB_NAME
    logs = tmp_path / "logs"
    logs.mkdir()
    acked_all: list[str] = []
    early = 0
    children = [spawn(data_dir, 0, rng.randrange(2**32), logs)]

    def spawn_next() -> None:
        if len(children) < ROUNDS:
            children.append(spawn(data_dir, len(children), rng.randrange(2**32), logs))

    try:
        for round_no in range(ROUNDS):
            result = run_round(children[round_no], rng, seed, spawn_next)
            early += not result.opened
            acked_all.extend(result.acked)
            where = f"seed={seed} round={round_no}"
            if not db.exists():
                assert not acked_all, f"{where}: acknowledged writes but no database file"
                continue
            check, ids = stored_ids(db, tmp_path / "check")
            assert check == "ok", f"{where}: integrity_check: {check}"
            present = set(ids)
            missing = [i for i in acked_all if i not in present]
            assert not missing, f"{where}: {len(missing)} acknowledged ids lost: {missing[:5]}"
            # One writer per round: commit order is acknowledgement order.
            this_round = set(result.acked)
            assert [i for i in ids if i in this_round] == result.acked, where
    finally:
        for child in children:
            if child.proc.poll() is None:
                child.proc.kill()
            child.proc.wait(timeout=10)
            if child.proc.stdin is not None:
                child.proc.stdin.close()

    print(f"rounds={ROUNDS} acknowledged={len(acked_all)} killed_before_open={early}")
    assert len(children) == ROUNDS
    assert acked_all, f"seed={seed}: no round acknowledged anything"
    # Finally open the crashed file through the project's own open path.
    archive = Archive(data_dir)
    try:
        assert archive.integrity_check() == "ok"
        stored: list[str] = []
        for n in range(3):
            stored.extend(m.id for m in archive.load_transcript(f"crash-session-{n}"))
        assert set(acked_all) <= set(stored), f"seed={seed}"
        assert len(stored) == len(set(stored)), f"seed={seed}: duplicate ids"
    finally:
        archive.close()


# -- a child killed while a brand-new archive switches to WAL ------------------------


def killed_while_switching_to_wal(db: Path) -> None:
    """The files a first open leaves when SIGKILLed inside its only rollback-journal
    transaction, ``PRAGMA journal_mode=WAL`` on the empty file: page 1 is written,
    the ``-journal`` (a header for a database of 0 pages) is not yet deleted.

    Byte for byte what ``archive_child.py write`` leaves when killed at that
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
    assert stored_ids(db, tmp_path / "check") == ("ok", [])
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
    assert stored_ids(db, tmp_path / "check") == ("ok", [sent[0].id])
