"""``sylk sessions import FILE``: a session exported as JSON, back into an archive.

The file is untrusted (it may come from anyone): it is read whole, checked before anything
is written (a JSON object of :data:`~.document.FORMAT`, a version this Sylk reads, a valid
session and messages, lists of rows), and written in one transaction, so a bad file
leaves the archive as it was. Column names are taken only where the archive's own table
has them. A session whose id, or one of whose messages' ids, the archive already holds
is a conflict (:class:`ImportConflictError`) unless ``new_id``: then the session and
every id it owns get fresh ones, wherever the document names them. A session that was
in front when exported comes back suspended: the archive it joins has its own.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from backend.clock import utc_now
from backend.errors import ErrorKind, SylkError
from backend.messages import Message, message_text, new_id
from backend.sessions.models import Session, SessionState
from backend.sessions.ownership import SessionOwner
from sylk_tui.export.document import EXPORT_VERSION, FORMAT, SECTIONS

MAX_DOCUMENT_BYTES = 512 * 1024 * 1024
_ID = re.compile(r"\b[0-9a-f]{32}\b")
_ID_COLUMNS = {"snapshots": "id", "chronicle_entries": "id"}  # unique across sessions


class ExportFileError(SylkError):
    """The file is not a session export this Sylk can read."""

    error_kind = ErrorKind.INVALID

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(
            f"cannot import {path}: {reason}",
            help_hint="export it again with `sylk sessions export ID --format json`",
        )


class ExportVersionError(SylkError):
    """The export was written by a newer Sylk, in a version this one cannot read."""

    error_kind = ErrorKind.INVALID

    def __init__(self, path: Path, version: object) -> None:
        super().__init__(
            f"cannot import {path}: it is a version {version} export and this Sylk reads "
            f"up to version {EXPORT_VERSION}",
            help_hint="upgrade Sylk to import it",
        )


class ImportConflictError(SylkError):
    """The archive already holds the session (or one of its messages)."""

    error_kind = ErrorKind.CONFLICT

    def __init__(self, session: Session, what: str) -> None:
        super().__init__(
            f"this data dir already holds {what} of session {session.name!r} "
            f"({session.short_id}); import it as a copy with --new-id",
            help_hint="sylk sessions import FILE --new-id",
        )


def read_document(path: Path) -> dict[str, Any]:
    """The export in ``path``, checked to be one; raises :class:`ExportFileError`."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_DOCUMENT_BYTES + 1)
    except OSError as exc:
        raise ExportFileError(path, exc.strerror or str(exc)) from None
    if len(raw) > MAX_DOCUMENT_BYTES:
        raise ExportFileError(path, f"it is over {MAX_DOCUMENT_BYTES // 2**20} MiB")
    try:
        document = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ExportFileError(path, "it is not UTF-8 text") from None
    except ValueError as exc:
        raise ExportFileError(path, f"it is not JSON ({exc})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ExportFileError(path, f"it is not a {FORMAT} export")
    version = document.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ExportFileError(path, f"its version {version!r} is not a version number")
    if version > EXPORT_VERSION:
        raise ExportVersionError(path, version)
    return document


def parse(path: Path, document: dict[str, Any]) -> tuple[Session, list[Message[Any]]]:
    """The session and messages of a checked document; raises :class:`ExportFileError`."""
    try:
        session = Session.model_validate(document.get("session"))
        raw_messages = document.get("messages", [])
        if not isinstance(raw_messages, list):
            raise ExportFileError(path, "its messages are not a list")
        messages = [Message[dict[str, Any]].model_validate(m) for m in raw_messages]
    except ValidationError as exc:
        where = ".".join(map(str, exc.errors()[0]["loc"])) if exc.errors() else "?"
        raise ExportFileError(
            path, f"{exc.error_count()} invalid field(s), first {where}"
        ) from None
    if any(m.session_id != session.id for m in messages):
        raise ExportFileError(path, "a message belongs to another session")
    for name in SECTIONS:
        rows = document.get(name, [])
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise ExportFileError(path, f"its {name} are not a list of rows")
    return session, messages


def fresh_ids(document: dict[str, Any], session: Session, messages: list[Message[Any]]) -> Any:
    """``document`` with the session's and every owned row's id replaced by a new one."""
    owned = [session.id, *(m.id for m in messages)]
    for name, column in _ID_COLUMNS.items():
        owned += [str(r.get(column)) for r in document.get(name, [])]
    mapping = {old: new_id() for old in owned if _ID.fullmatch(old)}

    def swap(value: Any) -> Any:
        if isinstance(value, str):
            return _ID.sub(lambda m: mapping.get(m.group(0), m.group(0)), value)
        if isinstance(value, dict):
            return {swap(k): swap(v) for k, v in value.items()}
        if isinstance(value, list):
            return [swap(v) for v in value]
        return value

    return swap(document)


def import_session(
    path: Path,
    data_dir: Path,
    *,
    new_id: bool = False,
    owner: SessionOwner | None = None,
    url: str | None = None,
) -> Session:
    """Import the session exported to ``path`` into the archive in ``data_dir`` (or at
    ``url``, the configured ``database_url``: a team's PostgreSQL); with ``owner``, as the
    importer's (an engine runs only the sessions its user owns)."""
    from backend.archive.store import Archive

    document = read_document(path)
    session, messages = parse(path, document)
    if new_id:
        document = fresh_ids(document, session, messages)
        session, messages = parse(path, document)
    if owner is not None:
        session = session.model_copy(update={"owner": owner})
    if session.state is SessionState.ACTIVE:
        session = session.model_copy(
            update={"state": SessionState.SUSPENDED, "suspended_at": utc_now()}
        )
    archive = Archive(data_dir, url=url)
    try:
        _refuse_conflicts(archive, session, messages)
        archive.write(lambda conn: _write(conn, path, document, session, messages))
    finally:
        archive.close()
    return session


def _refuse_conflicts(archive: Any, session: Session, messages: list[Message[Any]]) -> None:
    from backend.archive.dialects import driver_sql

    def held(conn: Any) -> tuple[bool, bool]:
        has_session = driver_sql(conn, "SELECT 1 FROM sessions WHERE id = ?", (session.id,)).first()
        ids = [m.id for m in messages]
        has_message = any(
            driver_sql(
                conn,
                f"SELECT 1 FROM transcript WHERE id IN ({','.join('?' * len(chunk))})",
                tuple(chunk),
            ).first()
            for chunk in (ids[i : i + 500] for i in range(0, len(ids), 500))
        )
        return has_session is not None, has_message

    has_session, has_message = archive.read(held)
    if has_session:
        raise ImportConflictError(session, "the id")
    if has_message:
        raise ImportConflictError(session, "messages")


def _write(
    conn: Any,
    path: Path,
    document: dict[str, Any],
    session: Session,
    messages: list[Message[Any]],
) -> None:
    from sqlalchemy.exc import IntegrityError, InterfaceError, ProgrammingError

    from backend.archive.dialects import driver_sql
    from backend.archive.store import Archive

    Archive.upsert_sessions([session])(conn)
    if messages:  # an empty executemany is an error on the drivers, not a write of nothing
        driver_sql(
            conn,
            "INSERT INTO transcript (id, session_id, type, source, timestamp, text, envelope) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (m.id, session.id, m.type.value, m.source, m.timestamp.isoformat(),
                 message_text(m), m.model_dump_json())
                for m in messages
            ],
        )  # fmt: skip
    for name, section in SECTIONS.items():
        rows = document.get(name, [])
        if not rows:
            continue
        columns = _columns(conn, section.table)
        for row in rows:
            values = {k: _cell(v, columns[k]) for k, v in row.items() if k in columns}
            for column in section.json_columns:
                if column in values and not isinstance(values[column], str):
                    values[column] = json.dumps(values[column], ensure_ascii=False)
            names = ["session_id", *values]
            sql = (
                f"INSERT INTO {section.table} ({', '.join(names)}) "
                f"VALUES ({', '.join('?' * len(names))})"
            )
            try:
                driver_sql(conn, sql, (session.id, *values.values()))
            except (IntegrityError, InterfaceError, ProgrammingError) as exc:
                raise ExportFileError(
                    path, f"a row of its {name} is refused ({exc.orig})"
                ) from None


def _columns(conn: Any, table: str) -> dict[str, bool]:
    """The table's columns a row may fill (not its key or session), each with whether it
    is a boolean: an export from SQLite writes those as 0 and 1, PostgreSQL wants bools."""
    from sqlalchemy import Boolean, inspect

    return {
        str(c["name"]): isinstance(c["type"], Boolean)
        for c in inspect(conn).get_columns(table)
        if c["name"] not in ("seq", "session_id")
    }


def _cell(value: Any, boolean: bool) -> Any:
    return bool(value) if boolean and isinstance(value, int) else value
