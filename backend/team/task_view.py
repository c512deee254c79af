"""A live pipeline as a front end shows it: one JSON-ready snapshot of its state.

``/task ID query`` answers in words; a pane that lists the engineer's turns, the
inspector's issues and the tester's failures needs them as data. The snapshot is read
from the pipeline in memory (the desk keeps the running ones and the last few
finished) and published as a ``PipelineMoved`` on every transition and every ``/task``
verb that changes the task, so a front end follows it without reading anything back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from backend.events import PipelineMoved

if TYPE_CHECKING:  # the desk publishes these too: no import back at run time
    from backend.team.pipeline_desk import LiveTask

STAGES = ("inspector", "tester")


def pipeline_moved(task: LiveTask, detail: str = "") -> PipelineMoved:
    """The event that says where the task's pipeline stands now, with its view."""
    pipeline = task.pipeline
    return PipelineMoved(
        session_id=task.session_id,
        task_id=task.task_id,
        plan_id=task.plan_id,
        state=pipeline.state.value,
        loop=pipeline.context.loop,
        max_loops=pipeline.max_loops,
        detail=detail,
        view=task_view(task),
    )


def task_view(task: LiveTask) -> dict[str, Any]:
    """What the task's pipeline has done so far and where it stands."""
    pipeline = task.pipeline
    context = pipeline.context
    return {
        "task_id": task.task_id,
        "plan_id": task.plan_id,
        "state": pipeline.state.value,
        "ended": task.ended,
        "reason": pipeline.reason,
        "loop": context.loop,
        "max_loops": pipeline.max_loops,
        "task_prompt": context.task_prompt,
        "files": context.modified_files + context.created_files,
        "engineer_texts": list(context.engineer_texts),
        "inspector": [f.model_dump(mode="json") for f in context.inspector_feedback],
        "tester": [f.model_dump(mode="json") for f in context.tester_feedback],
        "ignored": [s for s in STAGES if getattr(pipeline, f"ignore_{s}")],
        "queued": task.queued,
        "read_messages": list(context.user_messages),
        "notes": list(context.notes),
    }
