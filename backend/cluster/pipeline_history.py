"""A Ray pipeline's history, carried from the worker's private archive to the driver's.

The worker's engine writes the pipeline's transcript messages, agent steps and chronicle
records (files touched, entries) to a data dir deleted when the task ends. Before that,
:func:`harvest` reads them (the worker's one session holds nothing else) into a
:class:`PipelineHistory` that travels back with the outcome; the driver's
:func:`store_write` writes them under the user's session, as a local run would have,
in one transaction: all of an attempt's rows or none.

Stored once per attempt: every message id is the worker's (unique to that attempt), so
the write first looks for the attempt's first message and, found, stores nothing (a
result delivered twice, a driver that stores again after a restart). A worker killed
mid-pipeline returns nothing, so its attempt stores nothing: its rows died with its data
dir, as its edits did, and the retry's history is the node's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, insert, select

from backend.archive.dialects import driver_sql
from backend.archive.schema import CHRONICLE_ENTRIES, CHRONICLE_FILES, STEPS, TRANSCRIPT
from backend.archive.transcript_rows import INSERT_TRANSCRIPT, message_values
from backend.messages import Message

_MESSAGE = Message[dict[str, Any]]


@dataclass(frozen=True)
class PipelineHistory:
    """One attempt's rows, as the worker's archive held them (its session id in them)."""

    messages: list[str] = field(default_factory=list)  # each a message's JSON envelope
    steps: list[dict[str, Any]] = field(default_factory=list)
    files: list[dict[str, Any]] = field(default_factory=list)
    entries: list[dict[str, Any]] = field(default_factory=list)

    def count(self) -> int:
        return len(self.messages) + len(self.steps) + len(self.files) + len(self.entries)


def harvest(conn: Connection, session_id: str) -> PipelineHistory:
    """The worker's session's rows, in the order written (a read: ``archive.read``)."""

    def rows(table: Any) -> list[dict[str, Any]]:
        found = conn.execute(
            select(table).where(table.c.session_id == session_id).order_by(table.c.seq)
        )
        return [{k: v for k, v in r._mapping.items() if k != "seq"} for r in found]

    envelopes = conn.execute(
        select(TRANSCRIPT.c.envelope)
        .where(TRANSCRIPT.c.session_id == session_id)
        .order_by(TRANSCRIPT.c.seq)
    )
    return PipelineHistory(
        messages=[str(e) for (e,) in envelopes],
        steps=rows(STEPS),
        files=rows(CHRONICLE_FILES),
        entries=rows(CHRONICLE_ENTRIES),
    )


def retargeted(history: PipelineHistory, session_id: str) -> list[Message[dict[str, Any]]]:
    """The attempt's messages, now the user's session's (a ``ValueError`` if one does not
    parse: the worker's archive is as untrusted as its repository)."""
    return [
        _MESSAGE.model_validate_json(e).model_copy(update={"session_id": session_id})
        for e in history.messages
    ]


def store_write(history: PipelineHistory, session_id: str) -> Any:
    """The archive write storing ``history`` under ``session_id`` once; it returns how
    many rows it stored (0: this attempt's history was stored already)."""
    messages = retargeted(history, session_id)
    transcript = [tuple(message_values(m).values()) for m in messages]

    def retarget(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{**row, "session_id": session_id} for row in rows]

    steps, files, entries = (retarget(history.steps), retarget(history.files),
                             retarget(history.entries))  # fmt: skip

    def fn(conn: Connection) -> int:
        if messages:
            seen = conn.execute(select(TRANSCRIPT.c.seq).where(TRANSCRIPT.c.id == messages[0].id))
            if seen.first() is not None:
                return 0
            driver_sql(conn, INSERT_TRANSCRIPT, transcript)
        for table, rows in ((STEPS, steps), (CHRONICLE_FILES, files),
                            (CHRONICLE_ENTRIES, entries)):  # fmt: skip
            if rows:
                conn.execute(insert(table), rows)
        return history.count()

    return fn
