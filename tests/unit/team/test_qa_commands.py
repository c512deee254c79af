"""``/qa``'s one-line view of the session's QA, shown by ``/plan``."""

from __future__ import annotations

from backend.team.qa_checks import QaRecord
from backend.team.qa_commands import qa_line


def test_the_plan_line_says_what_qa_waits_for() -> None:
    assert qa_line(None) is None
    record = QaRecord(plan_id="p1", plans=["p1"], stage="awaiting_fix", fix_plan="p1-fix1")
    assert qa_line(record) == "session QA of plan p1: awaiting fix (fix plan p1-fix1)"
    record.stage, record.fix_plan = "testing", None
    assert qa_line(record) == "session QA of plan p1: testing"
