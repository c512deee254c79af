"""The whole engine on PostgreSQL: a session, a conversation and a chronicle entry
survive a restart; a connection the server drops is retried, a write never lost
without the caller knowing."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Connection, text

from backend.archive.store import Archive
from backend.engine import Engine, EngineConfig
from backend.engine.build import build
from backend.knowledge.chronicle.models import ChronicleQuery
from backend.messages import Message, MessageType


async def test_a_session_and_its_chronicle_survive_a_restart(
    engine_config: EngineConfig, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SYLK_DATABASE_URL", postgres_url)
    first_parts = build(engine_config)
    assert first_parts.archive.dialect == "postgresql"
    first = Engine.from_parts(first_parts)
    try:
        session = await first.create_session("shared")
        await first.submit(session.id, "remember the migration to tokens")
        chronicle = first_parts.knowledge.chronicle
        entry = await chronicle.store(session.id, "decision", "Adopt tsvector search")
        said = [m.id for m in first_parts.archive.load_transcript(session.id)]
    finally:
        await first.aclose()
    assert said
    assert not any(engine_config.data_dir.glob("sylk.db*"))  # nothing went to a local file

    second_parts = build(engine_config)
    second = Engine.from_parts(second_parts)
    try:
        assert second.get_session(session.id).name == "shared"
        assert [m.id for m in second_parts.archive.load_transcript(session.id)] == said
        found = await second_parts.knowledge.chronicle.query(
            session.id, ChronicleQuery(search_text="tsvector")
        )
        assert [e.id for e in found] == [entry.id]
        hits = await second_parts.knowledge.chronicle.search_transcript("migration")
        assert [h.session_id for h in hits] == [session.id]
    finally:
        await second.aclose()


def _message(text_: str) -> Message[dict[str, Any]]:
    return Message[dict[str, Any]](
        session_id="s", source="user", type=MessageType.USER_INPUT, payload={"text": text_}
    )


def test_a_connection_dropped_before_commit_is_retried_once(
    tmp_path: Path, postgres_url: str
) -> None:
    archive = Archive(tmp_path, url=postgres_url)
    try:
        archive.append_messages([_message("before")])
        killed = threading.Event()

        def drop_own_connection(conn: Connection) -> None:
            if not killed.is_set():  # the first try: the server ends this backend
                killed.set()
                conn.execute(text("SELECT pg_terminate_backend(pg_backend_pid())"))

        archive.write(drop_own_connection)  # retried on a new connection: succeeds
        assert killed.is_set()
        archive.append_messages([_message("after")])
        assert [m.payload["text"] for m in archive.load_transcript("s")] == ["before", "after"]
    finally:
        archive.close()
