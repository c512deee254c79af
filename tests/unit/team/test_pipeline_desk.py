"""The pipeline desk on its own: which task an id names, what query says, what each verb
does to a pipeline in each state, and that nothing is lost when a pipeline ends first."""

from __future__ import annotations

import pytest

from backend.events import EngineEvent, EngineNotice
from backend.guide.commands import PipelineNotFoundError
from backend.pipelines.context import PipelineState
from backend.team.pipeline_desk import PipelineDesk, PipelineEndedError, TaskVerbError
from tests.unit.pipelines.test_pipeline_machine import CLEAN, LINT, Engineer, ReportChecks
from tests.unit.pipelines.test_pipeline_machine import pipeline as make_pipeline


def desk_with(events: list[EngineEvent]) -> PipelineDesk:
    return PipelineDesk(publish=events.append)


async def test_ids_numbers_and_unknown_ids() -> None:
    desk = desk_with([])
    first = desk.open("s1", make_pipeline(ReportChecks([CLEAN]), Engineer()), plan_id="p1")
    assert desk.find("s1", "t") is first and desk.find("s1", "1") is first
    with pytest.raises(PipelineNotFoundError) as missing:
        desk.find("s1", "e9")
    assert "running tasks: t" in missing.value.message
    assert missing.value.details == {"reason": "pipeline_not_found", "task_id": "e9",
                                     "running": ["t"]}  # fmt: skip
    with pytest.raises(PipelineNotFoundError):
        desk.find("s2", "t")  # another session's task is not this one's
    assert desk.next_quick_id("s1") == "q1"
    with pytest.raises(TaskVerbError):
        await desk.command("s1", "t", "pause")


async def test_query_prompt_ignore_then_end() -> None:
    events: list[EngineEvent] = []
    desk = desk_with(events)
    engineer = Engineer()
    run = make_pipeline(ReportChecks([LINT, CLEAN]), engineer)
    task = desk.open("s1", run)
    fresh = await desk.command("s1", "t", "query")
    assert fresh.startswith("Task t: created (loop 0/3)")
    assert "Files touched: none yet" in fresh and "Inspector: not run yet" in fresh

    said = await desk.command("s1", "t", "prompt", "focus on errors")
    assert "reaches the engineer's next turn (loop 1 of 3)" in said and "before its first" in said
    skipped = await desk.command("s1", "t", "ignore_tester")
    assert "skipped from its next check on" in skipped
    assert (
        await desk.command("s1", "t", "ignore_tester") == "Task t: the tester is already skipped."
    )
    assert [e.text for e in events if isinstance(e, EngineNotice)][:2] == [said, skipped]

    result = await run.run()
    desk.close(task)
    assert result.state is PipelineState.COMPLETED and engineer.seen[0].user_messages == [
        "focus on errors"]  # fmt: skip
    ended = await desk.command("s1", "t", "query")
    assert ended.startswith("Task t: completed (loop 2/3)")
    assert "Inspector: passed" in ended and "Tester: skipped" in ended
    assert "Your messages the engineer has read: 1" in ended
    with pytest.raises(PipelineEndedError):
        await desk.command("s1", "t", "interrupt")
    assert desk.task_ids("s1") == [] and desk.next_quick_id("s1") == "q1"


async def test_a_message_no_turn_read_is_noted_when_the_pipeline_ends() -> None:
    desk = desk_with([])
    run = make_pipeline(ReportChecks([CLEAN]), Engineer())
    task = desk.open("s1", run)
    await run.run()
    task.sent.append("one more thing")  # sent as its checks passed: no turn will read it
    desk.close(task)
    assert run.context.notes == ["not read by the engineer (ended first): one more thing"]
    assert "Note: not read by the engineer" in await desk.command("s1", "t", "query")


async def test_interrupt_before_the_run_ends_it_interrupted() -> None:
    desk = desk_with([])
    run = make_pipeline(ReportChecks([CLEAN]), Engineer())
    task = desk.open("s1", run)
    said = await desk.command("s1", "t", "interrupt")
    assert "interrupted while created (loop 0)" in said
    result = await run.run()
    desk.close(task)
    assert (result.state, result.reason) == (PipelineState.FAILED, "interrupted")
