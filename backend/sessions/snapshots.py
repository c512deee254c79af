"""The workflow half of a session snapshot, and the errors of snapshotting.

A :class:`~backend.sessions.models.SessionSnapshot` holds the session itself (context,
config, metadata, phase) and, since document version 2, a :class:`WorkflowState`: what
the seed's Session Context Preservation names beside it. Each DAG's node records (which
passed, ran, waited), the questions still waiting for the user, each agent's loaded ops,
compaction and conversation tail, the Guide's routes for the session, and (version 3)
the session's bus messages not yet delivered. The whole document is
one versioned JSON value in the archive's ``snapshots`` table; a version this Sylk does
not know, or a value that does not parse, is :class:`SnapshotUnreadableError`, never a
traceback. Kept free of I/O: the engine captures and restores (``engine.lifecycle``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from backend.errors import ErrorKind, SylkError

SNAPSHOT_VERSION = 3
"""1: the session alone (older rows); 2: the session and its :class:`WorkflowState`;
3: also the session's undelivered bus messages and each agent's compaction."""

LABEL_MAX = 80
TAIL_MESSAGES = 20  # an agent's conversation tail: its last messages, as a model would read
TAIL_TEXT_MAX = 2000  # characters kept of each tail message


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NodeSnapshot(_Model):
    """One node's record as the DAG state store kept it (``orchestration.NodeRecord``)."""

    status: str
    attempts: int = 0
    output: Any = None
    error: str | None = None
    duration_s: float | None = None
    digest: str = ""


class DagSnapshot(_Model):
    """One plan's DAG: its entry in the session's ``dags`` record and its node records."""

    plan_id: str
    dag_id: str
    status: str
    nodes: dict[str, NodeSnapshot] = Field(default_factory=dict)

    def with_status(self, status: str) -> list[str]:
        return sorted(n for n, r in self.nodes.items() if r.status == status)


class PendingQuestion(_Model):
    """A question the user had not answered (its future cannot be kept: the flow that
    asked asks again when it resumes; the restore says which were waiting)."""

    id: str
    kind: str
    text: str


class TailMessage(_Model):
    id: str
    source: str
    type: str
    text: str


class AgentSnapshot(_Model):
    """One agent's state in the session: the ops it had loaded, its conversation's tail
    (the messages after its last compaction), and that compaction's summary and the
    task's verbatim prompt when it had one. A restore makes these its context."""

    loaded_ops: list[str] = Field(default_factory=list)
    tail: list[TailMessage] = Field(default_factory=list)
    summary: str | None = None
    prompt: str | None = None


PendingHeld = Literal["inbox", "retry", "dead_letter"]


class PendingMessage(_Model):
    """A bus message of the session not delivered at the snapshot: queued in an agent's
    inbox, waiting for a retry, or dead-lettered. ``request``: its sender awaited a reply
    (that wait cannot be kept, so a restore lists it and does not send it again)."""

    message: dict[str, Any]  # the envelope as JSON (``backend.messages.Message``)
    held: PendingHeld
    request: bool = False
    reason: str | None = None  # a dead letter's reason
    error: str | None = None


class GuideRoute(_Model):
    """A line the Guide routed in the session and where it went (its route cache entry)."""

    text: str
    decision: dict[str, Any]


class WorkflowState(_Model):
    dags: list[DagSnapshot] = Field(default_factory=list)
    pending_questions: list[PendingQuestion] = Field(default_factory=list)
    agents: dict[str, AgentSnapshot] = Field(default_factory=dict)
    guide_routes: list[GuideRoute] = Field(default_factory=list)
    pending_messages: list[PendingMessage] = Field(default_factory=list)


def checked_label(label: str | None) -> str | None:
    """A snapshot's label: one line, at most LABEL_MAX characters ('' is no label)."""
    if label is None:
        return None
    line = " ".join(label.split())
    if len(line) > LABEL_MAX:
        raise SnapshotRequestError(
            f"a snapshot label holds at most {LABEL_MAX} characters", help_hint="shorten it"
        )
    return line or None


class SnapshotRequestError(SylkError):
    error_kind = ErrorKind.INVALID


class SnapshotNotFoundError(SylkError):
    """No snapshot has this id (or unique id prefix or label) for the session."""

    error_kind = ErrorKind.NOT_FOUND

    def __init__(self, ref: str, session_name: str) -> None:
        super().__init__(
            f"no snapshot {ref!r} of session {session_name!r}",
            help_hint="/session snapshot lists them; sylk sessions snapshot ID --list",
            details={"reason": "snapshot_not_found", "snapshot": ref},
        )


class SnapshotUnreadableError(SylkError):
    """The stored document does not parse, or was written by a newer Sylk."""

    error_kind = ErrorKind.CONFLICT

    def __init__(self, snapshot_id: str, why: str) -> None:
        super().__init__(
            f"snapshot {snapshot_id[:8]} cannot be read: {why}",
            help_hint="it is kept as it is; take a new snapshot",
            details={"reason": "snapshot_unreadable", "snapshot": snapshot_id},
        )


class SessionRunningError(SylkError):
    """The session is running (a turn, a DAG): restoring or closing it now would pull
    state from under work in flight."""

    error_kind = ErrorKind.CONFLICT

    def __init__(self, session_name: str, what: str, action: str) -> None:
        super().__init__(
            f"session {session_name!r} is running ({what}); {action} it once that stops",
            help_hint="wait, or stop it: Esc for a turn, /plan cancel for a DAG",
            details={"reason": "session_running", "running": what},
        )
