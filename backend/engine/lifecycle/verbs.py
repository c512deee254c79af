"""The engine's lifecycle verbs: fail, close, stats, snapshot, restore, the idle timer.

A base class of :class:`~backend.engine.Engine` (which keeps the parts in ``_parts``),
so the facade stays one class and these stay in their own room.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from backend.archive.session_stats import session_stats
from backend.archive.snapshot_rows import SnapshotRow
from backend.archive.team.live_updates import ArchiveChange, ArchiveWatch
from backend.archive.team.ownership import TeamReach
from backend.archive_events import ArchiveChanged
from backend.engine.lifecycle.idle_timer import IdleTimer
from backend.engine.lifecycle.snapshot_work import (
    restore_snapshot,
    running_work,
    snapshots_of,
    take_snapshot,
)
from backend.engine.lifecycle.unrecoverable import fail_broken_dag, fail_for_good, ready_for_turn
from backend.engine.worker_lanes import limits_verb
from backend.errors import CommandError
from backend.messages import Message
from backend.sessions.models import Session, SessionSnapshot, SessionState
from backend.sessions.snapshots import SessionRunningError
from backend.sessions.stats import SessionStats

if TYPE_CHECKING:
    from backend.engine.build import EngineParts


def watch_archive(parts: EngineParts, loop: asyncio.AbstractEventLoop) -> ArchiveWatch:
    """The archive watch, its changes published on ``loop`` as engine events."""

    me = parts.sessions.owner

    def publish(change: ArchiveChange) -> None:
        promoted = change.kind == "promoted"
        if promoted:
            parts.knowledge.chronicle.cache.clear()
        parts.events.publish(
            ArchiveChanged(
                session_id=change.session_id,
                change=change.kind,
                entry_id=change.id if promoted else None,
                owner=change.owner,
                teammate=(change.owner or str(me)).rpartition("@")[0] != me.user,
            )
        )

    def deliver(change: ArchiveChange) -> None:  # on the watch's thread
        with contextlib.suppress(RuntimeError):  # the loop closed: nobody is listening
            loop.call_soon_threadsafe(publish, change)

    watch = ArchiveWatch(parts.archive, deliver)
    watch.start()
    return watch


class LifecycleVerbs:
    _parts: EngineParts
    _idle: IdleTimer | None = None
    _watch: ArchiveWatch | None = None
    limits_command = limits_verb  # /session limits: show or set (engine.worker_lanes)

    @property
    def team(self) -> TeamReach:
        """This engine's owner (``team.reader``), every session's owner (``team_rows``)
        and how far a cross-session read reaches: the user's own sessions, any host."""
        return self._parts.sessions.reach

    @property
    def idle_timer(self) -> IdleTimer:
        """The timer that suspends idle sessions (``sweep`` looks once)."""
        if self._idle is None:
            self._idle = IdleTimer(self._parts)
        return self._idle

    def start_idle_timer(self) -> bool:
        """Run the idle timer when a limit is configured (the config's, or a session's);
        front ends call it once at start, with the loop running."""
        timer, sessions = self.idle_timer, self._parts.sessions.list_sessions()
        if timer.default is None and not any(s.config.auto_suspend_after for s in sessions):
            return False
        timer.start()
        return True

    async def resume_dags(self) -> list[tuple[str, str]]:
        """Run again the DAGs that were running when Sylk stopped (passed nodes are not
        run again); (session id, plan id) of each. Front ends call it once at start, so
        the idle timer starts here too (when a limit is configured)."""
        self.start_idle_timer()
        self.watch_archive()
        return await self._parts.dags.resume_dags()

    async def fail_session(self, ref: str | None, reason: str) -> Session:
        """The session failed for good: ``reason`` (one line, redacted) is kept in its
        metadata, said in its transcript, and shown in the session list and /status."""
        parts = self._parts
        session = parts.sessions.resolve(ref) if ref else parts.sessions.active_session()
        if session is None:
            raise CommandError("no session is active", help_hint="name the session")
        await fail_for_good(parts, session.id, reason)
        return parts.sessions.get(session.id)

    async def ready_for_turn(self, session_id: str) -> Message[dict[str, Any]] | None:
        """Before an agent turn: None when the session can go on; else it could not (its
        workspace or worktree is gone for good, ``unrecoverable``), has been failed, and
        this is the transcript's notice saying why."""
        return await ready_for_turn(self._parts, session_id)

    def _fail_on_broken_dags(self) -> None:
        """A DAG run that ends with an error not its tasks' fails its session."""
        parts = self._parts

        async def broken(session_id: str, plan_id: str, error: str) -> None:
            await fail_broken_dag(parts, session_id, plan_id, error)

        parts.dags.on_broken = broken

    async def close_session(self, ref: str) -> Session:
        """Close the session for good (kept in the archive, gone from lists): refused
        while a turn or DAG of it runs; the one in front is suspended first. Its agents
        stop and its gateway state goes; ``SessionService.on_close`` hooks run."""
        parts = self._parts
        session = parts.sessions.resolve(ref)
        running = running_work(parts, session.id)
        if running is not None and session.closed_at is None:
            raise SessionRunningError(session.name, running, "close")
        if session.state is SessionState.ACTIVE and session.closed_at is None:
            await parts.sessions.suspend_session(session.id)
        return await parts.sessions.close_session(session.id)

    async def session_stats(self, ref: str) -> SessionStats:
        """What the session did: turns, messages, tokens, cost, tool calls, files, DAGs,
        active time (one archive query per table)."""
        return await session_stats(self._parts.archive, self._parts.sessions.resolve(ref))

    async def snapshot_session(self, ref: str, label: str | None = None) -> SessionSnapshot:
        """Store the session's whole workflow state (``snapshot_work``)."""
        return await take_snapshot(self._parts, ref, label)

    def session_snapshots(self, ref: str) -> list[SnapshotRow]:
        """The session's snapshots, oldest first (their documents are not read)."""
        return snapshots_of(self._parts, ref)

    def snapshots_text(self, ref: str) -> str:
        """``/session snapshots``: one line each, id, time, label."""
        rows = self.session_snapshots(ref)
        lines = [f"{r.short_id}  {r.created_at[:19]}  {r.label or ''}".rstrip() for r in rows]
        return "\n".join(lines) or "no snapshots (/session snapshot [LABEL] takes one)"

    async def restore_snapshot(self, ref: str, snapshot: str, *, resume: bool = True) -> Session:
        """Bring the session back to ``snapshot`` (id, prefix or label); refused while it
        runs. A DAG running at the snapshot runs again from there (now, if ``resume``)."""
        restored, _ = await restore_snapshot(self._parts, ref, snapshot, resume=resume)
        return restored

    def watch_archive(self) -> None:
        """Publish other processes' session changes and promoted entries as
        :class:`ArchiveChanged` until the engine closes (a promotion also empties the
        chronicle's answer cache, so the next read finds it). Called on the loop, once."""
        if self._watch is None:
            self._watch = watch_archive(self._parts, asyncio.get_running_loop())

    async def _close_lifecycle(self) -> None:
        if self._watch is not None:
            await asyncio.to_thread(self._watch.stop)
        if self._idle is not None:
            await asyncio.shield(self._idle.aclose())
