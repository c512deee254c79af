"""Child processes for the archive integration tests (run as scripts, never imported by pytest).

``write DATA_DIR ROUND SEED``
    Imports the project, prints ``imported``, waits for a ``go`` line on stdin
    (so the parent can pre-spawn the next child while the current one runs),
    opens the real :class:`~backend.archive.store.Archive`, prints ``open``
    and then appends messages forever: mostly one per transaction, sometimes a
    batch. Every message id is printed, one per line, only after the
    ``append_messages`` call that wrote it has returned (that is, after its
    transaction committed), and stdout is flushed at once. The parent kills it
    with SIGKILL.

``hold-lock DB_PATH``
    Takes SQLite's write lock (``BEGIN IMMEDIATE``) on the database with a raw
    connection, writes a row, prints ``locked``, holds the lock until a
    ``release`` line (or the end of stdin) arrives, commits and prints
    ``released``.
"""

from __future__ import annotations

import random
import sqlite3
import sys
from pathlib import Path
from typing import Any

MAX_MESSAGES = 20_000  # a safety stop, far beyond what a round acknowledges


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def write(data_dir: Path, round_no: int, seed: int) -> int:
    from backend.archive.store import Archive
    from backend.messages import Message, MessageType

    rng = random.Random(seed)
    sessions = [f"crash-session-{n}" for n in range(3)]
    _say("imported")
    if sys.stdin.readline().strip() != "go":
        return 2
    archive = Archive(data_dir)
    _say("open")
    written = 0
    while written < MAX_MESSAGES:
        size = 1 if rng.random() < 0.7 else rng.randint(2, 40)
        batch = [
            Message[dict[str, Any]](
                id=f"r{round_no:03d}-{written + k:06d}",
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
        archive.append_messages(batch)  # returns only after COMMIT
        written += size
        # One write() for the whole batch: a SIGKILL cannot leave half a line
        # that the parent would count (the parent only counts complete lines).
        sys.stdout.write("".join(f"{m.id}\n" for m in batch))
        sys.stdout.flush()
    archive.close()
    _say("done")
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
    if command == "write":
        return write(Path(argv[2]), int(argv[3]), int(argv[4]))
    if command == "hold-lock":
        return hold_lock(Path(argv[2]))
    print(f"unknown command {command!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
