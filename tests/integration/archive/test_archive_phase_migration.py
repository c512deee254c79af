"""An archive written before sessions had phases (schema 1) opens in this Sylk: its
sessions read as idle, the phase log is added, the version moves to 2, and nothing
that was stored changes. On SQLite and on PostgreSQL (``archive_url``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import Connection, create_engine, inspect, text

from backend.archive.phase_log import phase_history
from backend.archive.schema import SCHEMA_VERSION
from backend.archive.store import Archive
from backend.engine import Engine, EngineConfig
from backend.sessions.phases import SessionPhase


@pytest.fixture
def url(archive_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The archive every Engine and Archive of the test opens (SQLite: data_dir's file)."""
    monkeypatch.setenv("SYLK_DATABASE_URL", archive_url)
    return archive_url


@contextmanager
def _raw(url: str) -> Iterator[Connection]:
    """A transaction straight on the database, past the archive (what an older Sylk left)."""
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            yield conn
    finally:
        engine.dispose()


async def _write_a_version_1_archive(data_dir: Path, workspace: Path, url: str) -> str:
    """A real archive, then taken back to what schema 1 held."""
    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace))
    try:
        session = await engine.create_session("old")
        await engine.submit(session.id, "/help")
    finally:
        await engine.aclose()
    with _raw(url) as conn:
        conn.execute(text("DROP TABLE session_phases"))
        for sid, data in conn.execute(text("SELECT id, data FROM sessions")).all():
            doc = json.loads(data)
            doc.pop("phase")
            conn.execute(
                text("UPDATE sessions SET data = :data WHERE id = :id"),
                {"data": json.dumps(doc), "id": sid},
            )
        conn.execute(text("UPDATE schema_meta SET value = '1' WHERE key = 'version'"))
    return session.id


def _version_and_tables(url: str) -> tuple[str, set[str]]:
    with _raw(url) as conn:
        version = conn.execute(text("SELECT value FROM schema_meta WHERE key='version'")).scalar()
        return str(version), set(inspect(conn).get_table_names())


async def test_a_version_1_archive_is_migrated_on_open(
    data_dir: Path, workspace: Path, url: str
) -> None:
    sid = await _write_a_version_1_archive(data_dir, workspace, url)
    assert _version_and_tables(url)[0] == "1"
    archive = Archive(data_dir, url=url)
    try:
        [session] = archive.load_sessions()
        assert session.id == sid and session.phase is SessionPhase.IDLE
        assert len(archive.load_transcript(sid)) == 2
        assert await phase_history(archive, sid) == []
        assert archive.integrity_check() == "ok"
    finally:
        archive.close()
    version, tables = _version_and_tables(url)
    assert version == str(SCHEMA_VERSION) == "2"
    assert "session_phases" in tables
    # The migrated file works as any other: a move is stored and read back.
    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace))
    try:
        await engine.set_phase(sid, SessionPhase.RESEARCH, "how do others do it?")
        assert [m.new for m in await engine.phase_history(sid)] == [SessionPhase.RESEARCH]
    finally:
        await engine.aclose()


async def test_deleting_a_session_deletes_its_phase_log(
    data_dir: Path, workspace: Path, url: str
) -> None:
    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace))
    try:
        gone = await engine.create_session("gone")
        kept = await engine.create_session("kept")
        for session in (gone, kept):
            await engine.set_phase(session.id, SessionPhase.PLANNING, "a change request")
    finally:
        await engine.aclose()
    archive = Archive(data_dir, url=url)
    try:
        archive.delete_session(gone.id)
        assert await phase_history(archive, gone.id) == []
        assert len(await phase_history(archive, kept.id)) == 1
    finally:
        archive.close()
