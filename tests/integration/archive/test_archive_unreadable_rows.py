"""A damaged transcript row in a real archive (SQLite and PostgreSQL): the rest of the
transcript still reads, in order; the row is named (session, seq, id, why) by a typed
error that never quotes the parser's text or the row's content; the row stays stored."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from backend.archive.store import Archive
from backend.archive.transcript_rows import UnreadableRowsError
from backend.errors import ArchiveCorruptError, ErrorKind, SylkError
from backend.messages import Message, MessageType

SESSION = "s_garbled"
GARBAGE = [
    ("bad-json", '{"not": "a message'),  # cut short: not JSON at all
    ("bad-shape", '{"id": "x", "evil": "\\u001b[2J"}'),  # JSON, not a message
]


def _say(n: int) -> Message[dict[str, Any]]:
    return Message[dict[str, Any]](
        id=f"m{n}", session_id=SESSION, source="user", type=MessageType.USER_INPUT,
        payload={"text": f"line {n}"},
    )  # fmt: skip


def _sql(url: str, sql: str, **params: Any) -> Any:
    """One statement behind the archive's back, as a disk error or a hand edit would."""
    engine = create_engine(url)
    try:
        with engine.begin() as db:
            result = db.execute(text(sql), params)
            return result.scalar() if result.returns_rows else None
    finally:
        engine.dispose()


def _garble(url: str, message_id: str, envelope: str) -> int:
    _sql(
        url,
        "INSERT INTO transcript (id, session_id, type, source, timestamp, text, envelope)"
        " VALUES (:id, :session, 'agent_reply', 'engineer', '', '', :envelope)",
        id=message_id,
        session=SESSION,
        envelope=envelope,
    )
    return int(_sql(url, "SELECT seq FROM transcript WHERE id = :id", id=message_id))


@pytest.fixture
def archive(tmp_path: Path, archive_url: str) -> Archive:
    first = Archive(tmp_path, url=archive_url)
    first.append_messages([_say(1), _say(2)])
    first.close()
    seqs = [_garble(archive_url, message_id, envelope) for message_id, envelope in GARBAGE]
    assert seqs == sorted(seqs)
    reopened = Archive(tmp_path, url=archive_url)
    reopened.append_messages([_say(3)])
    return reopened


def test_the_readable_rows_come_back_in_order_and_the_garbled_ones_are_named(
    archive: Archive,
) -> None:
    try:
        read = archive.load_transcript(SESSION)
        assert [m.id for m in read] == ["m1", "m2", "m3"]
        assert [(r.session_id, r.message_id) for r in read.unreadable] == [
            (SESSION, "bad-json"),
            (SESSION, "bad-shape"),
        ]
        first, second = read.unreadable
        assert first.reason == "its envelope is not valid JSON"
        assert "more)" in second.reason and "[2J" not in second.reason  # never the row's value
        problem = read.problem("refactor")
        assert isinstance(problem, UnreadableRowsError)
        assert isinstance(problem, ArchiveCorruptError) and isinstance(problem, SylkError)
        assert problem.error_kind is ErrorKind.CONFLICT
        text = str(problem)
        assert text.startswith(f"2 messages of refactor could not be read (rows {first.seq}, ")
        assert str(archive.path) in text and "the rest is shown" in text
        assert "ValidationError" not in text and "pydantic" not in text
        assert problem.details is not None and problem.details["session_id"] == SESSION
        with pytest.raises(UnreadableRowsError):
            read.require_whole()
    finally:
        archive.close()


def test_a_limit_counts_rows_and_a_healthy_transcript_has_no_problem(
    archive: Archive, archive_url: str
) -> None:
    try:
        tail = archive.load_transcript(SESSION, limit=2)  # bad-shape, m3
        assert [m.id for m in tail] == ["m3"]
        assert [r.message_id for r in tail.unreadable] == ["bad-shape"]
        assert "1 message of s_garbled could not be read (row " in str(tail.problem())
        healthy = archive.load_transcript("s_other")
        assert healthy == [] and healthy.problem() is None and healthy.require_whole() is healthy
    finally:
        archive.close()
    assert _sql(archive_url, "SELECT count(*) FROM transcript") == 5  # nothing was deleted


async def test_the_async_read_skips_the_same_rows(archive: Archive) -> None:
    try:
        read = await archive.aload_transcript(SESSION)
        assert [m.id for m in read] == ["m1", "m2", "m3"] and len(read.unreadable) == 2
    finally:
        archive.close()
