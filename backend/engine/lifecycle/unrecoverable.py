"""When a session cannot go on: it is failed by itself, with the reason shown.

Most errors cost one turn: the turn's answer says what went wrong and the next turn
tries again. A few mean no later turn can succeed, and retrying would only hide them:

- the session's workspace directory is gone (deleted, or its file system unmounted)
  when a turn starts: every op of every agent would fail on it;
- its worktree is gone and cannot be made again: its branch was deleted too (the
  session's work is lost with it, and a fresh worktree from the base would pass off an
  empty tree as the session's), or git refuses to make it (the repository is gone);
- a DAG run ended with an error that is not its tasks' (the scheduler or its state
  store broke, say the store is unreadable): the plan cannot be run on or resumed.

Each fails the session (``SessionManager.fail``): the reason, one redacted line, goes in
its metadata (``failure``), its transcript ("Session failed: ..."), the session list's
second line and ``/status``. Everything else stays a per-turn error.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.errors import InvalidTransitionError, SessionNotFoundError
from backend.messages import Message
from backend.sessions.models import SessionState
from backend.sessions.phases import REASON_MAX, one_line
from backend.worktrees import WorktreeError
from backend.worktrees.git_repo import git_code
from backend.worktrees.session_view import worktree_of

if TYPE_CHECKING:
    from backend.engine.build import EngineParts

log = logging.getLogger(__name__)

FAILED_PREFIX = "Session failed: "  # how the transcript's notice starts
Notice = Message[dict[str, Any]]


async def fail_for_good(parts: EngineParts, session_id: str, reason: str) -> Notice:
    """Fail the session with ``reason`` (one line, redacted) and say so in its transcript;
    returns that notice. The caller has checked the state allows it."""
    why = one_line(parts.redactor.text(reason), REASON_MAX) or "no reason given"
    await parts.sessions.fail_session(session_id, why)
    return await parts.sessions.notice(session_id, f"{FAILED_PREFIX}{why}", failure=why)


async def _is_dir(path: Path) -> bool:
    return await asyncio.to_thread(path.is_dir)


async def _lost_worktree(parts: EngineParts, session_id: str) -> str | None:
    """Why the session's worktree cannot be made again, or None (there, or it can be)."""
    info = worktree_of(parts.sessions.get(session_id))
    if info is None or await _is_dir(Path(info.path)):
        return None
    if not await _is_dir(Path(info.git_dir)):
        return f"its worktree {info.path} is gone and so is its repository ({info.git_dir})"
    args = ["rev-parse", "--verify", "-q", info.ref(info.branch)]
    if await git_code(Path(info.git_dir), None, args) != 0:
        return (
            f"its worktree {info.path} is gone and its branch {info.branch} was deleted: "
            "the session's work cannot be made again"
        )
    return None


async def unrecoverable_before_turn(parts: EngineParts, session_id: str) -> str | None:
    """Before an agent turn: the session's worktree there (made again when it can be,
    ``WorktreeWork.ensure``) and its workspace a directory; else why it cannot go on."""
    lost = await _lost_worktree(parts, session_id)
    if lost is not None:
        return lost
    try:
        await parts.worktrees.ensure(session_id)
    except WorktreeError as error:
        info = worktree_of(parts.sessions.get(session_id))
        if info is None or await _is_dir(Path(info.path)):
            raise  # the worktree is there: a per-turn error
        return f"its worktree {info.path} could not be made again: {error.message}"
    workspace = Path(parts.sessions.get(session_id).workspace)
    if not await _is_dir(workspace):
        return f"its workspace {workspace} is gone (deleted or unmounted)"
    return None


async def ready_for_turn(parts: EngineParts, session_id: str) -> Notice | None:
    """None when the session can take an agent turn; else it has been failed, and this
    is the transcript's notice saying why."""
    reason = await unrecoverable_before_turn(parts, session_id)
    if reason is None:
        return None
    return await fail_for_good(parts, session_id, reason)


async def fail_broken_dag(parts: EngineParts, session_id: str, plan_id: str, error: str) -> None:
    """A DAG run ended with an error not its tasks' (``DagWork.on_broken``): the session
    fails, unless it has ended meanwhile (completed, failed or closed)."""
    try:
        state = parts.sessions.state_of(session_id)
    except SessionNotFoundError:  # deleted meanwhile: nothing left to fail
        return
    if state not in (SessionState.ACTIVE, SessionState.SUSPENDED):
        return
    try:
        await fail_for_good(parts, session_id, f"its plan {plan_id}'s DAG broke: {error}")
    except InvalidTransitionError:  # ended while the notice was written
        log.info("session %s ended before its broken DAG could fail it", session_id)
