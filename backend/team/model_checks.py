"""A pipeline's checks with the model's part: task compliance and tests the engineer writes.

:class:`ModelChecks` wraps the project's own tools (:class:`SandboxedChecks`) and keeps
the :class:`~backend.pipelines.pipeline_checks.PipelineChecker` seam, so the pipeline's
loop does not change:

- **Compliance.** Once the tools pass (judging code that does not lint wastes a turn),
  a task with compliance criteria gets an inspector turn that judges the diff of the
  pipeline's files against them and the task's prompt; each criterion not met becomes
  an inspection issue of category ``compliance`` (file, message, the model's
  suggestion), which goes back to the engineer as feedback, like a lint finding. The
  diff changes between loops, so it is judged again on each loop that reaches it.
- **Tests.** At the first test stage, when the pipeline changed source code (a file in
  the language of the discovered test framework, not docs or config) and no test is
  relevant to any of it, the engineer is asked, in one turn of this pipeline, to write
  tests for the task; the files it wrote join the pipeline's files (so later loops
  inspect them) and the test run.

With no model for the role (or a turn that does not answer), the step is skipped and the
pipeline's notes say so: the completion summary lists them as deferred, never as passed.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backend.agents.answering import pipeline_turn
from backend.agents.tool_actions import EDIT_OPS, actions_from_payload
from backend.checkpoints.task_ledger import task_tag
from backend.guide.routing.decision import RouteDecision, Target
from backend.knowledge.tool_discovery.models import ToolCategory
from backend.messages import MessageType
from backend.pipelines.checks import InspectionIssue, InspectionReport, IssueCategory, TestReport
from backend.pipelines.checks.inspector import discovered_tools
from backend.pipelines.checks.paths import workspace_relative
from backend.pipelines.checks.results import CheckPathError
from backend.pipelines.checks.test_targets import has_tests
from backend.pipelines.checks.tester import FRAMEWORKS
from backend.pipelines.context import EngineerResult, PipelineContext
from backend.pipelines.pipeline_checks import PipelineChecker, SandboxedChecks
from backend.team.agent_ops.inspector_ops import (
    DIFF_MAX,
    AskAgent,
    Record,
    compliance_verdicts,
    diff_of_files,
)
from backend.team.agent_ops.tester_ops import is_test_file

COMPLIANCE_MARKER = "Compliance check of task"  # starts every compliance request
TESTS_MARKER = "Write tests for task"  # starts every test-writing request
NO_MODEL_COMPLIANCE = "compliance not checked: no model"
NO_MODEL_TESTS = "tests not written: no model"
_SOURCE = {  # the languages each framework tests, as relevant_tests reads them
    "python": re.compile(r"\.py$"),
    "node": re.compile(r"\.[cm]?[jt]sx?$"),
    "go": re.compile(r"\.go$"),
}
# (session_id, workspace) -> the session's changes as a unified diff
SessionPatch = Callable[[str, Path], Awaitable[str]]


@dataclass(frozen=True)
class PipelineSeat:
    """What one pipeline gives its model checks: where it runs, its shared context, and
    how its engineer's turns are asked (``request``: the task as the engineer got it;
    ``tag``: the plan task its edits are recorded under)."""

    session_id: str
    workspace: Path
    context: PipelineContext
    ask: AskAgent
    request: str
    tag: str | None = None


@dataclass
class ModelCheckParts:
    """The engine's side: whether a role has a model, and the session's diff. Called
    with a pipeline's tools and seat, it makes that pipeline's checker."""

    has_model: Callable[[str], bool]
    patch: SessionPatch

    def __call__(self, tools: SandboxedChecks, seat: PipelineSeat) -> PipelineChecker:
        return ModelChecks(tools, seat, self.has_model, self.patch)


def _answered(record: Record) -> str | None:
    """The turn's text, or None when it stopped without an answer."""
    stop = record.payload.get("stop")
    if record.type is MessageType.SYSTEM_NOTICE or stop not in (None, "final", "truncated"):
        return None
    return str(record.payload.get("text") or "")


def _why_not(record: Record) -> str:
    payload = record.payload
    return str(payload.get("error") or payload.get("text") or f"stopped ({payload.get('stop')})")


@dataclass
class ModelChecks:
    """One pipeline's checker: the tools, then the model's compliance and tests."""

    tools: SandboxedChecks
    seat: PipelineSeat
    has_model: Callable[[str], bool]
    patch: SessionPatch
    _tested: bool = field(default=False, init=False)

    @property
    def context(self) -> PipelineContext:
        return self.seat.context

    def _note(self, text: str) -> None:
        if text not in self.context.notes:
            self.context.notes.append(text)

    async def _turn(self, role: Target, text: str, *, tagged: bool) -> Record:
        decision = RouteDecision(target=role, confidence=1.0, tier="dsl", text=text)
        with pipeline_turn(), task_tag(self.seat.tag if tagged else None):
            return await self.seat.ask(self.seat.session_id, decision)

    # -- inspection --------------------------------------------------------------------
    async def inspect(self, files: Sequence[str]) -> InspectionReport:
        report = await self.tools.inspect(files)
        criteria = self.context.compliance_criteria
        if not report.clean or not criteria:
            return report
        if not self.has_model(Target.INSPECTOR.value):
            self._note(NO_MODEL_COMPLIANCE)
            return report
        found = await self.compliance(list(files), criteria)
        return report.model_copy(update={"issues": [*report.issues, *found]}) if found else report

    async def compliance(self, files: list[str], criteria: list[str]) -> list[InspectionIssue]:
        """The criteria not met, as issues; a turn that does not judge leaves a note."""
        patch = await self.patch(self.seat.session_id, self.seat.workspace)
        diff = diff_of_files(patch, files)[:DIFF_MAX]
        context = self.context
        text = "\n".join([
            f"{COMPLIANCE_MARKER} {context.task_id} (loop {context.loop}).",
            "Judge this change against each compliance criterion and the task. Answer with "
            "JSON only:",
            '{"criteria": [{"criterion": "...", "met": true, "why": "...", '
            '"file": "the file to change, if not met", "suggestion": "how to meet it"}]}',
            f"The task: {context.task_prompt}",
            "Criteria:", *(f"- {c}" for c in criteria),
            f"Files the task changed: {', '.join(files) or 'none'}",
            "Their diff:", diff or "(no recorded change to these files)",
        ])  # fmt: skip
        record = await self._turn(Target.INSPECTOR, text, tagged=False)
        said = _answered(record)
        if said is None:
            self._note(f"compliance not checked at loop {context.loop}: {_why_not(record)}")
            return []
        verdicts = compliance_verdicts(said)
        if verdicts is None:
            self._note(f"compliance unclear at loop {context.loop}: the inspector did not "
                       "answer with the asked JSON")  # fmt: skip
            return []
        return [self._issue(v, files) for v in verdicts if v.get("met") is not True]

    @staticmethod
    def _issue(verdict: dict[str, Any], files: list[str]) -> InspectionIssue:
        named = str(verdict.get("file") or "")
        file = named if named in files else (files[0] if len(files) == 1 else "")
        criterion = str(verdict.get("criterion") or "?")
        why = str(verdict.get("why") or "")
        return InspectionIssue(
            file=file,
            category=IssueCategory.COMPLIANCE,
            code="criterion",
            message=f"not met: {criterion}" + (f": {why}" if why else ""),
            suggestion=str(verdict.get("suggestion") or ""),
            tool="inspector (model)",
        )

    # -- tests -------------------------------------------------------------------------
    async def test(self, files: Sequence[str]) -> TestReport:
        wanted = list(files)
        if not self._tested:
            self._tested = True
            wanted += await self._tests_written(wanted)
        return await self.tools.test(list(dict.fromkeys(wanted)))

    async def _tests_written(self, files: list[str]) -> list[str]:
        """Test files the engineer wrote for the untested source ``files`` (none: [])."""
        framework, untested = await asyncio.to_thread(self.untested, files)
        if not untested:
            return []
        if not self.has_model(Target.ENGINEER.value):
            self._note(NO_MODEL_TESTS)
            return []
        context = self.context
        text = "\n".join([
            f"{TESTS_MARKER} {context.task_id}: {context.task_prompt}",
            f"Your change touched {', '.join(untested)}, and no {framework} test covers "
            f"{'it' if len(untested) == 1 else 'them'}. Write {framework} tests that check "
            "the task is done, in new test files following the project's conventions "
            "(pytest: tests/test_<module>.py). Do not change the code under test; do not run "
            "the tests: the tester runs them next.",
            "", "The task as you were given it:", self.seat.request,
        ])  # fmt: skip
        record = await self._turn(Target.ENGINEER, text, tagged=True)
        if _answered(record) is None:
            self._note(f"tests not written: the engineer did not answer: {_why_not(record)}")
            return []
        written = self._written(record)
        if not written:
            self._note("tests not written: the engineer wrote no file")
            return []
        known = {*context.modified_files, *context.created_files}
        context.add_files(EngineerResult(created_files=[w for w in written if w not in known]))
        return written

    def untested(self, files: list[str]) -> tuple[str, list[str]]:
        """The discovered framework, and the source files in its language when no test
        is relevant to any of them: then the test stage would have nothing to run. (Docs,
        config and test files are never "untested"; a task whose other files have tests
        runs those.)"""
        names = [
            t.name
            for t in discovered_tools(self.tools.discovered)
            if t.category is ToolCategory.TEST_FRAMEWORK
        ]
        framework = next((FRAMEWORKS[n] for n in names if n in FRAMEWORKS), None)
        if framework is None:
            return "", []
        language = _SOURCE[framework.ecosystem]
        sources = [f for f in files if language.search(f) and not is_test_file(f)]
        if not sources or self.tools.targets(sources):
            return framework.name, []
        # A project with no suite of its own (a script, a config repo) is not handed one:
        # new code comes with tests where the project already has tests.
        if not has_tests(self.seat.workspace, framework.name):
            return framework.name, []
        return framework.name, sources

    def _written(self, record: Record) -> list[str]:
        """Workspace-relative paths the turn's successful edits and writes changed."""
        found: list[str] = []
        for action in actions_from_payload(record.payload):
            if action.status != "ok":
                continue
            named = action.files
            if named is None:
                named = [action.title] if action.op in EDIT_OPS and action.title else []
            for raw in named:
                try:
                    found.append(workspace_relative(raw, self.seat.workspace))
                except CheckPathError:
                    continue  # outside the workspace: the checks never look there
        return list(dict.fromkeys(found))
