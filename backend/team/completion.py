"""Completion: the Architect's summary of a plan's work, and what the session learned.

When session QA passes, the summary is written to the transcript as the Architect's
message (``payload["summary"]`` holds it structured; the transcript is in the archive)
and kept in the session's QA record: the files created, modified and deleted (the
session's checkpoints' diff), the tests (counts from QA's run, or skipped by the user),
the validation (inspection clean, or the findings the user overrode) and what was
deferred (overridden findings, skipped tests, pipeline stages the user ignored).

Then the plans' decisions and the completion are kept in the chronicle as decisions and
promoted the way a completed session's are (:meth:`Chronicle.complete_session`), so
other sessions learn from them.
"""

from __future__ import annotations

from typing import Any, Protocol

from backend.checkpoints.records import SessionDiff
from backend.knowledge.chronicle.chronicle import Chronicle
from backend.knowledge.chronicle.models import Category
from backend.messages import Message, MessageType
from backend.plans.desk import PlanDesk
from backend.plans.review import PlanNotFoundError
from backend.team.qa_checks import QaRecord, changed_files, listing

LISTED = 30  # files or items a summary line names before "... and N more"
TASK_LINE_MAX = 160


class Transcript(Protocol):
    async def append(self, message: Message[dict[str, Any]]) -> Message[dict[str, Any]]: ...


def build_summary(record: QaRecord, diff: SessionDiff, notes: list[str]) -> dict[str, Any]:
    created, modified, deleted = changed_files(diff)
    deferred = [f"finding overridden by the user: {f.text}" for f in record.overridden]
    if record.skip_tests:
        deferred.append("tests skipped by the user (/qa skip-tests)")
    deferred += notes
    return {
        "plan_id": record.plan_id,
        "plans": list(record.plans),
        "fix_rounds": record.rounds,
        "files_created": created,
        "files_modified": modified,
        "files_deleted": deleted,
        "tests": {"skipped": True} if record.skip_tests else dict(record.tests or {}),
        "validation": {
            "clean": not record.overridden,
            "inspected_files": len(record.inspected),
            "tools": list(record.tools),
            "overridden": [f.text for f in record.overridden],
        },
        "deferred": deferred,
    }


def _names(paths: list[str]) -> str:
    shown = ", ".join(paths[:LISTED]) or "none"
    return shown + (f" ... and {len(paths) - LISTED} more" if len(paths) > LISTED else "")


def tests_line(tests: dict[str, Any]) -> str:
    if tests.get("skipped"):
        return "skipped by the user"
    if not tests:
        return "not run"
    status = tests.get("status", "")
    if status in ("no_tests", "not_run"):
        return f"none run ({tests.get('detail') or status})"
    counts = f"{tests.get('passed', 0)} passed, {tests.get('failed', 0)} failed"
    if tests.get("errors"):
        counts += f", {tests['errors']} errors"
    if tests.get("skipped"):
        counts += f", {tests['skipped']} skipped"
    return f"{counts} ({tests.get('framework') or 'tests'})"


def summary_text(summary: dict[str, Any]) -> str:
    rounds = summary["fix_rounds"]
    fixes = f" after {rounds} fix round{'s' if rounds != 1 else ''}" if rounds else ""
    validation = summary["validation"]
    overridden = validation["overridden"]
    checked = (
        f"{len(overridden)} finding(s) overridden by the user"
        if overridden
        else f"inspection clean ({validation['inspected_files']} changed file(s))"
    )
    # One markdown list item per field: the transcript joins a paragraph's lines.
    lines = [
        f"Plan {summary['plan_id']} is complete{fixes}.",
        "",
        f"- Files created: {_names(summary['files_created'])}",
        f"- Files modified: {_names(summary['files_modified'])}",
    ]
    if summary["files_deleted"]:
        lines.append(f"- Files deleted: {_names(summary['files_deleted'])}")
    lines += [f"- Tests: {tests_line(summary['tests'])}", f"- Validation: {checked}"]
    if summary["deferred"]:
        lines.append("- Deferred:")
        lines += [f"  - {item}" for item in summary["deferred"][:LISTED]]
    return "\n".join(lines)


def _first_line(text: object) -> str:
    lines = str(text or "").strip().splitlines()
    return lines[0][:TASK_LINE_MAX] if lines else ""


def status_line(summary: dict[str, Any]) -> str:
    """One line for ``/plan``: the last completion."""
    files = len(summary["files_created"]) + len(summary["files_modified"])
    deferred = f", {len(summary['deferred'])} deferred" if summary["deferred"] else ""
    return (
        f"last completed: plan {summary['plan_id']}: {files} file(s) changed, tests "
        f"{tests_line(summary['tests'])}{deferred}"
    )


async def record_completion(
    session_id: str,
    summary: dict[str, Any],
    *,
    transcript: Transcript,
    chronicle: Chronicle,
    desk: PlanDesk,
) -> list[str]:
    """The summary as the Architect's message, the decisions kept and promoted; the ids
    of the chronicle entries promoted."""
    text = summary_text(summary)
    await transcript.append(Message[dict[str, Any]](
        session_id=session_id, source="architect", target="user", type=MessageType.AGENT_REPLY,
        payload={"text": text, "summary": summary, "response_type": "WORKFLOW_COMPLETE"},
    ))  # fmt: skip
    for plan_id in summary["plans"]:
        try:
            plan = await desk.latest(session_id, plan_id)
        except PlanNotFoundError:
            continue
        document = plan.document
        tasks = [
            f"- {n['id']} ({n.get('agent')}): {_first_line(n.get('prompt'))}"
            for n in document.get("nodes", [])
        ]
        content = "\n".join([f"Plan {plan_id} v{plan.version}, approved by "
                             f"{plan.decided_by or 'the user'}: {document.get('prompt') or ''}",
                             "Tasks:", *tasks[:LISTED]])  # fmt: skip
        data = {"plan_id": plan_id, "kind": "plan"}
        await chronicle.store(session_id, Category.DECISION, content, title=f"Plan {plan_id}",
                              agent="architect", data=data)  # fmt: skip
    await chronicle.store(session_id, Category.DECISION, text,
                          title=f"Completed plan {summary['plan_id']}", agent="architect",
                          data={"kind": "completion", "summary": summary})  # fmt: skip
    return await chronicle.complete_session(session_id)


def record_status(record: QaRecord, max_rounds: int) -> str:
    """``/qa status``: the stage, the fix rounds, the tools, what is outstanding."""
    lines = [f"Session QA of plan {record.plan_id}: {record.stage.replace('_', ' ')}"
             f" ({record.rounds} fix round(s) of {max_rounds})"]  # fmt: skip
    if record.fix_plan:
        lines.append(f"fix plan: {record.fix_plan}")
    if record.tools:
        lines.append("tools: " + ", ".join(record.tools))
    if record.findings:
        lines += [f"{len(record.findings)} outstanding:", listing(record.findings)]
    if record.overridden:
        lines.append(f"{len(record.overridden)} finding(s) overridden")
    if record.skip_tests:
        lines.append("tests: skipped by the user")
    if record.summary:
        lines.append(status_line(record.summary))
    return "\n".join(lines)
