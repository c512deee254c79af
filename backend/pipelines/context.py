"""What a pipeline's engineer, inspector and tester share, and what the pipeline reports.

Pydantic models, so the context crosses the pipeline bus, the archive or an engine event
as JSON unchanged. :class:`PipelineContext` is the seed's shared context: the task, what
upstream nodes produced, the files the engineer touched (accumulated over its turns) and
the feedback of every loop, so the engineer's next turn sees why its last one failed.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from backend.pipelines.checks import InspectionIssue, TestFailure, ToolRun

MAX_LOOPS = 3


class PipelineState(StrEnum):
    CREATED = "created"
    RUNNING = "running"  # the engineer's turn
    INSPECTING = "inspecting"
    TESTING = "testing"
    WAITING_FOR_USER = "waiting_for_user"  # at the loop limit: ignore or fail?
    COMPLETED = "completed"
    FAILED = "failed"  # also a cancelled pipeline, with reason "interrupted"


TERMINAL = frozenset({PipelineState.COMPLETED, PipelineState.FAILED})
INTERRUPTED = "interrupted"


class EngineerResult(BaseModel):
    """One engineer turn: what it said and which files it wrote (workspace-relative)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str = ""
    modified_files: list[str] = Field(default_factory=list)
    created_files: list[str] = Field(default_factory=list)


class InspectorFeedback(BaseModel):
    """The inspector's verdict on one loop; ``text`` is what the engineer is told."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    loop: int
    passed: bool
    issues: list[InspectionIssue] = Field(default_factory=list)
    failed_runs: list[ToolRun] = Field(default_factory=list)
    text: str = ""


class TesterFeedback(BaseModel):
    """The tester's verdict on one loop; ``text`` is what the engineer is told."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    loop: int
    passed: bool
    status: str
    tests_run: int = 0
    tests_passed: int = 0
    failures: list[TestFailure] = Field(default_factory=list)
    text: str = ""


class PipelineContext(BaseModel):
    """Shared by the three roles of one pipeline; the pipeline is its only writer."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    task_prompt: str
    constraints: list[str] = Field(default_factory=list)
    compliance_criteria: list[str] = Field(default_factory=list)
    upstream_outputs: dict[str, Any] = Field(default_factory=dict)
    modified_files: list[str] = Field(default_factory=list)
    created_files: list[str] = Field(default_factory=list)
    inspector_feedback: list[InspectorFeedback] = Field(default_factory=list)
    tester_feedback: list[TesterFeedback] = Field(default_factory=list)
    user_messages: list[str] = Field(default_factory=list)  # /task ID prompt TEXT
    engineer_texts: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)  # what was ignored or skipped, and why
    loop: int = 0  # engineer turns so far

    @property
    def last_feedback(self) -> str:
        """The feedback the engineer's next turn answers: the newest of either kind."""
        latest: list[tuple[int, int, str]] = [
            (f.loop, 0, f.text) for f in self.inspector_feedback if not f.passed
        ]
        latest += [(f.loop, 1, f.text) for f in self.tester_feedback if not f.passed]
        return max(latest)[2] if latest else ""

    def add_files(self, result: EngineerResult) -> None:
        for name, into in (
            (result.modified_files, self.modified_files),
            (result.created_files, self.created_files),
        ):
            into.extend(f for f in name if f not in into)


class PipelineEvent(BaseModel):
    """One transition, for the engine's event stream and the UI."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str
    state: PipelineState
    loop: int
    detail: str = ""


class PipelineResult(BaseModel):
    """How a pipeline ended; the context keeps everything that happened on the way."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str
    state: PipelineState
    success: bool
    reason: str = ""
    loops_used: int
    context: PipelineContext
