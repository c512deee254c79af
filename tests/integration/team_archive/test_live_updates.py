"""Two Sylk processes on one archive: what the other one does arrives as an
``ArchiveChanged`` event (PostgreSQL: LISTEN/NOTIFY; SQLite: polling data_version),
and the next chronicle read finds the promoted decision."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from backend.archive_events import ArchiveChanged
from backend.engine import Engine, EngineConfig
from backend.engine.build import build
from backend.events import EngineEvent
from backend.knowledge.chronicle.models import ChronicleQuery
from sylk_tui.engine_link.event_table import message_for
from sylk_tui.engine_link.messages import EngineNoticePosted
from tests.support.polling import until

CHILD = Path(__file__).with_name("teammate_child.py")
ROOT = Path(__file__).resolve().parents[3]


async def test_a_teammates_session_and_decision_arrive_live(
    engine_config: EngineConfig, archive_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SYLK_DATABASE_URL", archive_url)
    parts = build(engine_config)
    engine = Engine.from_parts(parts)
    seen: list[EngineEvent] = []
    parts.events.add_listener(seen.append)
    try:
        own = await engine.create_session("mine", isolation=False)
        asked = ChronicleQuery(search_text="JSON", cross_session=True)
        assert await parts.knowledge.chronicle.query(own.id, asked) == []  # cached: none
        engine.watch_archive()
        watch = engine._watch
        assert watch is not None
        await until(watch.listening.is_set, what="the watch listening")
        done = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, str(CHILD), archive_url, "carol"],
            capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        session_id, entry_id = done.stdout.split()

        def changes() -> list[ArchiveChanged]:
            return [e for e in seen if isinstance(e, ArchiveChanged)]

        await until(lambda: any(c.change == "promoted" for c in changes()), what="promotion")
        await until(lambda: any(c.session_id == session_id for c in changes()), what="session")
        promoted = next(c for c in changes() if c.change == "promoted")
        assert promoted.entry_id == entry_id and promoted.session_id == session_id
        assert promoted.owner is not None and promoted.owner.startswith("carol@")
        assert promoted.teammate
        toast = message_for(promoted)
        assert isinstance(toast, EngineNoticePosted) and "carol@" in toast.text
        found = await parts.knowledge.chronicle.query(own.id, asked)
        assert [e.id for e in found] == [entry_id]  # the cache was emptied
        assert session_id not in {s.id for s in engine.list_sessions()}  # carol's: not run
    finally:
        await engine.aclose()
