"""A live pipeline as a front end shows it: one JSON-ready snapshot of its state.

``/task ID query`` answers in words; a pane that lists the engineer's turns, the
inspector's issues and the tester's failures needs them as data. The snapshot is read
from the pipeline in memory (the desk keeps the running ones and the last few
finished), so a front end may read it on every transition without touching the archive.
"""

from __future__ import annotations

from typing import Any

from backend.team.pipeline_desk import LiveTask

STAGES = ("inspector", "tester")


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
