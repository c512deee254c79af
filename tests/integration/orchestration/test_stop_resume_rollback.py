"""A task the user stopped restarts clean when its plan resumes: the edits of its
interrupted attempt are put back first (as after a kill -9), so an insertion whose old
text survives in its new text is not applied twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.events import AgentStepEvent
from backend.orchestration import DagStatus
from tests.integration.orchestration.plan_runs import (
    HANG_TEXT,
    Run,
    architect_proposes,
    node,
    plan,
    script,
)
from tests.integration.plans.conftest import say
from tests.support.polling import until
from tests.support.scripted import execute

OLD = "VERBOSE = False\n"
NEW = "VERBOSE = False\nQUIET = False\n"  # an insertion: its old text survives in the new


def insert_turns(*, then: dict[str, object]) -> list[dict[str, object]]:
    return [
        {"expect": "do e1", "text": "Reading.",
         "tool_calls": [execute("engineer.file.read", path="flags.py")]},
        {"text": "Inserting.", "tool_calls": [
            execute("engineer.file.edit", path="flags.py", old_content=OLD, new_content=NEW)]},
        then,
    ]  # fmt: skip


async def test_a_stopped_task_reruns_clean_after_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    (workspace / "flags.py").write_text(OLD)
    script(tmp_path / "s.json", monkeypatch, [
        *architect_proposes(plan(node("e1", "engineer"))),
        *insert_turns(then={"text": HANG_TEXT}),  # stopped while this streams
        *insert_turns(then={"text": "Inserted QUIET."}),  # the attempt after resume
    ], delay=0.05)  # fmt: skip
    run = Run(data_dir, workspace)
    try:
        sid = await run.session_with_plan()
        await say(run.engine, sid, "/plan approve p1")
        await until(lambda: (workspace / "flags.py").read_text() == NEW, what="the insertion")

        def streaming() -> bool:  # the attempt's last turn has begun: stop it there
            return any(isinstance(e, AgentStepEvent) and e.step.kind == "text_delta"
                       and "working" in str(e.step.data) for e in run.events)  # fmt: skip

        await until(streaming, what="the engineer's last turn streams")
        stopped = await say(run.engine, sid, "stop")
        assert stopped["text"] == "plan p1: stopped"
        assert (workspace / "flags.py").read_text() == NEW  # stopping changes no file

        await say(run.engine, sid, "resume")
        outcome = await run.engine.wait_dag(sid, "p1")
        assert outcome is not None and outcome.status is DagStatus.PASSED, outcome
        assert (workspace / "flags.py").read_text() == NEW  # once, not twice
        notes = [str(m.payload.get("text")) for m in await run.engine.transcript(sid)
                 if m.payload.get("rollback")]  # fmt: skip
        assert len(notes) == 1 and "flags.py" in notes[0], notes
    finally:
        await run.engine.aclose()
