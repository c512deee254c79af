"""The engineer -> inspector -> tester loop on a real project: real ruff, mypy and pytest in
the sandbox, an engineer that really writes files."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from backend.knowledge.tool_discovery.discovery import ToolDiscovery
from backend.knowledge.tool_discovery.models import ToolDiscoveryRequest
from backend.pipelines.context import EngineerResult, PipelineContext, PipelineEvent, PipelineState
from backend.pipelines.pipeline import Pipeline
from backend.pipelines.pipeline_checks import SandboxedChecks
from backend.workspace.confinement import Confinement
from tests.integration.pipelines.conftest import PYPROJECT, VENV_BIN, write

START = {
    "pkg/__init__.py": "",
    "pkg/calc.py": "def add(a: int, b: int) -> int:\n    return a + b\n",
    "tests/__init__.py": "",
    "tests/test_calc.py": (
        "from pkg.calc import add\n\n\ndef test_add() -> None:\n    assert add(1, 2) == 3\n"
    ),
}
# First attempt: an unused import (line 1) and a mul that adds, which its test catches.
SLOPPY = {
    "pkg/calc.py": (
        "import os\n\n\ndef add(a: int, b: int) -> int:\n    return a + b\n\n\n"
        "def mul(a: int, b: int) -> int:\n    return a + b\n"
    ),
    "tests/test_calc.py": (
        "from pkg.calc import add, mul\n\n\n"
        "def test_add() -> None:\n    assert add(1, 2) == 3\n\n\n"
        "def test_mul() -> None:\n    assert mul(2, 3) == 6\n"
    ),
}
# Lint clean, but mul still adds: only the tester objects.
LINT_CLEAN = {"pkg/calc.py": SLOPPY["pkg/calc.py"].removeprefix("import os\n\n\n")}
FIXED = {
    "pkg/calc.py": (
        "def add(a: int, b: int) -> int:\n    return a + b\n\n\n"
        "def mul(a: int, b: int) -> int:\n    return a * b\n"
    )
}
TIMEOUT_S = 60.0


@dataclass
class ScriptedEngineer:
    """Writes one set of files per turn (the last set again once the script runs out)."""

    root: Path
    turns: list[dict[str, str]]
    seen: list[PipelineContext] = field(default_factory=list)

    async def __call__(self, context: PipelineContext) -> EngineerResult:
        self.seen.append(context.model_copy(deep=True))
        files = self.turns[min(len(self.seen), len(self.turns)) - 1]
        write(self.root, files)
        return EngineerResult(text=f"turn {len(self.seen)}", modified_files=sorted(files))


@dataclass
class Recorder:
    events: list[PipelineEvent] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)
    answer: str = "fail"

    def __call__(self, event: PipelineEvent) -> None:
        self.events.append(event)

    async def decide(self, context: PipelineContext, reason: str) -> str:
        self.questions.append(reason)
        return self.answer

    @property
    def states(self) -> list[str]:
        return [e.state.value for e in self.events]


@pytest.fixture
def checks(tmp_path: Path) -> SandboxedChecks:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "pyproject.toml").write_text(PYPROJECT)
    write(root, START)
    path_env = os.pathsep.join([VENV_BIN, os.environ.get("PATH", os.defpath)])
    found = ToolDiscovery(path_env=path_env, probe_versions=False).discover(
        ToolDiscoveryRequest(), root
    )
    return SandboxedChecks(
        root, found, Confinement.of(root), TIMEOUT_S, TIMEOUT_S, path_env=path_env
    )


def build(
    checks: SandboxedChecks,
    turns: list[dict[str, str]],
    recorder: Recorder,
    on_event: Callable[[PipelineEvent], None] | None = None,
    *,
    ignore_inspector: bool = False,
    ignore_tester: bool = False,
) -> tuple[Pipeline, ScriptedEngineer]:
    engineer = ScriptedEngineer(checks.workspace, turns)
    context = PipelineContext(task_id="t1", task_prompt="add mul(a, b) to pkg.calc")
    pipeline = Pipeline(
        context,
        engineer=engineer,
        checks=checks,
        decide=recorder.decide,
        on_event=on_event or recorder,
        ignore_inspector=ignore_inspector,
        ignore_tester=ignore_tester,
    )
    return pipeline, engineer


async def test_feedback_reaches_the_engineer_and_the_fix_completes(checks: SandboxedChecks) -> None:
    recorder = Recorder()
    pipeline, engineer = build(checks, [SLOPPY, FIXED], recorder)
    result = await pipeline.run()
    assert (result.state, result.success, result.loops_used) == (PipelineState.COMPLETED, True, 2)
    assert recorder.states == [
        "running",
        "inspecting",
        "running",
        "inspecting",
        "testing",
        "completed",
    ]
    second = engineer.seen[1]
    [feedback] = second.inspector_feedback
    assert (feedback.loop, feedback.passed) == (1, False)
    assert "pkg/calc.py:1: [ruff F401]" in second.last_feedback
    assert any(i.code == "F401" and i.line == 1 for i in feedback.issues)
    assert result.context.modified_files == ["pkg/calc.py", "tests/test_calc.py"]
    assert [f.passed for f in result.context.tester_feedback] == [True]
    assert recorder.questions == []
    assert pipeline.bus.closed


async def test_test_failures_reach_the_engineer_with_expected_and_actual(
    checks: SandboxedChecks,
) -> None:
    recorder = Recorder()
    pipeline, engineer = build(checks, [{**SLOPPY, **LINT_CLEAN}, FIXED], recorder)
    result = await pipeline.run()
    assert (result.state, result.loops_used) == (PipelineState.COMPLETED, 2)
    assert recorder.states[:4] == ["running", "inspecting", "testing", "running"]
    text = engineer.seen[1].last_feedback
    assert "tests/test_calc.py:9: tests/test_calc.py::test_mul" in text
    assert "[expected 6, actual 5]" in text


async def test_never_fixed_at_the_limit_the_user_fails_it(checks: SandboxedChecks) -> None:
    recorder = Recorder(answer="fail")
    pipeline, engineer = build(checks, [SLOPPY], recorder)
    result = await pipeline.run()
    assert (result.state, result.success, result.loops_used) == (PipelineState.FAILED, False, 3)
    assert len(engineer.seen) == 3
    [question] = recorder.questions
    assert question.startswith("the inspector still fails after 3 loop(s)")
    assert "pkg/calc.py:1" in question
    assert recorder.states[-2:] == ["waiting_for_user", "failed"]
    assert result.reason == question


async def test_never_fixed_at_the_limit_ignoring_completes_with_notes(
    checks: SandboxedChecks,
) -> None:
    recorder = Recorder(answer="ignore")
    pipeline, _ = build(checks, [SLOPPY], recorder)
    result = await pipeline.run()
    assert (result.state, result.success, result.loops_used) == (PipelineState.COMPLETED, True, 3)
    assert [q.split(" still")[0] for q in recorder.questions] == ["the inspector", "the tester"]
    assert result.context.notes == [
        "inspector failures ignored by the user at loop 3",
        "tester failures ignored by the user at loop 3",
    ]
    assert recorder.events[-1].detail == "; ".join(result.context.notes)


async def test_ignore_flags_skip_their_stage(checks: SandboxedChecks) -> None:
    recorder = Recorder()
    pipeline, _ = build(checks, [SLOPPY, FIXED], recorder, ignore_inspector=True)
    result = await pipeline.run()
    assert result.state is PipelineState.COMPLETED
    assert "inspecting" not in recorder.states
    assert recorder.states == ["running", "testing", "running", "testing", "completed"]

    recorder = Recorder()
    checks.workspace.joinpath("pkg/calc.py").write_text(START["pkg/calc.py"])
    pipeline, _ = build(checks, [{**SLOPPY, **LINT_CLEAN}], recorder, ignore_tester=True)
    result = await pipeline.run()
    assert (result.state, result.loops_used) == (PipelineState.COMPLETED, 1)
    assert recorder.states == ["running", "inspecting", "completed"]


async def test_cancel_while_a_test_hangs_stops_it_as_interrupted(checks: SandboxedChecks) -> None:
    hang = {
        "pkg/calc.py": START["pkg/calc.py"],
        "tests/test_calc.py": (
            "import time\n\nfrom pkg.calc import add\n\n\ndef test_add() -> None:\n"
            "    time.sleep(600)\n    assert add(1, 2) == 3\n"
        ),
    }
    recorder = Recorder()

    def on_event(event: PipelineEvent) -> None:
        recorder(event)
        if event.state is PipelineState.TESTING:  # pytest is starting: cancel once it runs
            asyncio.get_running_loop().call_later(1.0, pipeline.cancel)

    pipeline, _ = build(checks, [hang], recorder, on_event)
    result = await pipeline.run()
    assert (result.state, result.reason) == (PipelineState.FAILED, "interrupted")
    assert recorder.states == ["running", "inspecting", "testing", "failed"]
    assert pipeline.cancel() is False  # nothing left to stop
