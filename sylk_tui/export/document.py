"""The whole session as one JSON document: what ``sylk sessions import`` reads back.

Besides the session and its messages, the document carries every archive row the
session owns, one section per table (:data:`SECTIONS`): its plans (every version), its
agents' steps (the engineer's, inspector's and tester's pipeline steps among them), its
usage, its phase moves, snapshots and chronicle entries and files; and, to read only, its
DAGs with each node's state and the usage summed per agent. Columns the archive keeps as
JSON text are decoded, so the document reads as one JSON tree.

Every string in it has been through the export :class:`~.scrubbing.Scrubber` before it is
written: an export never holds a secret, so neither does a session imported from one.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from backend.clock import utc_now
from backend.messages import Message
from backend.sessions.models import Session
from sylk_tui.export.scrubbing import Scrubber

if TYPE_CHECKING:
    from backend.engine import Engine

FORMAT = "sylk-session"
EXPORT_VERSION = 2
"""1: the session and its messages. 2: every row the session owns (:data:`SECTIONS`),
its DAGs and usage summary. A document of a newer version is refused on import."""


@dataclass(frozen=True)
class Section:
    """One archive table in the document: its rows for the session, in the order written."""

    table: str
    json_columns: tuple[str, ...] = ()
    order: str = "seq"


SECTIONS: dict[str, Section] = {
    "plans": Section("plans", ("document",)),
    "steps": Section("agent_steps", ("data",)),
    "usage": Section("usage"),
    "phases": Section("session_phases"),
    "snapshots": Section("snapshots", ("data",), order="created_at"),
    "chronicle_entries": Section("chronicle_entries", ("data",)),
    "chronicle_files": Section("chronicle_files", ("changes",)),
}
DROPPED_COLUMNS = ("seq", "session_id")  # the archive's row number; the session is the document's


def decode_row(row: dict[str, Any], section: Section) -> dict[str, Any]:
    out = {k: v for k, v in row.items() if k not in DROPPED_COLUMNS}
    for column in section.json_columns:
        if isinstance(out.get(column), str):
            with contextlib.suppress(ValueError):  # else kept as the text it is
                out[column] = json.loads(out[column])
    return out


async def session_rows(engine: Engine, session_id: str) -> dict[str, list[dict[str, Any]]]:
    """The session's rows of every table in :data:`SECTIONS`, from the engine's archive."""
    from backend.archive.store import Archive

    archive = engine.archive
    if not isinstance(archive, Archive):  # a reader of another kind holds no tables
        return {name: [] for name in SECTIONS}

    def read(conn: Any) -> dict[str, list[dict[str, Any]]]:
        found: dict[str, list[dict[str, Any]]] = {}
        for name, section in SECTIONS.items():
            sql = f"SELECT * FROM {section.table} WHERE session_id = ? ORDER BY {section.order}"
            rows = conn.exec_driver_sql(sql, (session_id,)).mappings().all()
            found[name] = [decode_row(dict(r), section) for r in rows]
        return found

    rows: dict[str, list[dict[str, Any]]] = await archive.aread(read)
    return rows


async def whole_session(engine: Engine, session: Session, scrubber: Scrubber) -> dict[str, Any]:
    """The document of ``session``, scrubbed: everything the archive holds of it."""
    transcript = await engine.transcript(session.id)
    dags = await engine.dag_status(session.id)
    usage = engine.usage(session.id)
    document = {
        **header(session, transcript),
        **await session_rows(engine, session.id),
        "dags": dags,
        "usage_summary": {
            **usage.model_dump(mode="json"),
            "total": usage.total.model_dump(mode="json"),
            "cost_usd": usage.cost_usd,
        },
    }
    scrubbed: dict[str, Any] = scrubber.data(document)
    return scrubbed


def header(session: Session, transcript: list[Message[dict[str, Any]]]) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": EXPORT_VERSION,
        "exported_at": utc_now().isoformat(),
        "session": session.model_dump(mode="json"),
        "messages": [m.model_dump(mode="json") for m in transcript],
    }


def dumps(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
