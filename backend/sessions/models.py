"""Session data model: the seed's Session, SessionContext, SessionConfig, snapshot."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from backend.clock import utc_now
from backend.messages import new_id
from backend.session_states import SessionState as SessionState  # noqa: PLC0414 (re-exported)
from backend.sessions.ownership import SessionOwner
from backend.sessions.phases import SessionPhase
from backend.sessions.snapshots import WorkflowState

# The seed's lifecycle, and nothing else: (from, operation) -> to.
TRANSITIONS: dict[tuple[SessionState, str], SessionState] = {
    (SessionState.CREATED, "activate"): SessionState.ACTIVE,
    (SessionState.ACTIVE, "suspend"): SessionState.SUSPENDED,
    (SessionState.ACTIVE, "complete"): SessionState.COMPLETED,
    (SessionState.ACTIVE, "fail"): SessionState.FAILED,
    (SessionState.SUSPENDED, "resume"): SessionState.ACTIVE,
    (SessionState.SUSPENDED, "complete"): SessionState.COMPLETED,
    # Beyond the seed: a background session's work (its DAG) can fail for good too.
    (SessionState.SUSPENDED, "fail"): SessionState.FAILED,
}


def allowed_operations(state: SessionState) -> list[str]:
    return [op for (src, op) in TRANSITIONS if src is state]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class FileRecord(_Model):
    path: str
    at: datetime = Field(default_factory=utc_now)
    hash: str | None = None
    source: str | None = None  # the op that touched it


class Note(_Model):
    """A session-local pattern, failure or user intent."""

    text: str
    at: datetime = Field(default_factory=utc_now)
    source: str | None = None


class AgentState(_Model):
    role: str
    status: str = "idle"
    detail: str | None = None


class SessionContext(_Model):
    """Session-private state; never visible to another session."""

    current_task: str | None = None
    current_step: str | None = None
    current_objective: str | None = None
    completed_steps: list[str] = Field(default_factory=list)
    next_steps: list[str] = Field(default_factory=list)
    blockers: list[str] = Field(default_factory=list)
    modified_files: dict[str, FileRecord] = Field(default_factory=dict)
    read_files: dict[str, FileRecord] = Field(default_factory=dict)
    created_files: dict[str, FileRecord] = Field(default_factory=dict)
    local_patterns: list[Note] = Field(default_factory=list)
    local_failures: list[Note] = Field(default_factory=list)
    user_wants: list[Note] = Field(default_factory=list)
    user_rejects: list[Note] = Field(default_factory=list)
    active_agents: dict[str, AgentState] = Field(default_factory=dict)
    conversation_id: str | None = None
    message_history: list[str] = Field(default_factory=list)


# Every key a SessionConfig row had before ``revision``: a stored row has them all.
_REVISION_1_KEYS = frozenset(
    {
        "max_concurrent_tasks",
        "max_engineers",
        "task_timeout",
        "session_timeout",
        "auto_suspend_after",
        "enable_git_isolation",
    }
)


class SessionConfig(_Model):
    """Per-session resource limits."""

    max_concurrent_tasks: int = Field(default=4, ge=1)
    max_engineers: int = Field(default=4, ge=1)
    task_timeout: timedelta = Field(default=timedelta(minutes=30))
    session_timeout: timedelta | None = None
    auto_suspend_after: timedelta | None = None
    # None: follow ``[sessions] git_isolation``; True/False: this session's own choice.
    enable_git_isolation: bool | None = None
    revision: int = 2  # 2: enable_git_isolation is a choice (see _legacy_isolation)

    @model_validator(mode="before")
    @classmethod
    def _legacy_isolation(cls, data: Any) -> Any:
        """A row stored before revision 2 holds ``enable_git_isolation: false`` only as
        the old default (nothing could set it then): it reads as None, "follow the config".
        Such a row is told by having every old key and no ``revision``."""
        stored_before = isinstance(data, dict) and "revision" not in data
        if stored_before and data.keys() >= _REVISION_1_KEYS and not data["enable_git_isolation"]:
            return {**data, "enable_git_isolation": None}
        return data


class Session(_Model):
    id: str = Field(default_factory=new_id)
    name: str = Field(min_length=1, max_length=120)
    state: SessionState = SessionState.CREATED
    # Where its planned work stands (``phases``); archives written before phases read as idle.
    phase: SessionPhase = SessionPhase.IDLE
    workspace: str
    created_at: datetime = Field(default_factory=utc_now)
    activated_at: datetime | None = None
    suspended_at: datetime | None = None
    completed_at: datetime | None = None
    closed_at: datetime | None = None
    last_active_at: datetime = Field(default_factory=utc_now)
    context: SessionContext = Field(default_factory=SessionContext)
    active_dag_id: str | None = None
    dag_history: list[str] = Field(default_factory=list)
    branch_name: str | None = None
    base_branch: str | None = None
    config: SessionConfig = Field(default_factory=SessionConfig)
    metadata: dict[str, Any] = Field(default_factory=dict)
    # Who made it, where (``ownership``); None: written before owners, read as the reader's.
    owner: SessionOwner | None = None

    @property
    def short_id(self) -> str:
        return self.id[:8]

    @property
    def is_terminal(self) -> bool:
        return self.state in (SessionState.COMPLETED, SessionState.FAILED)


class SessionSnapshot(_Model):
    """What is preserved of a session: itself (context included) at a moment, and
    (``version`` 2) its workflow state (``snapshots.WorkflowState``)."""

    id: str = Field(default_factory=new_id)
    version: int = 1
    session: Session
    transcript_count: int = 0
    created_at: datetime = Field(default_factory=utc_now)
    label: str | None = None
    workflow: WorkflowState | None = None
