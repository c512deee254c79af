"""The archive: sessions, transcripts and snapshots in one SQLite file or, for a team,
one PostgreSQL database (``database_url``; :mod:`backend.archive.postgres`).

SQLite: WAL, a busy timeout, ``BEGIN IMMEDIATE`` and one writer thread (:mod:`writer`).
PostgreSQL: a pool and writer lanes (one session's writes in one lane, in order). A
write is acknowledged only after its COMMIT returned. Reads run on their own
connections, in a thread for the async helpers, so the event loop never waits on disk.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from pydantic import TypeAdapter
from sqlalchemy import (
    URL,
    Connection,
    Engine,
    case,
    create_engine,
    delete,
    event,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.exc import DBAPIError

from backend.archive import postgres
from backend.archive.dialects import driver_sql, json_field_set, upsert
from backend.archive.migration import migrate
from backend.archive.schema import (
    CHRONICLE_ENTRIES,
    PREFERENCES,
    SESSION_OWNED,
    SESSIONS,
    SNAPSHOTS,
    STEPS,
    TRANSCRIPT,
    USAGE,
    probe,
)
from backend.archive.transcript_rows import (
    INSERT_TRANSCRIPT,
    ReadTranscript,
    message_values,
    read_rows,
)
from backend.archive.writer import WriteFn, WriterLanes, storage_failure
from backend.errors import ArchiveWriteError
from backend.messages import Message
from backend.sessions.models import Session, SessionSnapshot

T = TypeVar("T")
DB_NAME = "sylk.db"
BUSY_TIMEOUT_MS = 10_000
POOL_SIZE = 5

_sessions = SESSIONS
_transcript = TRANSCRIPT
_snapshots = SNAPSHOTS
_steps = STEPS
_usage = USAGE
_prefs = PREFERENCES
_chronicle = CHRONICLE_ENTRIES
ReadFn = Callable[[Connection], T]


def _make_engine(path: Path, begin: str) -> Engine:
    engine = create_engine(
        URL.create("sqlite", database=str(path)),
        connect_args={"check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000},
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Let us issue BEGIN ourselves instead of the driver's implicit one.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=FULL")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        conn.exec_driver_sql(begin)

    return engine


def _json_time(value: datetime) -> str:
    """``value`` exactly as ``Session.model_dump_json`` writes it."""
    return str(TypeAdapter(datetime).dump_python(value, mode="json"))


def _session_values(session: Session) -> dict[str, Any]:
    owner = session.owner  # also as columns: a team's reads filter on them in SQL
    return {
        "id": session.id, "name": session.name, "state": session.state.value,
        "created_at": session.created_at.isoformat(),
        "last_active_at": session.last_active_at.isoformat(),
        "closed": session.closed_at is not None, "data": session.model_dump_json(),
        "owner_user": owner.user if owner else None, "owner_host": owner.host if owner else None,
    }  # fmt: skip


class Archive:
    """Sessions, transcripts and snapshots in one SQLite file or PostgreSQL database.

    ``url`` (``database_url``): None (``data_dir/sylk.db``), ``sqlite:///…`` or
    ``postgresql+psycopg://…`` (a pool of ``pool_size``). ``location`` names it,
    password hidden; ``path`` is the SQLite file (PostgreSQL: its folder is the data dir).
    """

    def __init__(self, data_dir: Path, *, url: str | None = None, pool_size: int = POOL_SIZE):
        where = postgres.locate(url, data_dir)
        self.path = where if isinstance(where, Path) else data_dir / DB_NAME
        self.location = str(where) if isinstance(where, Path) else postgres.shown(where)
        if isinstance(where, URL):
            self._open_server(where, pool_size)
            return
        try:
            self._open(self.path.parent)
        except (OSError, DBAPIError) as exc:
            typed = storage_failure(exc, self.path)
            if typed is None:
                raise
            raise typed from None

    def _open_server(self, url: URL, pool_size: int) -> None:
        engine = postgres.make_engine(url, pool_size)
        try:
            found = postgres.probe(engine, url)  # raises, writing nothing, on a bad database
            with engine.begin() as conn:
                migrate(conn, found)
        except DBAPIError as exc:
            engine.dispose()
            raise postgres.unavailable(url, exc) from None
        except BaseException:
            engine.dispose()
            raise
        self._reader = self._writer_engine = engine
        lanes = max(1, pool_size // 2)  # the other half of the pool serves reads
        self._writer = WriterLanes(engine, lanes, path=self.location)

    def _open(self, data_dir: Path) -> None:
        data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        found = probe(self.path)  # raises, touching nothing, on a bad file
        if found is None and not self.path.exists():
            # Private from the first byte: SQLite gives -wal and -shm the
            # database file's permissions.
            os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
        self._reader = _make_engine(self.path, "BEGIN")
        writer_engine = _make_engine(self.path, "BEGIN IMMEDIATE")
        try:
            with writer_engine.begin() as conn:
                migrate(conn, found)  # tables added since the file was made, its version
        except BaseException:
            writer_engine.dispose()
            self._reader.dispose()
            raise
        if found is None:
            os.chmod(self.path, 0o600)  # an existing empty file may have had other modes
        self._writer = WriterLanes(writer_engine, 1, path=self.path)
        self._writer_engine = writer_engine

    # -- lifecycle -----------------------------------------------------------
    def close(self) -> None:
        self._writer.close()
        self._writer_engine.dispose()
        self._reader.dispose()

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self._reader.dialect.name

    # -- writes --------------------------------------------------------------
    def write(self, fn: WriteFn, *, key: str | None = None) -> Any:
        """Run ``fn`` in a writer's transaction and wait for the commit. Writes with the
        same ``key`` (a session id) commit in the order they were submitted."""
        return self._writer.submit(fn, key).result()

    async def awrite(self, fn: WriteFn, *, key: str | None = None) -> Any:
        return await asyncio.wrap_future(self._writer.submit(fn, key))

    @staticmethod
    def upsert_sessions(sessions: list[Session]) -> WriteFn:
        """The write that stores ``sessions`` (for a caller's transaction, e.g. the phase log)."""
        rows = [_session_values(s) for s in sessions]
        return lambda conn: upsert(conn, _sessions, rows, ["id"])

    @staticmethod
    def _insert_messages(messages: list[Message[Any]]) -> WriteFn:
        rows = [tuple(message_values(m).values()) for m in messages]

        def fn(conn: Connection) -> None:  # positional executemany, no Core compile per job
            driver_sql(conn, INSERT_TRANSCRIPT, rows)

        return fn

    def save_sessions(self, sessions: Iterable[Session]) -> None:
        batch = list(sessions)
        if batch:
            self.write(self.upsert_sessions(batch))

    async def asave_sessions(self, sessions: Iterable[Session]) -> None:
        batch = list(sessions)
        if batch:
            await self.awrite(self.upsert_sessions(batch))

    def append_messages(self, messages: Iterable[Message[Any]]) -> None:
        batch = list(messages)
        if batch:
            try:
                self.write(self._insert_messages(batch), key=batch[0].session_id)
            except ArchiveWriteError as exc:
                raise exc.with_unsaved(tuple(batch)) from None

    async def aappend_messages(
        self, messages: Iterable[Message[Any]], *, touched_at: datetime | None = None
    ) -> None:
        """Append; with ``touched_at``, also move the sessions' ``last_active_at``
        forward to it, in the same transaction."""
        batch = list(messages)
        if not batch:
            return
        try:
            await self._append(batch, touched_at)
        except ArchiveWriteError as exc:  # what was not stored travels with the error
            raise exc.with_unsaved(tuple(batch)) from None

    async def _append(self, batch: list[Message[Any]], touched_at: datetime | None) -> None:
        insert_fn = self._insert_messages(batch)
        key = batch[0].session_id
        if touched_at is None:
            await self.awrite(insert_fn, key=key)
            return
        ids = sorted({m.session_id for m in batch})
        iso = touched_at.isoformat()
        as_json = _json_time(touched_at)

        def fn(conn: Connection) -> None:
            insert_fn(conn)
            conn.execute(
                update(_sessions)
                .where(_sessions.c.id.in_(ids), _sessions.c.last_active_at < iso)
                .values(
                    last_active_at=iso,
                    data=json_field_set(conn, _sessions.c.data, "last_active_at", as_json),
                )
            )

        await self.awrite(fn, key=key)

    def save_snapshot(self, snapshot: SessionSnapshot) -> None:
        row = {
            "id": snapshot.id,
            "session_id": snapshot.session.id,
            "created_at": snapshot.created_at.isoformat(),
            "label": snapshot.label,
            "data": snapshot.model_dump_json(),
        }
        self.write(lambda conn: conn.execute(insert(_snapshots), [row]))

    async def arecord_steps(self, rows: list[dict[str, Any]]) -> None:
        """Agent steps, as ``STEPS`` column values."""
        if rows:
            await self.awrite(lambda conn: conn.execute(insert(_steps), rows))

    async def arecord_usage(self, rows: list[dict[str, Any]]) -> None:
        """Per-call usage, as ``USAGE`` column values."""
        if rows:
            await self.awrite(lambda conn: conn.execute(insert(_usage), rows))

    def load_steps(self, session_id: str) -> list[dict[str, Any]]:
        query = select(_steps).where(_steps.c.session_id == session_id).order_by(_steps.c.seq)
        with self._reader.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(query)]

    def usage_by_agent(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """Token and cost totals per (session, agent, provider, model)."""
        cols = _usage.c
        query = select(
            cols.session_id,
            cols.agent,
            cols.provider,
            cols.model,
            func.count().label("calls"),
            func.sum(cols.input_tokens).label("input_tokens"),
            func.sum(cols.output_tokens).label("output_tokens"),
            func.sum(cols.cache_read_tokens).label("cache_read_tokens"),
            func.sum(cols.cache_write_tokens).label("cache_write_tokens"),
            func.sum(cols.cost_usd).label("cost_usd"),
            func.count(cols.cost_usd).label("priced_calls"),
            func.sum(case((cols.estimated, 1), else_=0)).label("estimated_calls"),
        ).group_by(cols.session_id, cols.agent, cols.provider, cols.model)
        if session_id is not None:
            query = query.where(cols.session_id == session_id)
        with self._reader.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(query)]

    def delete_session(self, session_id: str) -> None:
        def fn(conn: Connection) -> None:
            for table in (*SESSION_OWNED, _sessions):
                key = table.c.id if table is _sessions else table.c.session_id
                conn.execute(delete(table).where(key == session_id))
            # Promoted entries are shared knowledge and outlive the session that wrote them.
            conn.execute(
                delete(_chronicle).where(
                    _chronicle.c.session_id == session_id, _chronicle.c.promoted.is_(False)
                )
            )

        self.write(fn)

    def set_preference(self, key: str, value: Any) -> None:
        """Store a global preference (JSON-serialisable ``value``), replacing any earlier one."""
        row = {
            "key": key,
            "value": json.dumps(value, sort_keys=True),
            "updated_at": datetime.now(UTC).isoformat(),
        }

        self.write(lambda conn: upsert(conn, _prefs, [row], ["key"]))

    # -- reads ---------------------------------------------------------------
    def read(self, fn: ReadFn[T]) -> T:
        """Run ``fn`` on a read connection (its own snapshot; never blocks the writer)."""
        with self._reader.connect() as conn:
            return fn(conn)

    async def aread(self, fn: ReadFn[T]) -> T:
        return await asyncio.to_thread(self.read, fn)

    def get_preference(self, key: str) -> Any | None:
        query = select(_prefs.c.value).where(_prefs.c.key == key)
        with self._reader.connect() as conn:
            value = conn.execute(query).scalar()
        return None if value is None else json.loads(value)

    def preferences(self, prefix: str = "") -> dict[str, Any]:
        query = select(_prefs.c.key, _prefs.c.value).where(_prefs.c.key.startswith(prefix))
        with self._reader.connect() as conn:
            return {k: json.loads(v) for k, v in conn.execute(query)}

    def load_sessions(self) -> list[Session]:
        with self._reader.connect() as conn:
            rows = conn.execute(select(_sessions.c.data).order_by(_sessions.c.created_at))
            return [Session.model_validate_json(r[0]) for r in rows]

    def load_transcript(self, session_id: str, *, limit: int | None = None) -> ReadTranscript:
        """The session's messages in order; with ``limit``, the last ``limit`` rows. A row
        that does not parse is skipped and named in the result's ``unreadable``."""
        t = _transcript
        query = select(t.c.seq, t.c.id, t.c.envelope).where(t.c.session_id == session_id)
        with self._reader.connect() as conn:
            if limit is None:
                rows = list(conn.execute(query.order_by(_transcript.c.seq)))
            else:
                rows = list(conn.execute(query.order_by(_transcript.c.seq.desc()).limit(limit)))
                rows.reverse()
        return read_rows(session_id, ((r[0], r[1], r[2]) for r in rows), self.path)

    async def aload_transcript(
        self, session_id: str, *, limit: int | None = None
    ) -> ReadTranscript:
        return await asyncio.to_thread(self.load_transcript, session_id, limit=limit)

    def transcript_counts(self) -> dict[str, int]:
        query = select(_transcript.c.session_id, func.count()).group_by(_transcript.c.session_id)
        with self._reader.connect() as conn:
            return {sid: n for sid, n in conn.execute(query)}

    def load_snapshots(self, session_id: str) -> list[SessionSnapshot]:
        query = (
            select(_snapshots.c.data)
            .where(_snapshots.c.session_id == session_id)
            .order_by(_snapshots.c.created_at)
        )
        with self._reader.connect() as conn:
            return [SessionSnapshot.model_validate_json(r[0]) for r in conn.execute(query)]

    def integrity_check(self) -> str:
        """SQLite's own check; on PostgreSQL, "ok" once every table answers a count."""
        with self._reader.connect() as conn:
            if conn.dialect.name == "sqlite":
                return str(conn.exec_driver_sql("PRAGMA integrity_check").scalar())
            for table in (_sessions, _transcript, _snapshots, _steps, _usage, _chronicle):
                conn.execute(select(func.count()).select_from(table)).scalar()
            return "ok"
