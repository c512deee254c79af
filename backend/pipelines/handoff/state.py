"""What a pipeline hands its successor: the seed's ``PipelineHandoff``, bundled.

The Engineer's state (verbatim prompt, what was done, files changed, what remains,
context notes), the Inspector's (checks performed, fixes done and remaining with
file:line, validation per category) and the Tester's (tests created, results,
failures, coverage still needed) are read from the pipeline's shared
:class:`~backend.pipelines.context.PipelineContext`, deterministically: no model is
asked to remember what the pipeline already knows. :func:`handoff_prompt` is the text
the new pipeline's engineer starts from; the same model is stored for audit.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from backend.pipelines.context import InspectorFeedback, PipelineContext, TesterFeedback

ENGINEER_AT_95 = "engineer_context_95%"
USER_REQUEST = "user_request"
TEXT_MAX = 400  # characters of one accomplished line or failure in the bundle
NOTES_MAX = 2_000  # characters of context notes


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FileChange(_Part):
    path: str
    operation: Literal["created", "modified"]


class CompletedFix(_Part):
    file: str
    line: int | None = None
    text: str


class PendingFix(_Part):
    file: str
    line: int | None = None
    text: str
    priority: Literal["high", "normal"] = "normal"


class TestInfo(_Part):
    __test__ = False
    file: str
    name: str = ""


class TestResult(_Part):
    __test__ = False
    loop: int
    status: str
    passed: bool
    tests_run: int = 0
    tests_passed: int = 0


class FailureDesc(_Part):
    test: str
    error: str


class EngineerHandoffState(_Part):
    original_prompt: str  # verbatim
    accomplished: list[str] = Field(default_factory=list)
    files_changed: list[FileChange] = Field(default_factory=list)
    remaining: list[str] = Field(default_factory=list)
    context_notes: str = ""


class InspectorHandoffState(_Part):
    checks_performed: list[str] = Field(default_factory=list)
    fixes_completed: list[CompletedFix] = Field(default_factory=list)
    fixes_remaining: list[PendingFix] = Field(default_factory=list)
    validation_state: dict[str, bool] = Field(default_factory=dict)


class TesterHandoffState(_Part):
    tests_created: list[TestInfo] = Field(default_factory=list)
    test_results: list[TestResult] = Field(default_factory=list)
    failure_descs: list[FailureDesc] = Field(default_factory=list)
    coverage_needed: list[str] = Field(default_factory=list)


class ArchitectReview(_Part):
    """What the Architect made of the state: ``by`` says whether a model read it."""

    by: Literal["model", "pass-through"]
    notes: str = ""


class PipelineHandoff(_Part):
    old_pipeline_id: str
    new_pipeline_id: str = ""  # set once the Orchestrator created it
    session_id: str
    dag_id: str = ""  # the plan's id; "" for an @engineer request
    task_id: str
    handoff_reason: str
    timestamp: datetime
    handoff_index: int  # 1, 2, 3... along one task's chain
    context_fraction: float | None = None  # the engineer's context use that triggered it
    engineer_state: EngineerHandoffState
    inspector_state: InspectorHandoffState
    tester_state: TesterHandoffState
    review: ArchitectReview | None = None


def _short(text: str, limit: int = TEXT_MAX) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _is_test_file(path: str) -> bool:
    name = PurePosixPath(path).name
    parts = PurePosixPath(path).parts
    return (
        name.startswith("test_") or name.endswith(("_test.py", "_test.go", ".test.ts", ".test.js"))
        or ".spec." in name or "tests" in parts[:-1]
    )  # fmt: skip


def engineer_state(context: PipelineContext, prompt: str) -> EngineerHandoffState:
    files = [FileChange(path=p, operation="created") for p in context.created_files]
    files += [FileChange(path=p, operation="modified") for p in context.modified_files]
    remaining: list[str] = []
    if context.last_feedback:
        remaining.append(f"answer the latest check feedback: {_short(context.last_feedback)}")
    remaining += [f"the user asked: {_short(m)}" for m in context.user_messages]
    remaining.append("finish the task and leave the inspector's and tester's checks passing")
    said = [f"turn {n}: {_short(t)}" for n, t in enumerate(context.engineer_texts, 1) if t]
    notes = "\n".join([*context.notes, *context.constraints])
    return EngineerHandoffState(
        original_prompt=prompt,
        accomplished=said,
        files_changed=files,
        remaining=remaining,
        context_notes=notes[:NOTES_MAX],
    )


def _issue_keys(feedback: InspectorFeedback) -> dict[tuple[str, int | None, str], str]:
    return {(i.file, i.line, i.code or i.message): i.message for i in feedback.issues}


def inspector_state(context: PipelineContext) -> InspectorHandoffState:
    done = context.inspector_feedback
    checks = [f"loop {f.loop}: {'passed' if f.passed else 'failed'}" for f in done]
    for feedback in done:
        checks += [f"loop {feedback.loop}: {run.tool} {run.status}" for run in feedback.failed_runs]
    seen: dict[tuple[str, int | None, str], str] = {}
    for feedback in done:
        seen.update(_issue_keys(feedback))
    latest = _issue_keys(done[-1]) if done else {}
    fixed = [CompletedFix(file=k[0], line=k[1], text=v) for k, v in seen.items() if k not in latest]
    pending = [
        PendingFix(file=i.file, line=i.line, text=f"{i.tool} {i.code}: {i.message}".strip(),
                   priority="high" if i.severity == "error" else "normal")
        for i in (done[-1].issues if done else [])
    ]  # fmt: skip
    validation: dict[str, bool] = {}
    if done:
        categories = {str(i.category) for f in done for i in f.issues}
        for category in sorted(categories):
            validation[category] = not any(str(i.category) == category for i in done[-1].issues)
        validation["overall"] = done[-1].passed
    return InspectorHandoffState(
        checks_performed=checks,
        fixes_completed=fixed,
        fixes_remaining=pending,
        validation_state=validation,
    )


def _result(feedback: TesterFeedback) -> TestResult:
    return TestResult(
        loop=feedback.loop, status=feedback.status, passed=feedback.passed,
        tests_run=feedback.tests_run, tests_passed=feedback.tests_passed,
    )  # fmt: skip


def tester_state(context: PipelineContext) -> TesterHandoffState:
    touched = context.created_files + context.modified_files
    tests = [TestInfo(file=p) for p in touched if _is_test_file(p)]
    latest = context.tester_feedback[-1] if context.tester_feedback else None
    failures = [
        FailureDesc(test=f.name, error=_short(f.message or f.trace or f.kind))
        for f in (latest.failures if latest else [])
    ]
    sources = [p for p in touched if not _is_test_file(p)]
    coverage = [f"tests for {p}" for p in sources] if not tests else []
    return TesterHandoffState(
        tests_created=tests,
        test_results=[_result(f) for f in context.tester_feedback],
        failure_descs=failures,
        coverage_needed=coverage,
    )


def bundle(
    context: PipelineContext,
    prompt: str,
    *,
    session_id: str,
    old_pipeline_id: str,
    index: int,
    reason: str,
    dag_id: str = "",
    fraction: float | None = None,
    now: datetime | None = None,
) -> PipelineHandoff:
    """The Engineer collects its own state and the Inspector's and Tester's."""
    return PipelineHandoff(
        old_pipeline_id=old_pipeline_id,
        session_id=session_id,
        dag_id=dag_id,
        task_id=context.task_id,
        handoff_reason=reason,
        timestamp=now or datetime.now(UTC),
        handoff_index=index,
        context_fraction=fraction,
        engineer_state=engineer_state(context, prompt),
        inspector_state=inspector_state(context),
        tester_state=tester_state(context),
    )


def _lines(title: str, items: list[str]) -> list[str]:
    return [f"{title}:", *(f"- {i}" for i in items)] if items else [f"{title}: none"]


def _where(file: str, line: int | None) -> str:
    return f"{file}:{line}" if line is not None else file


def handoff_prompt(handoff: PipelineHandoff) -> str:
    """The new pipeline's first request: the bundled state, then the verbatim prompt."""
    e, i, t = handoff.engineer_state, handoff.inspector_state, handoff.tester_state
    fixed = [f"{_where(f.file, f.line)} {f.text}" for f in i.fixes_completed]
    valid = [f"{k}: {'pass' if v else 'fail'}" for k, v in i.validation_state.items()]
    out = [
        f"PIPELINE HANDOFF {handoff.handoff_index} (task {handoff.task_id}, from "
        f"{handoff.old_pipeline_id}; reason {handoff.handoff_reason}). You continue work "
        "another engineer pipeline began: do not redo what is done.",
        "## Engineer state",
        *_lines("Accomplished", e.accomplished),
        *_lines("Files changed", [f"{f.path} ({f.operation})" for f in e.files_changed]),
        *_lines("Remaining", e.remaining),
        *_lines("Context notes", e.context_notes.splitlines()),
        "## Inspector state",
        *_lines("Checks performed", i.checks_performed),
        *_lines("Fixes completed", fixed),
        *_lines("Fixes remaining", [f"[{f.priority}] {_where(f.file, f.line)} {f.text}"
                                    for f in i.fixes_remaining]),
        *_lines("Validation", valid),
        "## Tester state",
        *_lines("Tests created", [f"{x.file} {x.name}".strip() for x in t.tests_created]),
        *_lines("Results", [f"loop {r.loop}: {r.status} ({r.tests_passed}/{r.tests_run})"
                            for r in t.test_results]),
        *_lines("Failures", [f"{f.test}: {f.error}" for f in t.failure_descs]),
        *_lines("Coverage needed", t.coverage_needed),
    ]  # fmt: skip
    if handoff.review is not None and handoff.review.notes:
        out += [f"## Architect review ({handoff.review.by})", handoff.review.notes]
    out += ["## Original prompt (verbatim)", e.original_prompt]
    return "\n".join(out)
