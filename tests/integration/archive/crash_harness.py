"""What the SIGKILL durability tests share: the fork server that starts writers
(``archive_child.py serve``), what a writer said before it died, and the rows a
reopening Sylk finds, on SQLite and on PostgreSQL, checked for damage."""

from __future__ import annotations

import os
import queue
import shutil
import sqlite3
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[3]
CHILD = Path(__file__).with_name("archive_child.py")
READY_TIMEOUT = 30.0


@dataclass
class Writer:
    """One forked writer: its pid and the complete lines it printed (None: it ended)."""

    pid: int
    stderr_path: Path
    lines: queue.SimpleQueue[str | None] = field(default_factory=queue.SimpleQueue)

    def errors(self) -> str:
        text = self.stderr_path.read_text() if self.stderr_path.exists() else ""
        return f"\n--- writer stderr ---\n{text}" if text else ""


class ForkServer:
    """``archive_child.py serve URL``: imports the project once, forks a writer per round."""

    def __init__(self, url: str, logs: Path) -> None:
        self.logs = logs
        self.proc = subprocess.Popen(
            [sys.executable, str(CHILD), "serve", url],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=(logs / "server.stderr").open("w"), text=True, bufsize=1, cwd=REPO_ROOT,
            env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        )  # fmt: skip
        self._expect("imported")

    def _send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def _expect(self, word: str) -> list[str]:
        assert self.proc.stdout is not None
        said = self.proc.stdout.readline().split()
        log = (self.logs / "server.stderr").read_text()
        assert said[:1] == [word], f"fork server said {said!r}, expected {word!r}\n{log}"
        return said[1:]

    def writer(self, round_no: int, seed: int) -> Writer:
        """Fork a writer; it starts opening the archive at once."""
        fifo = self.logs / f"out-{round_no:03d}"
        os.mkfifo(fifo)
        stderr_path = self.logs / f"writer-{round_no:03d}.stderr"
        lines: queue.SimpleQueue[str | None] = queue.SimpleQueue()

        def pump() -> None:
            with fifo.open() as out:  # EOF once the writer, its only writer end, is gone
                for line in out:  # complete lines only: a torn tail has no "\n"
                    if line.endswith("\n"):
                        lines.put(line.rstrip("\n"))
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        self._send(f"write {round_no} {seed} {fifo} {stderr_path}")
        [pid] = self._expect("child")
        return Writer(int(pid), stderr_path, lines)

    def reap(self, writer: Writer) -> int:
        """The writer's exit code (-9: SIGKILL ended it)."""
        self._send(f"wait {writer.pid}")
        return int(self._expect("status")[1])

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@dataclass
class Round:
    """What one writer said before it died."""

    acked: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    opened: bool = False
    eof: bool = False

    def take(self, line: str | None) -> None:
        if line is None:
            self.eof = True
        elif line == "open":
            self.opened = True
        elif line.startswith("error "):
            self.errors.append(line)
        elif line != "done":
            self.acked.append(line)


@dataclass(frozen=True)
class Row:
    id: str
    text: str
    envelope: str


def stored_rows(url: str, scratch: Path) -> tuple[str, list[Row]]:
    """The database's own damage check ("ok" when none) and the transcript rows in
    commit order, as a reopening Sylk finds them."""
    if url.startswith("sqlite"):
        return _sqlite_rows(Path(url.removeprefix("sqlite:///")), scratch)
    return _postgres_rows(url)


def _sqlite_rows(db: Path, scratch: Path) -> tuple[str, list[Row]]:
    """Read from a copy in ``scratch``, opened read-write: recovering a killed writer's
    file (rolling back a hot ``-journal``, rebuilding the WAL index) needs write access.
    A child killed while a brand-new archive switches to WAL leaves such a journal,
    and a ``mode=ro`` connection then fails with "attempt to write a readonly database"
    (SQLITE_READONLY_ROLLBACK). The copy also leaves the real file exactly as the killed
    child left it for the next round. ``-shm`` is not copied: it only indexes ``-wal``
    and is rebuilt from it."""
    if not db.exists():
        return "ok", []
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
        rows = conn.execute("SELECT id, text, envelope FROM transcript ORDER BY seq")
        return check, [Row(*r) for r in rows]
    finally:
        conn.close()


# amcheck: the heap's tuples (a row per problem) and every B-tree and GIN index of
# the transcript (the check functions raise on damage).
_PG_HEAP_CHECK = "SELECT blkno, offnum, msg FROM verify_heapam('transcript')"
_PG_INDEX_CHECKS = (
    "SELECT bt_index_check(c.oid, true) FROM pg_index i JOIN pg_class c ON c.oid = "
    "i.indexrelid JOIN pg_am a ON a.oid = c.relam WHERE i.indrelid = 'transcript'::regclass "
    "AND a.amname = 'btree'",
    "SELECT gin_index_check(c.oid) FROM pg_index i JOIN pg_class c ON c.oid = "
    "i.indexrelid JOIN pg_am a ON a.oid = c.relam WHERE i.indrelid = 'transcript'::regclass "
    "AND a.amname = 'gin'",
)


def _postgres_rows(url: str) -> tuple[str, list[Row]]:
    import psycopg
    from sqlalchemy import make_url

    where = make_url(url)
    params: dict[str, Any] = {"host": where.query["host"], "user": where.username}
    with psycopg.connect(dbname=where.database, autocommit=True, **params) as conn:
        found = conn.execute("SELECT to_regclass('transcript') IS NOT NULL").fetchone()
        if not (found and found[0]):
            return "ok", []
        conn.execute("CREATE EXTENSION IF NOT EXISTS amcheck")
        problems = [str(r) for r in conn.execute(_PG_HEAP_CHECK)]
        for sql in _PG_INDEX_CHECKS:
            conn.execute(sql).fetchall()  # type: ignore[arg-type]
        rows = conn.execute("SELECT id, text, envelope FROM transcript ORDER BY seq")
        return "\n".join(problems) or "ok", [Row(*r) for r in rows]


def damage(rows: list[Row]) -> list[str]:
    """Rows or batches stored in part: a batch (named by its ids) must be whole, each
    row's text its own and its envelope the same message."""
    import json

    problems: list[str] = []
    batches: dict[str, int] = {}
    for row in rows:
        round_no, number, batch = row.id[1:].split("-")
        key = f"r{round_no}-{batch}"
        batches[key] = batches.get(key, 0) + 1
        doc = json.loads(row.envelope)
        if doc["id"] != row.id or doc["payload"]["text"] != row.text:
            problems.append(f"{row.id}: envelope and columns disagree")
        if not row.text.startswith(f"round {int(round_no)} message {int(number)} "):
            problems.append(f"{row.id}: text {row.text[:40]!r}")
    for key, count in batches.items():
        if count != int(key.rsplit(".", 1)[1]):
            problems.append(f"batch {key}: {count} rows stored")
    return problems
