"""What the Guide and the session manager answer themselves, without an agent."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from backend.checkpoints.answers import diff_text, undo_text
from backend.checkpoints.records import SessionDiff, UndoOutcome
from backend.errors import CommandError, ErrorKind, SylkError
from backend.guide.guide import Guide
from backend.guide.routing import dsl
from backend.guide.routing.decision import RouteDecision, Target
from backend.guide.routing.session_dsl import NO_ISOLATION
from backend.sessions.models import Session, SessionSnapshot
from backend.sessions.stats import SessionStats, stats_text
from backend.worktrees.session_view import isolation_line, merge_hint

GREETING = (
    "I'm the Guide: I route what you type to the agent best placed to answer "
    "(Librarian for this codebase, Archivalist for history, Academic for research, "
    "Architect for changes, Inspector and Tester for review and tests).\n"
)


class PipelineNotFoundError(SylkError):
    """``/task ID ...`` names no pipeline of the session (``running``: the ones that run)."""

    error_kind = ErrorKind.NOT_FOUND

    def __init__(self, task_id: str, running: Sequence[str] = ()) -> None:
        now = ", ".join(running) if running else "none"
        super().__init__(
            f"no pipeline runs task {task_id!r} in this session (running tasks: {now})",
            help_hint="pipelines start when a plan runs or with @engineer TEXT; /help task",
            details={"reason": "pipeline_not_found", "task_id": task_id, "running": [*running]},
        )


class SessionOps(Protocol):
    async def create_session(
        self, name: str | None = None, *, activate: bool = True, isolation: bool | None = None
    ) -> Session: ...
    async def switch_session(self, ref: str) -> Session: ...
    async def resume_session(self, ref: str) -> Session: ...
    async def suspend_session(self, ref: str | None = None) -> Session: ...
    async def complete_session(
        self, ref: str | None = None, summary: str | None = None
    ) -> Session: ...
    async def fail_session(self, ref: str | None, reason: str) -> Session: ...
    async def close_session(self, ref: str) -> Session: ...
    async def merge_session(self, ref: str | None = None, mode: str = "ff") -> str: ...
    async def limits_command(self, session_id: str, text: str | None) -> str: ...
    async def session_stats(self, ref: str) -> SessionStats: ...
    async def snapshot_session(self, ref: str, label: str | None = None) -> SessionSnapshot: ...
    async def restore_snapshot(
        self, ref: str, snapshot: str, *, resume: bool = True
    ) -> Session: ...
    def snapshots_text(self, ref: str) -> str: ...
    def describe_sessions(self) -> str: ...
    def status_text(self, session_id: str) -> str: ...
    async def tools_command(self, session_id: str, args: dict[str, str]) -> str: ...
    async def undo(self, session_id: str) -> UndoOutcome: ...
    async def session_diff(self, session_id: str) -> SessionDiff: ...
    async def approval_command(self, session_id: str, mode: str | None) -> str: ...
    async def network_command(self, session_id: str, state: str | None) -> str: ...
    async def plan_command(self, session_id: str, args: dict[str, str]) -> str: ...
    async def qa_command(self, session_id: str, args: dict[str, str]) -> str: ...
    async def model_command(self, session_id: str, args: dict[str, str]) -> str: ...
    async def mcp_command(self, session_id: str, args: dict[str, str]) -> str: ...
    async def budget_command(self, session_id: str, args: dict[str, str]) -> str: ...
    async def task_command(self, session_id: str, args: dict[str, str]) -> str: ...
    async def phase_command(self, session_id: str, args: dict[str, str]) -> str: ...


Answer = tuple[str, bool]  # (text, laid out in columns)


async def run_command(
    ops: SessionOps, guide: Guide, session_id: str, decision: RouteDecision
) -> Answer:
    args = decision.command or {}
    if decision.target is Target.SESSION_MANAGER:
        tabular = args.get("verb") in ("list", "stats", "snapshots")
        return await _session(ops, args, session_id), tabular
    if decision.target is Target.PIPELINE:
        return await ops.task_command(session_id, {**args, "text": decision.text}), False
    verb = args.get("verb")
    if verb == "status":
        return ops.status_text(session_id), True
    if verb == "deadletters":
        return await _dead_letters(guide, session_id, args), True
    if verb == "help":
        return dsl.help_text(args.get("topic")), True
    if verb == "tools":
        return await ops.tools_command(session_id, args), False
    if verb == "undo":
        return undo_text(await ops.undo(session_id)), True
    if verb == "diff":
        return diff_text(await ops.session_diff(session_id)), True
    if verb == "approval":
        return await ops.approval_command(session_id, args.get("mode")), False
    if verb == "network":
        return await ops.network_command(session_id, args.get("state")), False
    if verb == "plan":
        return await ops.plan_command(session_id, args), args.get("action") == "list"
    if verb == "model":
        return await ops.model_command(session_id, args), args.get("action") == "show"
    if verb == "mcp":
        return await ops.mcp_command(session_id, args), args.get("action") == "list"
    if verb == "budget":
        return await ops.budget_command(session_id, args), True
    if verb == "qa":
        return await ops.qa_command(session_id, args), args.get("action") == "status"
    if verb == "phase":  # "stop", "status?", "also add X", "why ...?" said in a plan's phase
        return await ops.phase_command(session_id, args), args.get("action") == "status"
    return GREETING + dsl.help_text(None), True


async def _session(ops: SessionOps, args: dict[str, str], session_id: str) -> str:
    verb, ref = args.get("verb"), args.get("ref")
    if verb == "list":
        return ops.describe_sessions()
    if verb in ("fail", "close", "stats", "snapshot", "snapshots", "restore"):
        return await _lifecycle(ops, verb, args, ref or session_id, session_id)
    if verb == "limits":  # this session's share of the worker pool (engine.worker_lanes)
        return await ops.limits_command(session_id, args.get("text"))
    if verb == "merge":  # never done silently: only when asked
        return await ops.merge_session(ref or session_id, args.get("text") or "ff")
    if verb == "new":
        off = False if args.get("text") == NO_ISOLATION else None
        made = await ops.create_session(args.get("name"), isolation=off)
        where = f"; {isolation_line(made)}" if off is False else ""
        return f"created and switched to session {made.name!r} ({made.short_id}){where}"
    if verb in ("switch", "resume") and not ref:
        raise CommandError(f"which session should I {verb} to?", help_hint="/session list")
    if verb == "switch":
        now = await ops.switch_session(ref or "")
        return f"switched to session {now.name!r} ({now.short_id})"
    if verb == "resume":
        now = await ops.resume_session(ref or "")
        return f"resumed session {now.name!r} ({now.short_id})"
    if verb == "suspend":
        now = await ops.suspend_session(ref)
        return f"suspended session {now.name!r} ({now.short_id})"
    if verb == "complete":
        now = await ops.complete_session(ref)
        hint = merge_hint(now)
        return f"completed session {now.name!r} ({now.short_id})" + (f"; {hint}" if hint else "")
    raise CommandError(f"unknown session verb {verb!r}", help_hint="/help session")


async def _lifecycle(ops: SessionOps, verb: str, args: dict[str, str], ref: str, here: str) -> str:
    """The lifecycle's remainder (``backend.engine.lifecycle``); without a session named,
    the one the command was typed in."""
    if verb == "fail":
        now = await ops.fail_session(here, args.get("text") or "")
        return f"session {now.name!r} ({now.short_id}) failed: {now.metadata.get('failure')}"
    if verb == "close":
        now = await ops.close_session(ref)
        return f"closed session {now.name!r} ({now.short_id})"
    if verb == "stats":
        return stats_text(await ops.session_stats(ref))
    if verb == "snapshot":
        snap = await ops.snapshot_session(here, args.get("text"))
        label = f" {snap.label!r}" if snap.label else ""
        return f"snapshot {snap.id[:8]}{label} taken (/session restore {snap.id[:8]})"
    if verb == "snapshots":
        return ops.snapshots_text(here)
    now = await ops.restore_snapshot(here, args.get("ref") or "")
    return f"session {now.name!r} restored ({now.state.value}, phase {now.phase.value})"


async def _dead_letters(guide: Guide, session_id: str, args: dict[str, str]) -> str:
    action = args.get("action", "list")
    queue = guide.dead_letters
    if action == "purge":
        return f"purged {queue.purge(session_id)} dead letters"
    if action == "replay":
        letter_id = args.get("id", "")
        found = [e for e in queue.entries(session_id) if e.id == letter_id]
        if not found:
            raise CommandError(
                f"no dead letter {letter_id!r} in this session", help_hint="/deadletters list"
            )
        outcome = await queue.replay(letter_id)
        detail = f" ({outcome.error})" if outcome.error else ""
        return f"replayed {letter_id}: {outcome.status.value}{detail}"
    entries = queue.entries(session_id)
    if not entries:
        return "no dead letters in this session"
    lines = []
    for entry in entries:
        text = (
            str(entry.message.payload.get("text", ""))[:60]
            if isinstance(entry.message.payload, dict)
            else ""
        )
        lines.append(
            f"{entry.id:<8} {entry.reason.value:<16} to {entry.agent or entry.message.target}"
            f" after {entry.attempts} attempt(s): {entry.error or ''} {text!r}"
        )
    return "\n".join(lines)
