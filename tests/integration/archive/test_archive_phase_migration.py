"""An archive written before sessions had phases (schema 1) opens in this Sylk: its
sessions read as idle, the phase log is added, the version moves to 2, and nothing
that was stored changes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from backend.archive.phase_log import phase_history
from backend.archive.schema import SCHEMA_VERSION
from backend.archive.store import DB_NAME, Archive
from backend.engine import Engine, EngineConfig
from backend.sessions.phases import SessionPhase


async def _write_a_version_1_archive(data_dir: Path, workspace: Path) -> str:
    """A real archive, then taken back to what schema 1 held."""
    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace))
    try:
        session = await engine.create_session("old")
        await engine.submit(session.id, "/help")
    finally:
        await engine.aclose()
    conn = sqlite3.connect(data_dir / DB_NAME)
    try:
        conn.execute("DROP TABLE session_phases")
        for sid, data in conn.execute("SELECT id, data FROM sessions").fetchall():
            doc = json.loads(data)
            doc.pop("phase")
            conn.execute("UPDATE sessions SET data = ? WHERE id = ?", (json.dumps(doc), sid))
        conn.execute("UPDATE schema_meta SET value = '1' WHERE key = 'version'")
        conn.commit()
    finally:
        conn.close()
    return session.id


def _version_and_tables(db: Path) -> tuple[str, set[str]]:
    conn = sqlite3.connect(db)
    try:
        version = conn.execute("SELECT value FROM schema_meta WHERE key='version'").fetchone()[0]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    finally:
        conn.close()
    return version, tables


async def test_a_version_1_archive_is_migrated_on_open(data_dir: Path, workspace: Path) -> None:
    sid = await _write_a_version_1_archive(data_dir, workspace)
    db = data_dir / DB_NAME
    assert _version_and_tables(db)[0] == "1"
    archive = Archive(data_dir)
    try:
        [session] = archive.load_sessions()
        assert session.id == sid and session.phase is SessionPhase.IDLE
        assert len(archive.load_transcript(sid)) == 2
        assert await phase_history(archive, sid) == []
        assert archive.integrity_check() == "ok"
    finally:
        archive.close()
    version, tables = _version_and_tables(db)
    assert version == str(SCHEMA_VERSION) == "2"
    assert "session_phases" in tables
    # The migrated file works as any other: a move is stored and read back.
    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace))
    try:
        await engine.set_phase(sid, SessionPhase.RESEARCH, "how do others do it?")
        assert [m.new for m in await engine.phase_history(sid)] == [SessionPhase.RESEARCH]
    finally:
        await engine.aclose()


async def test_deleting_a_session_deletes_its_phase_log(data_dir: Path, workspace: Path) -> None:
    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace))
    try:
        gone = await engine.create_session("gone")
        kept = await engine.create_session("kept")
        for session in (gone, kept):
            await engine.set_phase(session.id, SessionPhase.PLANNING, "a change request")
    finally:
        await engine.aclose()
    archive = Archive(data_dir)
    try:
        archive.delete_session(gone.id)
        assert await phase_history(archive, gone.id) == []
        assert len(await phase_history(archive, kept.id)) == 1
    finally:
        archive.close()
