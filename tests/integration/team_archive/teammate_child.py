"""A teammate's Sylk in a process of its own: on the archive at argv[1] (a database URL),
as user argv[2], it creates a session and promotes a decision, then exits.

Prints the session's id and the entry's id, one a line."""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from backend.archive.store import Archive
from backend.knowledge.chronicle.chronicle import Chronicle
from backend.sessions.models import Session
from backend.sessions.ownership import local_owner


async def main(url: str, user: str) -> None:
    archive = Archive(Path(tempfile.mkdtemp()), url=url)
    try:
        session = Session(name=f"{user} work", workspace="/tmp", owner=local_owner(user))
        archive.save_sessions([session])
        chronicle = Chronicle(archive)
        entry = await chronicle.store(session.id, "decision", "Every service logs as JSON")
        await chronicle.promote(entry.id, reason="the team agreed")
        print(session.id, entry.id, sep="\n", flush=True)
    finally:
        archive.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
