"""Child processes for the archive integration tests (run as scripts, never imported by pytest).

``serve URL``
    A fork server: imports the project once, prints ``imported``, then for each
    ``write ROUND SEED FIFO STDERR`` line on stdin forks a writer (below) whose
    output goes to the named pipe ``FIFO`` and prints ``child PID``; for each
    ``wait PID`` line it reaps that writer and prints ``status PID N`` (``-9`` when
    SIGKILL ended it). Importing takes a fresh interpreter a second or more; a fork,
    milliseconds. What a kill may hit is unchanged: each writer opens (and probes,
    and migrates) the archive itself, as a fresh process would.

A writer opens the real :class:`~backend.archive.store.Archive` at ``URL``
(``sqlite:///…`` or ``postgresql+psycopg://…``), prints ``open`` and then appends
messages forever: mostly one per transaction, sometimes a batch. Every message id is
printed, one per line, only after the ``append_messages`` call that wrote it returned
(that is, after its transaction committed), and stdout is flushed at once. An id
``rRRR-NNNNNN-bSSSSSS.Z`` names its batch (``SSSSSS.Z``: first message, size), so
a reader can tell a batch stored whole from one stored in part. A typed Sylk error
(the database went away) is printed as ``error CLASS REASON`` and the writer goes
on with the next batch; any other exception is a traceback, and the writer ends.
The parent kills it with SIGKILL.

``write DATA_DIR ROUND SEED``
    One writer in a fresh interpreter on ``DATA_DIR``'s SQLite archive: prints
    ``imported``, waits for a ``go`` line on stdin, then writes as above.

``hold-lock DB_PATH``
    Takes SQLite's write lock (``BEGIN IMMEDIATE``) on the database with a raw
    connection, writes a row, prints ``locked``, holds the lock until a
    ``release`` line (or the end of stdin) arrives, commits and prints
    ``released``.
"""

from __future__ import annotations

import os
import random
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

MAX_MESSAGES = 20_000  # a safety stop, far beyond what a round acknowledges
ERROR_PAUSE_S = 0.02


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def write(url: str, round_no: int, seed: int) -> int:
    from backend.archive.store import Archive
    from backend.errors import SylkError
    from backend.messages import Message, MessageType

    rng = random.Random(seed)
    sessions = [f"crash-session-{n}" for n in range(3)]
    archive = Archive(Path.cwd(), url=url)
    _say("open")
    written = 0
    while written < MAX_MESSAGES:
        size = 1 if rng.random() < 0.7 else rng.randint(2, 40)
        batch = [
            Message[dict[str, Any]](
                id=f"r{round_no:03d}-{written + k:06d}-b{written:06d}.{size}",
                session_id=rng.choice(sessions),
                source="user",
                target="guide",
                type=MessageType.USER_INPUT,
                payload={
                    "text": f"round {round_no} message {written + k} " + "x" * rng.randint(0, 300)
                },
            )
            for k in range(size)
        ]
        written += size
        try:
            archive.append_messages(batch)  # returns only after COMMIT
        except SylkError as exc:  # typed: the database is gone for now; try on
            _say(f"error {type(exc).__name__} {(exc.details or {}).get('reason', '-')}")
            time.sleep(ERROR_PAUSE_S)
            continue
        # One write() for the whole batch: a SIGKILL cannot leave half a line
        # that the parent would count (the parent only counts complete lines).
        sys.stdout.write("".join(f"{m.id}\n" for m in batch))
        sys.stdout.flush()
    archive.close()
    _say("done")
    return 0


def serve(url: str) -> int:
    # What every writer needs, imported once, before the forks.
    import backend.archive.store
    import backend.errors
    import backend.messages  # noqa: F401

    if url.startswith("postgresql"):
        import psycopg  # noqa: F401

    _say("imported")
    for line in sys.stdin:
        command, *args = line.split()
        if command == "wait":
            _, status = os.waitpid(int(args[0]), 0)
            _say(f"status {args[0]} {os.waitstatus_to_exitcode(status)}")
            continue
        round_no, seed, fifo, stderr = int(args[0]), int(args[1]), args[2], args[3]
        out = os.open(fifo, os.O_WRONLY)  # before the fork: a writer killed at once
        err = os.open(stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # still ends it
        pid = os.fork()
        if pid == 0:
            os.dup2(out, 1)
            os.dup2(err, 2)
            code = 1
            try:
                code = write(url, round_no, seed)
            except BaseException:
                import traceback

                traceback.print_exc()
            finally:
                os._exit(code)
        os.close(out)
        os.close(err)
        _say(f"child {pid}")
    return 0


def hold_lock(db_path: Path) -> int:
    conn = sqlite3.connect(db_path, isolation_level=None, timeout=10)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute(
        "INSERT INTO schema_meta (key, value) VALUES ('lock-holder', 'x') "
        "ON CONFLICT(key) DO UPDATE SET value = value || 'x'"
    )
    _say("locked")
    for line in sys.stdin:  # the parent says when; end of input releases too
        if line.strip() == "release":
            break
    conn.execute("COMMIT")
    conn.close()
    _say("released")
    return 0


def main(argv: list[str]) -> int:
    command = argv[1]
    if command == "serve":
        return serve(argv[2])
    if command == "write":
        _say("imported")
        if sys.stdin.readline().strip() != "go":
            return 2
        return write(f"sqlite:///{Path(argv[2]) / 'sylk.db'}", int(argv[3]), int(argv[4]))
    if command == "hold-lock":
        return hold_lock(Path(argv[2]))
    print(f"unknown command {command!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
