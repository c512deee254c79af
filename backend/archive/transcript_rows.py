"""A transcript read from the archive row by row, a damaged row skipped and named.

One row whose envelope no longer parses (a disk error, a hand edit, a write from an
older build) must not hide a session's whole history: the readable messages come
back in order as a :class:`ReadTranscript`, which names each skipped row (session,
``seq``, message id, why) in ``unreadable``. A front end says so with
:meth:`ReadTranscript.problem` (a typed :class:`UnreadableRowsError`, never the
parser's own text); a reader that needs every message calls
:meth:`ReadTranscript.require_whole`. Nothing is deleted: the row stays in the file.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from backend.errors import ArchiveCorruptError, ErrorKind
from backend.messages import Message, message_text

_MODEL = Message[dict[str, Any]]
_REASON_MAX = 120
INSERT_TRANSCRIPT = (
    "INSERT INTO transcript (id, session_id, type, source, timestamp, text, envelope) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)


def message_values(message: Message[Any]) -> dict[str, Any]:
    """``message`` as a transcript row (the values of :data:`INSERT_TRANSCRIPT`)."""
    return {
        "id": message.id,
        "session_id": message.session_id,
        "type": message.type.value,
        "source": message.source,
        "timestamp": message.timestamp.isoformat(),
        "text": message_text(message),
        "envelope": message.model_dump_json(),
    }


@dataclass(frozen=True, slots=True)
class UnreadableRow:
    """A transcript row that could not be read back as a message."""

    session_id: str
    seq: int
    message_id: str
    reason: str


class UnreadableRowsError(ArchiveCorruptError):
    """Rows of a session's transcript could not be read; the rest can be."""

    error_kind = ErrorKind.CONFLICT

    def __init__(
        self, rows: tuple[UnreadableRow, ...], path: Path, name: str | None = None
    ) -> None:
        session = name or rows[0].session_id
        seqs = ", ".join(str(r.seq) for r in rows[:5]) + (", …" if len(rows) > 5 else "")
        what = "1 message" if len(rows) == 1 else f"{len(rows)} messages"
        where = "row" if len(rows) == 1 else "rows"
        super().__init__(
            f"{what} of {session} could not be read ({where} {seqs} in {path}); the rest is shown",
            help_hint=f"the {where} {'stays' if len(rows) == 1 else 'stay'} in the file "
            "untouched; /export saves what is readable",
            details={
                "reason": "unreadable_rows",
                "session_id": rows[0].session_id,
                "rows": [{"seq": r.seq, "id": r.message_id, "why": r.reason} for r in rows],
            },
        )
        self.rows = rows
        self.path = path


class ReadTranscript(list[Message[dict[str, Any]]]):
    """The readable messages, oldest first; ``unreadable`` names the rows skipped."""

    def __init__(
        self,
        messages: Iterable[Message[dict[str, Any]]] = (),
        *,
        unreadable: tuple[UnreadableRow, ...] = (),
        path: Path | None = None,
    ) -> None:
        super().__init__(messages)
        self.unreadable = unreadable
        self.path = path or Path()

    def problem(self, name: str | None = None) -> UnreadableRowsError | None:
        """What was skipped, as a typed error naming the session (``name``) and rows."""
        if not self.unreadable:
            return None
        return UnreadableRowsError(self.unreadable, self.path, name)

    def require_whole(self) -> ReadTranscript:
        """This transcript, or :class:`UnreadableRowsError` when a row was skipped."""
        problem = self.problem()
        if problem is not None:
            raise problem
        return self


def read_rows(session_id: str, rows: Iterable[tuple[int, str, str]], path: Path) -> ReadTranscript:
    """``(seq, id, envelope)`` rows as messages; a row that does not parse is skipped."""
    messages: list[Message[dict[str, Any]]] = []
    unreadable: list[UnreadableRow] = []
    for seq, message_id, envelope in rows:
        try:
            messages.append(_MODEL.model_validate_json(envelope))
        except ValidationError as exc:
            unreadable.append(UnreadableRow(session_id, seq, str(message_id), _reason(exc)))
    return ReadTranscript(messages, unreadable=tuple(unreadable), path=path)


def _reason(exc: ValidationError) -> str:
    """Why a row failed, in a few words (the parser's rule, never the row's content)."""
    first = exc.errors(include_url=False, include_input=False)[0]
    if first["type"] == "json_invalid":
        return "its envelope is not valid JSON"
    field = ".".join(str(part) for part in first["loc"]) or "envelope"
    more = exc.error_count() - 1
    reason = f"{field}: {first['msg']}" + (f" (and {more} more)" if more else "")
    return reason[:_REASON_MAX]
