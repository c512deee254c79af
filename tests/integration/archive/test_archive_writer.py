"""The writer: group commit with a savepoint per job, close, concurrency; on SQLite and
PostgreSQL alike (``archive_url``)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Connection, create_engine, insert, text
from sqlalchemy.exc import IntegrityError

from backend.archive.schema import TRANSCRIPT
from backend.archive.store import Archive
from backend.errors import ArchiveClosedError
from backend.messages import Message, MessageType
from backend.sessions.models import Session, SessionSnapshot


def _message(session_id: str, text_: str, id_: str | None = None) -> Message[dict[str, Any]]:
    extra = {"id": id_} if id_ else {}
    return Message[dict[str, Any]](
        session_id=session_id,
        source="user",
        target="guide",
        type=MessageType.USER_INPUT,
        payload={"text": text_},
        **extra,
    )


def _insert(message: Message[dict[str, Any]]) -> Any:
    """A write job that inserts ``message`` and returns its transaction."""
    row = {
        "id": message.id,
        "session_id": message.session_id,
        "type": message.type.value,
        "source": message.source,
        "timestamp": message.timestamp.isoformat(),
        "text": message.payload["text"],
        "envelope": message.model_dump_json(),
    }

    def fn(conn: Connection) -> Any:
        conn.execute(insert(TRANSCRIPT), [row])
        return conn.get_transaction()

    return fn


def _stored_ids(url: str) -> list[str]:
    """Transcript ids in commit order, through an independent connection."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return [r[0] for r in conn.execute(text("SELECT id FROM transcript ORDER BY seq"))]
    finally:
        engine.dispose()


@pytest.fixture
async def archive(data_dir: Path, archive_url: str) -> AsyncIterator[Archive]:
    arch = Archive(data_dir, url=archive_url)
    try:
        yield arch
    finally:
        await asyncio.to_thread(arch.close)


async def test_a_failing_job_fails_alone_and_its_group_commits(
    archive: Archive, archive_url: str
) -> None:
    existing = _message("s", "already there")
    archive.append_messages([existing])

    # Hold the writer inside a transaction so the next jobs queue up and are
    # taken as one group.
    started, release = threading.Event(), threading.Event()

    def blocker(_conn: Connection) -> None:
        started.set()
        release.wait(10)

    held = asyncio.ensure_future(archive.awrite(blocker))
    assert await asyncio.to_thread(started.wait, 10)

    first, last = _message("s", "first"), _message("s", "last")
    batch = [_message("s", "batch 1"), _message("s", "dup", existing.id), _message("s", "batch 3")]
    jobs = [
        asyncio.ensure_future(archive.awrite(_insert(first))),
        asyncio.ensure_future(archive.aappend_messages([_message("s", "dup", existing.id)])),
        asyncio.ensure_future(archive.aappend_messages(batch)),
        asyncio.ensure_future(archive.awrite(_insert(last))),
    ]
    for _ in range(3):
        await asyncio.sleep(0)  # let every task submit its job
    release.set()
    await held
    outcomes = await asyncio.gather(*jobs, return_exceptions=True)

    assert isinstance(outcomes[1], IntegrityError)
    assert isinstance(outcomes[2], IntegrityError)  # a job is atomic: none of its rows
    # The good jobs ran in the same transaction as the failing ones and committed.
    assert outcomes[0] is outcomes[3]
    assert not isinstance(outcomes[0], BaseException)
    assert _stored_ids(archive_url) == [existing.id, first.id, last.id]
    assert [m.id for m in archive.load_transcript("s")] == [existing.id, first.id, last.id]
    # ... and the writer goes on.
    archive.append_messages([_message("s", "after")])
    assert len(archive.load_transcript("s")) == 4


async def test_an_exception_in_a_job_reaches_its_caller_unchanged(archive: Archive) -> None:
    class Boom(Exception):
        pass

    def fails(conn: Connection) -> None:
        conn.execute(text("INSERT INTO schema_meta (key, value) VALUES ('half', 'written')"))
        raise Boom("no")

    with pytest.raises(Boom):
        archive.write(fails)
    with pytest.raises(Boom):
        await archive.awrite(fails)
    # The savepoint rolled the job's own statement back.
    assert (
        archive.write(
            lambda c: c.execute(text("SELECT count(*) FROM schema_meta WHERE key='half'")).scalar()
        )
        == 0
    )


async def test_writes_after_close_raise_archive_closed_error(
    data_dir: Path, archive_url: str
) -> None:
    archive = Archive(data_dir, url=archive_url)
    session = Session(name="s", workspace=str(data_dir))
    archive.save_sessions([session])
    archive.close()
    archive.close()  # closing twice is harmless

    message = _message(session.id, "too late")
    with pytest.raises(ArchiveClosedError):
        archive.append_messages([message])
    with pytest.raises(ArchiveClosedError):
        await archive.aappend_messages([message])
    with pytest.raises(ArchiveClosedError):
        archive.save_sessions([session])
    with pytest.raises(ArchiveClosedError):
        await archive.asave_sessions([session])
    with pytest.raises(ArchiveClosedError):
        archive.save_snapshot(SessionSnapshot(session=session))
    with pytest.raises(ArchiveClosedError):
        archive.delete_session(session.id)
    with pytest.raises(ArchiveClosedError):
        archive.write(lambda _c: None)
    with pytest.raises(ArchiveClosedError):
        await archive.awrite(lambda _c: None)
    assert _stored_ids(archive_url) == []


async def test_close_commits_every_job_already_queued(data_dir: Path, archive_url: str) -> None:
    archive = Archive(data_dir, url=archive_url)
    sent = [_message("s", f"queued {n}") for n in range(300)]
    tasks = [asyncio.ensure_future(archive.aappend_messages([m])) for m in sent]
    await asyncio.sleep(0)  # every task has submitted its job
    await asyncio.to_thread(archive.close)
    await asyncio.gather(*tasks)  # none failed
    assert _stored_ids(archive_url) == [m.id for m in sent]


async def test_many_concurrent_writers_all_land_in_per_task_order(
    archive: Archive, archive_url: str
) -> None:
    tasks, per_task, threads = 40, 50, 3

    async def writer(n: int) -> list[str]:
        ids: list[str] = []
        for k in range(per_task):
            if k % 10 == 9:  # now and then a small batch
                batch = [_message(f"task-{n}", f"{k}.{j}") for j in range(3)]
                await archive.aappend_messages(batch)
                ids.extend(m.id for m in batch)
            else:
                message = _message(f"task-{n}", str(k))
                await archive.aappend_messages([message])
                ids.append(message.id)
        return ids

    def sync_writer(n: int) -> list[str]:  # blocking callers on other threads, at the same time
        ids = []
        for k in range(per_task):
            message = _message(f"thread-{n}", str(k))
            archive.append_messages([message])
            ids.append(message.id)
        return ids

    results = await asyncio.gather(
        *(writer(n) for n in range(tasks)),
        *(asyncio.to_thread(sync_writer, n) for n in range(threads)),
    )
    stored = _stored_ids(archive_url)
    expected = sum(len(r) for r in results)
    assert len(stored) == expected == tasks * (per_task + 10) + threads * per_task
    position = {sid: i for i, sid in enumerate(stored)}
    for ids in results:
        assert [position[i] for i in ids] == sorted(position[i] for i in ids)
    for n in range(tasks):
        assert [m.id for m in await archive.aload_transcript(f"task-{n}")] == results[n]
    assert archive.integrity_check() == "ok"
