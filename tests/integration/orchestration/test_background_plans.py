"""A plan keeps running when its session goes to the background: switching to another
session (which suspends the one in front) does not fail its DAG's next nodes, while the
user's own requests still reach only the session in front."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.errors import SessionNotActiveError
from backend.orchestration import DagStatus
from backend.sessions.models import SessionState
from tests.integration.orchestration.plan_runs import Run, architect_proposes, node, plan, script
from tests.integration.plans.conftest import say


async def test_a_running_plan_goes_on_after_the_user_switches_away(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    doc = plan(node("t1", "librarian"), node("t2", "tester", "t1"), node("t3", "tester", "t2"))
    script(tmp_path / "s.json", monkeypatch, [
        *architect_proposes(doc),
        {"expect": "do t1", "text": "Found it."},
        {"expect": "do t2", "text": "Checked."},
        {"expect": "do t3", "text": "Checked again."},
    ], delay=0.05)  # fmt: skip
    run = Run(data_dir, workspace)
    try:
        sid = await run.session_with_plan()
        await say(run.engine, sid, "/plan approve p1")
        other = await run.engine.create_session("elsewhere")  # the plan's session: background
        assert run.engine.get_session(sid).state is SessionState.SUSPENDED
        outcome = await run.engine.wait_dag(sid, "p1")
        assert outcome is not None and outcome.status is DagStatus.PASSED, outcome
        assert outcome.outputs["t3"] == "Checked again."
        with pytest.raises(SessionNotActiveError):  # the user's requests: only in front
            await run.engine.submit(sid, "@tester one more")
        assert run.engine.active_session() is not None
        assert run.engine.active_session().id == other.id  # type: ignore[union-attr]
    finally:
        await run.engine.aclose()
