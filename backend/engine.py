"""Engine: the one facade the UI and the CLI talk to.

It owns the archive, the session manager and the event stream. Every change
is committed to the archive before the event announcing it is published, so
whatever a subscriber has seen survives a crash.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from backend.agents.loop import AgentOutcome
from backend.agents.turns import TurnRunner
from backend.clock import utc_now
from backend.config import SylkConfig, load_config
from backend.errors import CommandError, SessionNotActiveError, SylkError
from backend.events import (
    ActiveSessionChanged,
    EngineEvent,
    EventStream,
    MessageAppended,
    SessionChanged,
    SessionCreated,
)
from backend.guide import session_commands
from backend.guide.session_commands import SessionCommand
from backend.knowledge.archive import Archive
from backend.llm.accounting import UsageSummary, summarise
from backend.llm.offline import offline_answer
from backend.llm.types import ChatMessage
from backend.messages import Message, MessageType
from backend.redaction import Redactor
from backend.sessions.manager import SessionChange, SessionManager
from backend.sessions.models import Session, SessionContext, SessionSnapshot, SessionState

Transcript = list[Message[dict[str, Any]]]

# The agent that answers the user's plain requests until the Guide routes them.
FRONT_AGENT = "architect"
HISTORY_LIMIT = 40


class EngineConfig(BaseModel):
    model_config = ConfigDict(frozen=True)
    data_dir: Path
    workspace: Path
    config_file: Path | None = None
    provider: str | None = None
    model: str | None = None

    @field_validator("workspace")
    @classmethod
    def _real_workspace(cls, value: Path) -> Path:
        resolved = value.expanduser().resolve()
        if not resolved.is_dir():
            raise ValueError(f"workspace {value} is not a directory")
        return resolved


class Engine:
    def __init__(self, config: EngineConfig, settings: SylkConfig | None = None) -> None:
        self.config = config
        self.settings = settings or load_config(config.config_file)
        self.redactor = Redactor(self.settings.secrets())
        self.archive = Archive(config.data_dir)
        self.events = EventStream()
        self.turns = TurnRunner(
            settings=self.settings,
            archive=self.archive,
            events=self.events,
            redactor=self.redactor,
            provider_override=config.provider,
            model_override=config.model,
        )
        self._turn_tasks: dict[str, asyncio.Task[AgentOutcome]] = {}
        self._turn_locks: dict[str, asyncio.Lock] = {}
        self._manager = SessionManager(self.archive.load_sessions())
        self._changes: list[SessionChange] = []
        self._manager.add_listener(self._changes.append)
        self._lock = asyncio.Lock()
        self._closed = False

    # -- lifecycle -----------------------------------------------------------
    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        for task in list(self._turn_tasks.values()):
            task.cancel()
        await asyncio.gather(*self._turn_tasks.values(), return_exceptions=True)
        await self.turns.aclose()
        async with self._lock:
            await asyncio.to_thread(self.archive.close)
        self.events.close()

    async def __aenter__(self) -> Engine:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()

    # -- queries -------------------------------------------------------------
    def list_sessions(self, *, include_closed: bool = False) -> list[Session]:
        return self._manager.list_all(include_closed=include_closed)

    def get_session(self, ref: str) -> Session:
        return self._manager.resolve(ref)

    def active_session(self) -> Session | None:
        return self._manager.get_active()

    def get_context(self, ref: str) -> SessionContext:
        return self._manager.get_context(self._manager.resolve(ref).id)

    async def transcript(self, session_id: str, *, limit: int | None = None) -> Transcript:
        self._manager.get(session_id)  # typed error for an unknown session
        return await self.archive.aload_transcript(session_id, limit=limit)

    def transcript_counts(self) -> dict[str, int]:
        return self.archive.transcript_counts()

    # -- session lifecycle -----------------------------------------------------
    async def _commit(self) -> None:
        """Persist the manager's pending changes, then announce them."""
        changes, self._changes[:] = list(self._changes), []
        if not changes:
            return
        latest = {c.session.id: c.session for c in changes}
        await self.archive.asave_sessions(latest.values())
        for change in changes:
            self._publish_change(change)

    def _publish_change(self, change: SessionChange) -> None:
        session = change.session
        if change.operation == "create":
            self.events.publish(SessionCreated(session_id=session.id, session=session))
            return
        self.events.publish(
            SessionChanged(
                session_id=session.id,
                session=session,
                operation=change.operation,
                old_state=change.old,
            )
        )

    async def _run(self, op: Callable[[], Session]) -> Session:
        async with self._lock:
            before = self._manager.active_id
            try:
                result = op()
            finally:
                await self._commit()
            after = self._manager.active_id
            if after != before:
                self.events.publish(ActiveSessionChanged(session_id=after, previous_id=before))
            return result

    def _unique_name(self, name: str | None) -> str:
        taken = {s.name.casefold() for s in self._manager.list_all(include_closed=True)}
        if name and name.strip():
            base = name.strip()
            if base.casefold() not in taken:
                return base
        else:
            base = "session"
        n = 1 if base != "session" else len(taken) + 1
        while f"{base} {n}".casefold() in taken:
            n += 1
        return f"{base} {n}"

    async def create_session(self, name: str | None = None, *, activate: bool = True) -> Session:
        """Create a session in this engine's workspace and, by default, switch to it."""
        final = self._unique_name(name)
        workspace = str(self.config.workspace)

        def op() -> Session:
            session = self._manager.create(final, workspace=workspace)
            return self._manager.activate(session.id) if activate else session

        return await self._run(op)

    async def ensure_session(self) -> Session:
        """The foreground session; the newest open one, or a new one, if none is."""
        active = self._manager.get_active()
        if active is not None:
            return active
        candidates = [s for s in self._manager.list_all() if not s.is_terminal]
        if candidates:
            latest = max(candidates, key=lambda s: s.last_active_at)
            return await self.switch_session(latest.id)
        return await self.create_session()

    async def switch_session(self, ref: str) -> Session:
        target = self._manager.resolve(ref).id
        return await self._run(lambda: self._manager.switch(target))

    def _ref_or_active(self, ref: str | None) -> str:
        if ref is not None:
            return self._manager.resolve(ref).id
        active = self._manager.active_id
        if active is None:
            raise CommandError("no session is active", help_hint="name the session")
        return active

    async def suspend_session(self, ref: str | None = None) -> Session:
        target = self._ref_or_active(ref)
        return await self._run(lambda: self._manager.suspend(target))

    async def resume_session(self, ref: str) -> Session:
        target = self._manager.resolve(ref).id
        return await self._run(lambda: self._manager.resume(target))

    async def complete_session(self, ref: str | None = None, summary: str | None = None) -> Session:
        target = self._ref_or_active(ref)
        return await self._run(lambda: self._manager.complete(target, summary))

    async def fail_session(self, ref: str, reason: str) -> Session:
        target = self._manager.resolve(ref).id
        return await self._run(lambda: self._manager.fail(target, reason))

    async def close_session(self, ref: str) -> Session:
        target = self._manager.resolve(ref).id
        return await self._run(lambda: self._manager.close(target))

    async def update_context(self, ref: str, update: Callable[[SessionContext], None]) -> None:
        target = self._manager.resolve(ref).id

        def op() -> Session:
            self._manager.update_context(target, update)
            return self._manager.get(target)

        await self._run(op)

    async def snapshot(self, ref: str) -> SessionSnapshot:
        session = self._manager.resolve(ref)
        count = self.archive.transcript_counts().get(session.id, 0)
        snap = self._manager.snapshot(session.id, transcript_count=count)
        await asyncio.to_thread(self.archive.save_snapshot, snap)
        return snap

    def snapshots(self, ref: str) -> list[SessionSnapshot]:
        return self.archive.load_snapshots(self._manager.resolve(ref).id)

    async def restore(self, snapshot: SessionSnapshot) -> Session:
        return await self._run(lambda: self._manager.restore(snapshot))

    # -- messages --------------------------------------------------------------
    async def append(self, message: Message[dict[str, Any]]) -> None:
        """Commit one message to its session's transcript, then announce it."""
        self._manager.get(message.session_id)
        if self.redactor:
            message = message.model_copy(update={"payload": self.redactor.data(message.payload)})
        now = utc_now()
        # Memory first: a session change committed meanwhile carries the new time too.
        self._manager.touch(message.session_id, at=now)
        await self.archive.aappend_messages([message], touched_at=now)
        self.events.publish(MessageAppended(session_id=message.session_id, message=message))

    async def _notice(self, session_id: str, text: str, **extra: Any) -> Message[dict[str, Any]]:
        notice = Message[dict[str, Any]](
            session_id=session_id,
            source="sylk",
            target="user",
            type=MessageType.SYSTEM_NOTICE,
            payload={"text": text, **extra},
        )
        await self.append(notice)
        return notice

    async def submit(self, session_id: str, text: str) -> Transcript:
        """Take one line from the user: a command, or a request for the agents.

        Returns the messages recorded. Plain requests go only to the session in
        the foreground; commands are accepted from any session.
        """
        session = self._manager.get(session_id)
        text = text.strip()
        if not text:
            return []
        command = session_commands.is_command(text)
        if not command and session.state is not SessionState.ACTIVE:
            raise SessionNotActiveError(session.id, session.state.value)
        entry = Message[dict[str, Any]](
            session_id=session_id,
            source="user",
            target="guide",
            type=MessageType.USER_INPUT,
            payload={"text": text},
        )
        await self.append(entry)
        if not command:
            return [entry, await self._answer(session, text)]
        try:
            parsed = session_commands.parse(text)
            reply = await self._run_command(parsed)
        except SylkError as exc:
            return [entry, await self._notice(session_id, str(exc), error=type(exc).__name__)]
        # Listings and help are laid out in columns: front ends show them as-is.
        tabular = parsed.verb in ("list", "help")
        return [entry, await self._notice(session_id, reply, preformatted=tabular)]

    # -- agent turns -------------------------------------------------------------
    def _history(self, transcript: Transcript) -> list[ChatMessage]:
        """The conversation so far as the model sees it: requests and answers only."""
        pairs: list[tuple[str, str]] = []
        for message in transcript[-HISTORY_LIMIT:]:
            text = message.payload.get("text")
            if not isinstance(text, str) or not text:
                continue
            if message.type is MessageType.USER_INPUT and not session_commands.is_command(text):
                role = "user"
            elif message.type is MessageType.AGENT_REPLY:
                role = "assistant"
            else:
                continue
            if pairs and pairs[-1][0] == role:  # vendors want roles to alternate
                pairs[-1] = (role, f"{pairs[-1][1]}\n\n{text}")
            else:
                pairs.append((role, text))
        while pairs and pairs[0][0] != "user":
            pairs.pop(0)
        return [
            ChatMessage.user(text) if role == "user" else ChatMessage.assistant(text)
            for role, text in pairs
        ]

    async def _answer(self, session: Session, text: str) -> Message[dict[str, Any]]:
        """Run one turn of the front agent on the session's conversation."""
        choice = self.turns.choice(FRONT_AGENT)
        if choice.offline:  # nothing to call: say honestly what to configure
            answer = offline_answer(text, self.settings.source)
            return await self._notice(session.id, answer, offline=True)
        lock = self._turn_locks.setdefault(session.id, asyncio.Lock())
        async with lock:  # one turn per session at a time; later requests wait
            history = self._history(await self.transcript(session.id, limit=HISTORY_LIMIT))
            task = asyncio.create_task(
                self.turns.run(session, FRONT_AGENT, history, choice),
                name=f"sylk-turn-{session.short_id}",
            )
            self._turn_tasks[session.id] = task
            try:
                outcome = await task
            finally:
                self._turn_tasks.pop(session.id, None)
        meta: dict[str, Any] = {
            "agent": FRONT_AGENT,
            "turn_id": outcome.turn_id,
            "stop": outcome.stop,
            "provider": choice.provider,
            "model": choice.model,
            "usage": outcome.usage.model_dump(),
        }
        if outcome.stop == "error":
            text = f"The {FRONT_AGENT} could not answer: {outcome.error}"
            return await self._notice(session.id, text, error="ProviderError", **meta)
        if outcome.stop == "cancelled" and not outcome.text:
            return await self._notice(session.id, "Cancelled before any answer arrived.", **meta)
        if outcome.error:
            meta["error"] = outcome.error
        reply = Message[dict[str, Any]](
            session_id=session.id,
            source=FRONT_AGENT,
            target="user",
            type=MessageType.AGENT_REPLY,
            payload={"text": outcome.text, **meta},
        )
        await self.append(reply)
        return reply

    def turn_running(self, session_id: str) -> bool:
        return session_id in self._turn_tasks

    def cancel_turn(self, session_id: str) -> bool:
        """Stop the session's running turn (stream and tools); False if none runs."""
        task = self._turn_tasks.get(session_id)
        if task is None or task.done():
            return False
        task.cancel()
        return True

    def usage(self, session_id: str | None = None) -> UsageSummary:
        return summarise(session_id, self.archive.usage_by_agent(session_id))

    async def _run_command(self, cmd: SessionCommand) -> str:
        if cmd.verb == "help":
            return session_commands.HELP_TEXT
        if cmd.verb == "list":
            return self.describe_sessions()
        if cmd.verb == "new":
            made = await self.create_session(cmd.name)
            return f"created and switched to session {made.name!r} ({made.short_id})"
        if cmd.verb == "switch":
            assert cmd.ref is not None
            now = await self.switch_session(cmd.ref)
            return f"switched to session {now.name!r} ({now.short_id})"
        if cmd.verb == "resume":
            assert cmd.ref is not None
            now = await self.resume_session(cmd.ref)
            return f"resumed session {now.name!r} ({now.short_id})"
        if cmd.verb == "suspend":
            now = await self.suspend_session(cmd.ref)
            return f"suspended session {now.name!r} ({now.short_id})"
        now = await self.complete_session(cmd.ref)
        return f"completed session {now.name!r} ({now.short_id})"

    def describe_sessions(self) -> str:
        sessions = self._manager.list_all()
        if not sessions:
            return "no sessions"
        active = self._manager.active_id
        lines = []
        for n, s in enumerate(sessions, 1):
            mark = "*" if s.id == active else " "
            lines.append(f"{mark}{n:>2}  {s.short_id}  {s.state.value:<9}  {s.name}")
        return "\n".join(lines)


def subscribe_all(engine: Engine, sink: Callable[[EngineEvent], None]) -> Callable[[], None]:
    """Convenience for front ends: forward every event to ``sink``."""
    return engine.events.add_listener(sink)
