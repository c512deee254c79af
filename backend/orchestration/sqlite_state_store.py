"""DAG node records in a plain SQLite file, so a DAG resumes after the process dies.

One table, one row per (dag, node), replaced on each save. The connection lives on
one dedicated thread (one writer, and no blocking call on the event loop); each save
is its own transaction in WAL mode, committed before ``save`` returns, which survives
a ``kill -9`` of the process (``synchronous=NORMAL`` can lose the last commits only
to a power cut). The file and its WAL are private (0600): outputs may quote code.
Outputs are stored as JSON; one that is not JSON is an OutputNotStorableError.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from backend.orchestration.records import NodeRecord, NodeStatus
from backend.orchestration.state_store import DagStateError, OutputNotStorableError

T = TypeVar("T")
SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS dag_nodes (
    dag_id TEXT NOT NULL,
    node_id TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    output TEXT,
    error TEXT,
    duration_s REAL,
    digest TEXT NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (dag_id, node_id)
) WITHOUT ROWID
"""
_UPSERT = """
INSERT INTO dag_nodes (dag_id, node_id, status, attempts, output, error, duration_s, digest,
                       updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (dag_id, node_id) DO UPDATE SET
    status = excluded.status, attempts = excluded.attempts, output = excluded.output,
    error = excluded.error, duration_s = excluded.duration_s, digest = excluded.digest,
    updated_at = excluded.updated_at
"""
_SELECT = (
    "SELECT node_id, status, attempts, output, error, duration_s, digest"
    " FROM dag_nodes WHERE dag_id = ?"
)


class SqliteDagStateStore:
    """A :class:`~backend.orchestration.state_store.DagStateStore` on a SQLite file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dag-state")
        self._connection: sqlite3.Connection | None = None
        self._closed = False

    async def load(self, dag_id: str) -> dict[str, NodeRecord]:
        rows = await self._call(lambda db: db.execute(_SELECT, (dag_id,)).fetchall())
        records: dict[str, NodeRecord] = {}
        for node_id, status, attempts, output, error, duration_s, digest in rows:
            try:
                state = NodeStatus(status)
                value = json.loads(output) if output is not None else None
            except ValueError:
                continue  # a row this version cannot read: the node simply runs again
            records[node_id] = NodeRecord(state, attempts, value, error, duration_s, digest)
        return records

    async def save(self, dag_id: str, node_id: str, record: NodeRecord) -> None:
        try:
            output = None if record.output is None else json.dumps(record.output, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise OutputNotStorableError(
                f"the output of node {node_id!r} is not JSON: {exc}",
                details={"dag_id": dag_id, "node_id": node_id},
            ) from None
        row = (
            dag_id,
            node_id,
            record.status.value,
            record.attempts,
            output,
            record.error,
            record.duration_s,
            record.digest,
            time.time(),
        )
        await self._call(lambda db: db.execute(_UPSERT, row))

    async def aclose(self) -> None:
        """Close the connection (on its thread) and stop the thread; idempotent."""
        if self._closed:
            return
        self._closed = True
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self._close_connection)
        self._executor.shutdown(wait=True)

    async def _call(self, work: Callable[[sqlite3.Connection], T]) -> T:
        if self._closed:
            raise DagStateError(f"the DAG state store {self.path} is closed")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._run, work)

    def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        try:
            return work(self._connect())
        except (sqlite3.Error, OSError) as exc:
            raise DagStateError(
                f"the DAG state store {self.path} cannot be used: {exc}",
                details={"path": str(self.path)},
            ) from None

    def _connect(self) -> sqlite3.Connection:
        if self._connection is not None:
            return self._connection
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        os.close(fd)
        db = sqlite3.connect(self.path, timeout=5.0, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise DagStateError(
                    f"the DAG state store {self.path} was written by a newer Sylk"
                    f" (schema {version}, this one knows {SCHEMA_VERSION})"
                )
            db.execute(_SCHEMA)
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except BaseException:
            db.close()
            raise
        self._connection = db
        return db

    def _close_connection(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
