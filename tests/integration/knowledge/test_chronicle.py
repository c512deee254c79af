"""The chronicle on a real archive file: isolation, promotion, search, filters, redaction."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from backend.archive.store import Archive
from backend.knowledge.chronicle.chronicle import Chronicle
from backend.knowledge.chronicle.models import (
    Category,
    ChronicleQuery,
    ChronicleValidationError,
    EntryNotFoundError,
    TimeRange,
    resolve_time_scope,
)
from backend.redaction import Redactor
from backend.sessions.models import Session
from backend.skills.envelopes import ErrorCode, code_for
from tests.support.clocks import FakeWall

SECRET = "sk-live-0123456789abcdef"


@pytest.fixture
def clock() -> FakeWall:
    return FakeWall(datetime(2025, 3, 10, 15, 0, tzinfo=UTC))


@pytest.fixture
def archive(tmp_path: Path, archive_url: str) -> Iterator[Archive]:
    """On SQLite and on PostgreSQL: the chronicle's store and search run on both."""
    archive = Archive(tmp_path / "data", url=archive_url)
    archive.save_sessions(
        [
            Session(id="sess-a-0001", name="auth-work", workspace=str(tmp_path)),
            Session(id="sess-b-0002", name="cache-work", workspace=str(tmp_path)),
        ]
    )
    yield archive
    archive.close()


@pytest.fixture
def chronicle(archive: Archive, clock: FakeWall) -> Chronicle:
    return Chronicle(archive, clock=clock, redactor=Redactor([SECRET]), tz=UTC)


A, B = "sess-a-0001", "sess-b-0002"


def ids(entries: list[Any]) -> list[str]:
    return [e.id for e in entries]


async def test_a_session_sees_its_own_entries_and_promoted_ones_of_others(
    chronicle: Chronicle,
) -> None:
    mine = await chronicle.store(A, "decision", "Use JWT for the auth migration")
    theirs = await chronicle.store(B, "decision", "Cache auth tokens for five minutes")
    assert mine.session_id == A and not mine.promoted
    assert ids(await chronicle.query(A, ChronicleQuery())) == [mine.id]

    promoted, changed = await chronicle.promote(theirs.id)
    assert changed and promoted.promoted and promoted.promoted_reason == "promoted explicitly"
    seen = await chronicle.query(A, ChronicleQuery())
    assert set(ids(seen)) == {mine.id, theirs.id}
    assert {e.session_name for e in seen} == {"auth-work", "cache-work"}
    assert ids(await chronicle.query(A, ChronicleQuery(current_only=True))) == [mine.id]
    assert ids(await chronicle.query(A, ChronicleQuery(promoted_only=True))) == [theirs.id]
    # Promoting again is harmless and keeps the first reason.
    again, changed = await chronicle.promote(theirs.id, reason="other")
    assert not changed and again.promoted_reason == "promoted explicitly"


async def test_cross_session_queries_filter_by_session(chronicle: Chronicle) -> None:
    a = await chronicle.store(A, "insight", "the login form posts twice")
    b = await chronicle.store(B, "insight", "the cache never expires")
    every = ChronicleQuery(cross_session=True)
    assert set(ids(await chronicle.query(A, every))) == {a.id, b.id}
    only_b = ChronicleQuery(cross_session=True, session_ids=[B])
    assert ids(await chronicle.query(A, only_b)) == [b.id]
    not_a = ChronicleQuery(cross_session=True, exclude_sessions=[A])
    assert ids(await chronicle.query(A, not_a)) == [b.id]


async def test_full_text_search_stems_ranks_and_survives_odd_input(
    chronicle: Chronicle,
) -> None:
    migration = await chronicle.store(
        A, "decision", "Migrating auth to JWT tokens", title="Auth migration"
    )
    await chronicle.store(A, "insight", "JWT libraries differ in clock skew handling")
    await chronicle.store(A, "failure", "Session cookies broke the mobile app")
    found = await chronicle.query(A, ChronicleQuery(search_text="migrate authentication"))
    assert ids(found) == [migration.id]
    # No entry has every word: any word will do, best match first.
    found = await chronicle.query(A, ChronicleQuery(search_text="jwt migration zebra"))
    assert ids(found)[0] == migration.id and len(found) == 2
    for odd in ['"unbalanced', "AND OR NOT (", "NEAR(a b)", "col:value*"]:
        await chronicle.query(A, ChronicleQuery(search_text=odd))  # never an SQL error


async def test_filters_by_category_and_time(chronicle: Chronicle, clock: FakeWall) -> None:
    old = await chronicle.store(A, "decision", "choose SQLite")
    clock.advance(days=2)
    new = await chronicle.store(A, "failure", "threads deadlocked")
    note = await chronicle.store(A, "general", "remember the milk")
    q = ChronicleQuery(categories=["decision", "failure"])
    assert ids(await chronicle.query(A, q)) == [new.id, old.id]  # newest first
    since = clock.now - timedelta(days=1)
    recent = await chronicle.query(A, ChronicleQuery(time=TimeRange(since=since)))
    assert set(ids(recent)) == {new.id, note.id}
    before = ChronicleQuery(time=TimeRange(until=since))
    assert ids(await chronicle.query(A, before)) == [old.id]
    assert ids(await chronicle.query(A, ChronicleQuery(categories=["all"]))) == ids(
        await chronicle.query(A, ChronicleQuery())
    )


async def test_checkpoint_categories_are_stored_and_found(chronicle: Chronicle) -> None:
    entry = await chronicle.store(
        A,
        "librarian_checkpoint",
        "Python backend with SQLite; tests under tests/",
        data={"context_usage": 0.5, "checkpoint_index": 2},
    )
    assert entry.category is Category.LIBRARIAN_CHECKPOINT
    found = await chronicle.query(A, ChronicleQuery(categories=["librarian_checkpoint"]))
    assert found[0].data == {"context_usage": 0.5, "checkpoint_index": 2}


async def test_bad_input_is_a_typed_validation_error(chronicle: Chronicle) -> None:
    with pytest.raises(ChronicleValidationError) as exc:
        await chronicle.store(A, "gossip", "x")
    assert code_for(exc.value) is ErrorCode.VALIDATION_ERROR
    assert "unknown category 'gossip'" in exc.value.message
    with pytest.raises(ChronicleValidationError, match="content must not be empty"):
        await chronicle.store(A, "decision", "   ")
    with pytest.raises(ChronicleValidationError, match="not whole files"):
        await chronicle.store(A, "decision", "x" * 20_001)
    with pytest.raises(ChronicleValidationError, match="unknown category"):
        ChronicleQuery(categories=["decisions"])
    now = datetime.now(UTC)
    with pytest.raises(ChronicleValidationError, match="time range is empty"):
        TimeRange(since=now, until=now - timedelta(seconds=1))
    with pytest.raises(ChronicleValidationError, match="timezone"):
        TimeRange(since=datetime(2025, 1, 1))
    with pytest.raises(ChronicleValidationError, match="unknown time scope"):
        chronicle.time_range("the day after tomorrow")
    with pytest.raises(ChronicleValidationError, match="operation"):
        await chronicle.record_file(A, "a.py", "deleted")
    with pytest.raises(EntryNotFoundError) as missing:
        await chronicle.promote("ent_nope")
    assert code_for(missing.value) is ErrorCode.NOT_FOUND


def test_time_scopes_resolve_against_the_users_day() -> None:
    now = datetime(2025, 3, 12, 15, 30, tzinfo=UTC)  # a Wednesday
    midnight = datetime(2025, 3, 12, tzinfo=UTC)
    assert resolve_time_scope("today", now) == TimeRange(since=midnight)
    assert resolve_time_scope("yesterday", now) == TimeRange(
        since=midnight - timedelta(days=1), until=midnight
    )
    assert resolve_time_scope("recently", now).since == now - timedelta(days=7)
    assert resolve_time_scope("last_week", now).since == now - timedelta(days=7)
    assert resolve_time_scope("last_3_days", now).since == now - timedelta(days=3)
    assert resolve_time_scope("last_2_hours", now).since == now - timedelta(hours=2)
    assert resolve_time_scope("this_week", now).since == datetime(2025, 3, 10, tzinfo=UTC)
    assert resolve_time_scope("this_month", now).since == datetime(2025, 3, 1, tzinfo=UTC)


async def test_a_pattern_recorded_three_times_is_promoted(chronicle: Chronicle) -> None:
    first = await chronicle.record_pattern(
        A, category="Error handling", name="Result type", pattern="return Result, never raise"
    )
    second = await chronicle.record_pattern(
        B, category="error_handling", name="result-type", pattern="Result everywhere"
    )
    assert (first.uses, second.uses, second.sessions) == (1, 2, 2)
    assert not second.promoted_now and not second.entry.promoted
    third = await chronicle.record_pattern(
        B, category="error handling", name="Result Type", pattern="Result in the API layer"
    )
    assert third.promoted_now and third.entry.promoted
    assert third.entry.promoted_reason == "pattern recorded 3 times in 2 session(s)"
    # Now every session sees it; a fourth record does not promote again.
    assert third.entry.id in ids(await chronicle.query(A, ChronicleQuery()))
    fourth = await chronicle.record_pattern(
        A, category="error handling", name="result type", pattern="again"
    )
    assert fourth.uses == 4 and not fourth.promoted_now


async def test_completing_a_session_promotes_its_decisions_and_patterns(
    chronicle: Chronicle,
) -> None:
    decision = await chronicle.store(B, "decision", "Redis for the session cache")
    pattern = await chronicle.store(B, "pattern", "cache keys are namespaced by tenant")
    thread = await chronicle.store(B, "open_thread", "eviction policy still undecided")
    promoted = await chronicle.complete_session(B)
    assert set(promoted) == {decision.id, pattern.id}
    visible = ids(await chronicle.query(A, ChronicleQuery()))
    assert set(visible) == {decision.id, pattern.id} and thread.id not in visible
    assert (await chronicle.get(decision.id)).promoted_reason == "session completed successfully"


async def test_failures_keep_their_resolution(chronicle: Chronicle) -> None:
    entry = await chronicle.record_failure(
        A, approach="threads for IO", reason="GIL contention", resolution="asyncio"
    )
    assert entry.category is Category.FAILURE and entry.title == "threads for IO"
    assert "Resolved by: asyncio" in entry.content and entry.data["resolved"] is True


async def test_secrets_never_reach_the_file(chronicle: Chronicle, archive: Archive) -> None:
    if archive.dialect != "sqlite":
        pytest.skip("reads the SQLite file's own bytes")
    await chronicle.store(
        A, "decision", f"rotate {SECRET} monthly", title=f"key {SECRET}", data={"k": SECRET}
    )
    await chronicle.record_file(A, "config.py", "modified", summary=f"set key {SECRET}")
    await chronicle.record_failure(A, approach=f"curl with {SECRET}", reason="401")
    found = await chronicle.query(A, ChronicleQuery(search_text="rotate"))
    assert "[redacted]" in found[0].content and SECRET not in found[0].content
    archive.close()
    raw = b"".join(p.read_bytes() for p in archive.path.parent.iterdir() if p.is_file())
    assert SECRET.encode() not in raw


async def test_entries_and_the_index_survive_a_reopen(tmp_path: Path, clock: FakeWall) -> None:
    archive = Archive(tmp_path / "data")
    chronicle = Chronicle(archive, clock=clock, tz=UTC)
    entry = await chronicle.store(A, "decision", "Adopt structured logging")
    await chronicle.record_file(A, "log.py", "created")
    archive.close()
    archive = Archive(tmp_path / "data")
    try:
        again = Chronicle(archive, clock=clock, tz=UTC)
        found = await again.query(A, ChronicleQuery(search_text="logging"))
        assert ids(found) == [entry.id]
        assert [f.path for f in await again.files([A])] == ["log.py"]
    finally:
        archive.close()


async def test_deleting_a_session_keeps_only_its_promoted_entries(
    chronicle: Chronicle, archive: Archive
) -> None:
    kept = await chronicle.store(A, "decision", "shared decision")
    await chronicle.promote(kept.id)
    await chronicle.store(A, "decision", "private decision")
    await chronicle.record_file(A, "a.py", "modified")
    archive.delete_session(A)
    left = await chronicle.query(B, ChronicleQuery(cross_session=True))
    assert ids(left) == [kept.id]
    assert await chronicle.files([A]) == []
    assert await chronicle.query(B, ChronicleQuery(search_text="private", cross_session=True)) == []


def _raw(path: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_fts_tables_and_triggers_exist(archive: Archive) -> None:
    if archive.dialect != "sqlite":
        pytest.skip(
            "SQLite's FTS5 tables (PostgreSQL's search columns: tests/integration/archive_pg)"
        )
    names = {r[0] for r in _raw(archive.path, "SELECT name FROM sqlite_master")}
    for name in ("chronicle_fts", "transcript_fts", "transcript_fts_ai", "chronicle_fts_au"):
        assert name in names
    assert archive.integrity_check() == "ok"
