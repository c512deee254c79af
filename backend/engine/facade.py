"""Engine: the one facade the UI and the CLI talk to.

It owns the archive, the session manager and the event stream. Every change
is committed to the archive before the event announcing it is published, so
whatever a subscriber has seen survives a crash.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from backend.agents.conversation import HISTORY_LIMIT, conversation
from backend.agents.dispatch import AgentDispatcher
from backend.agents.knowledge_desk import Question
from backend.agents.librarian_cache import CachedReply, LibrarianAnswers
from backend.agents.turns import TurnRunner
from backend.archive.store import Archive
from backend.bus.errors import BusError, describe_failure
from backend.bus.health import AgentHealth, HealthStatus
from backend.clock import utc_now
from backend.config.settings import SylkConfig, load_config
from backend.engine.knowledge_parts import EngineKnowledge, tools_answer
from backend.engine.skills_parts import EngineSkills
from backend.errors import CommandError, SessionNotActiveError, SylkError
from backend.events import (
    ActiveSessionChanged,
    EngineEvent,
    EngineNotice,
    EventStream,
    MessageAppended,
    QuestionAsked,
    SessionChanged,
    SessionCreated,
)
from backend.guide.commands import run_command
from backend.guide.guide import Guide
from backend.guide.routing.decision import AGENT_TARGETS, RouteDecision
from backend.guide.routing.model_tier import ModelClassifier
from backend.guide.routing.patterns import classify as classify_text
from backend.guide.routing.router import Router
from backend.guide.status import cache_lines, render_status
from backend.knowledge.code.live import CodeKnowledge
from backend.llm.accounting import UsageSummary, summarise
from backend.llm.offline import offline_answer
from backend.mcp.client.as_skills import attach_skills
from backend.mcp.client.hub import McpHub
from backend.messages import Message, MessageType
from backend.questions import QuestionBoard
from backend.redaction import Redactor
from backend.sessions.manager import SessionChange, SessionManager
from backend.sessions.models import (
    Session,
    SessionContext,
    SessionSnapshot,
    SessionState,
)
from backend.skills.builtin.guide import GuideWiring
from backend.skills.hooks.builtin import (
    route_cache_hooks,
)
from backend.skills.search.embedding import describe_search

Transcript = list[Message[dict[str, Any]]]
log = logging.getLogger("sylk.tools")


class EngineConfig(BaseModel):
    model_config = ConfigDict(frozen=True)
    data_dir: Path
    workspace: Path
    config_file: Path | None = None
    provider: str | None = None
    model: str | None = None
    # Index workspaces and follow their edits (off only for tests that need neither).
    watch_files: bool = True

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
        self.knowledge = EngineKnowledge(
            data_dir=config.data_dir,
            settings=self.settings,
            archive=self.archive,
            redactor=self.redactor,
            events=self.events,
            watch=config.watch_files,
        )
        self._manager = SessionManager(self.archive.load_sessions())
        self.skills = EngineSkills(
            knowledge=self.knowledge,
            archive=self.archive,
            redactor=self.redactor,
            semantic=self.settings.search.semantic,
            wiring=GuideWiring(
                route=self.route,
                classify=classify_text,
                status=self.status_text,
                list_sessions=lambda include_closed=False: self.list_sessions(
                    include_closed=bool(include_closed)
                ),
                switch_session=self.switch_session,
                session_context=self.get_context,
            ),
            session_of=self._manager.get,
            update_context=self.update_context,
        )
        self.gateway = self.skills.gateway
        self.librarian_answers = LibrarianAnswers(self.knowledge.code, self.archive)
        self.mcp = McpHub(self.settings.mcp_servers, cwd=config.workspace)
        self._mcp_started = False
        self.turns = TurnRunner(
            settings=self.settings,
            archive=self.archive,
            events=self.events,
            redactor=self.redactor,
            gateway=self.gateway,
            provider_override=config.provider,
            model_override=config.model,
        )
        self.guide = Guide(
            router=self._router(),
            settings=self.settings.guide,
            state_of=lambda sid: self._manager.get(sid).state.value,
            on_health=self._on_health,
        )
        self.dispatcher = AgentDispatcher(
            guide=self.guide,
            turns=self.turns,
            session_of=self._manager.get,
            on_late_reply=self._late_reply,
        )
        self._questions = QuestionBoard(self.events.publish)
        self._changes: list[SessionChange] = []
        self._manager.add_listener(self._changes.append)
        self._lock = asyncio.Lock()
        self._closed = False

    # -- lifecycle -----------------------------------------------------------
    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._questions.withdraw_all()
        await self.skills.aclose()
        await self.dispatcher.aclose()
        await self.guide.aclose()
        await self.turns.aclose()
        await self.mcp.aclose()
        await self.knowledge.aclose()
        async with self._lock:
            await asyncio.to_thread(self.archive.close)
        self.events.close()

    async def start_tools(self) -> None:
        """Start the configured MCP servers once and register their tools as hidden ops."""
        if self._mcp_started:
            return
        self._mcp_started = True
        await self.mcp.start()
        attach_skills(self.mcp, self.gateway.registry)  # and again after a server restarts

    async def start_indexing(self, session_id: str | None = None) -> CodeKnowledge:
        """Index the session's workspace (the active one's by default) in the background."""
        session = self._manager.get(session_id) if session_id else self.active_session()
        workspace = Path(session.workspace) if session else self.config.workspace
        return await self.knowledge.index(workspace)

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
        done = await self._run(lambda: self._manager.complete(target, summary))
        await self._release(target)
        await self.knowledge.chronicle.complete_session(target)  # promotes its decisions
        return done

    async def fail_session(self, ref: str, reason: str) -> Session:
        target = self._manager.resolve(ref).id
        failed = await self._run(lambda: self._manager.fail(target, reason))
        await self._release(target)
        return failed

    async def close_session(self, ref: str) -> Session:
        target = self._manager.resolve(ref).id
        closed = await self._run(lambda: self._manager.close(target))
        await self._release(target)
        return closed

    async def _release(self, session_id: str) -> None:
        """A finished session's agents stop and its gateway state is dropped."""
        await self.guide.close_session(session_id)
        self.gateway.forget_session(session_id)

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
        """Take one line from the user; the Guide routes it.

        Returns the messages recorded: the user's line (with its routing
        decision) and the answer. Requests for agents go only to the session in
        the foreground; commands are accepted from any session.
        """
        session = self._manager.get(session_id)
        text = text.strip()
        if not text:
            return []
        try:
            decision = await self.guide.route(text)
        except CommandError as exc:
            entry = await self._record_input(session_id, text, None)
            return [entry, await self._notice(session_id, str(exc), error=type(exc).__name__)]
        for_agent = decision.target in AGENT_TARGETS
        if for_agent and session.state is not SessionState.ACTIVE:
            raise SessionNotActiveError(session.id, session.state.value, session.name)
        entry = await self._record_input(session_id, text, decision)
        if for_agent:
            return [entry, await self._answer(session_id, decision)]
        try:
            answer, tabular = await run_command(self, self.guide, session_id, decision)
        except SylkError as exc:
            return [entry, await self._notice(session_id, str(exc), error=type(exc).__name__)]
        return [entry, await self._notice(session_id, answer, preformatted=tabular)]

    async def route(self, text: str, target: str | None = None) -> RouteDecision:
        """The Guide's decision for ``text`` (sent to ``target`` if named), not carried out."""
        if target:
            text = f"@{target.strip().lstrip('@')} {text}"
        return await self.guide.route(text)

    async def _record_input(
        self, session_id: str, text: str, decision: RouteDecision | None
    ) -> Message[dict[str, Any]]:
        payload: dict[str, Any] = {"text": text}
        if decision is not None:
            payload["route"] = decision.model_dump(mode="json")
        entry = Message[dict[str, Any]](
            session_id=session_id,
            source="user",
            target="guide",
            type=MessageType.USER_INPUT,
            payload=payload,
        )
        await self.append(entry)
        return entry

    # -- agent turns -------------------------------------------------------------
    async def _answer(self, session_id: str, decision: RouteDecision) -> Message[dict[str, Any]]:
        """Ask the agent the Guide chose, in this session, and record its answer."""
        role = decision.target.value
        routed = {"agent": role, "tier": decision.tier}
        choice = self.turns.choice(role)
        question = self._question(session_id, decision)
        known = await self.knowledge.desk.answer(role, question, offline=choice.offline)
        if known is not None:
            return await self._knowledge_reply(session_id, role, known, decision, choice.offline)
        memo = await self.librarian_answers.lookup(role, question, offline=choice.offline)
        if isinstance(memo, CachedReply):  # the model answered this before; nothing changed
            return await self._knowledge_reply(
                session_id, role, memo.text, decision, False, meta=memo.meta
            )
        if choice.offline:  # nothing to call: say honestly what to configure
            answer = offline_answer(decision.text, self.settings.source, role)
            return await self._notice(session_id, answer, offline=True, **routed)
        await self.start_tools()
        transcript = await self.transcript(session_id, limit=HISTORY_LIMIT + 1)
        history = conversation(transcript[:-1], decision.text)
        try:
            reply = await self.dispatcher.ask(session_id, decision, history)
            # Context updates the turn's tools caused are saved before its answer.
            await self.skills.settle()
        except BusError as exc:
            return await self._notice(
                session_id, describe_failure(role, exc), error=type(exc).__name__
            )
        payload = dict(reply.payload)
        meta = {k: v for k, v in payload.items() if k != "text"}
        if payload.get("stop") == "error":
            text = f"The {role} could not answer: {payload.get('error')}"
            return await self._notice(session_id, text, **meta)
        if payload.get("stop") == "cancelled" and not payload.get("text"):
            return await self._notice(session_id, "Cancelled before any answer arrived.", **meta)
        answer_message = Message[dict[str, Any]](
            session_id=session_id,
            source=role,
            target="user",
            type=MessageType.AGENT_REPLY,
            payload={**payload, "response_type": reply.type.value, "tier": decision.tier},
            correlation_id=reply.correlation_id,
        )
        await self.append(answer_message)
        if memo is not None:  # cached only if final and no change batch overlapped the turn
            await self.librarian_answers.remember(memo, payload)
        if role != "archivalist":  # something was done: history answers may be stale now
            self.knowledge.chronicle.note_activity(session_id)
        return answer_message

    async def tools_command(self, session_id: str, args: dict[str, str]) -> str:
        """``/tools``: the session's workspace's linters, formatters and test tools."""
        workspace = Path(self._manager.get(session_id).workspace)
        board = self._questions
        ask = (lambda q: board.ask(q, session_id)) if board.answered_here else None
        return await tools_answer(self.knowledge, workspace, args, ask)

    # -- questions to the user -----------------------------------------------
    def attach_questions(self) -> Callable[[], None]:
        """A front end that shows questions (QuestionAsked events); returns its detach."""
        return self._questions.attach()

    def answer_question(self, question_id: str, value: str | None) -> bool:
        """Answer (or with None decline) a pending question; False if it is not pending."""
        return self._questions.answer(question_id, value)

    def pending_questions(self, session_id: str | None = None) -> list[QuestionAsked]:
        return self._questions.pending(session_id)

    def _question(self, session_id: str, decision: RouteDecision) -> Question:
        return Question(
            session_id=session_id,
            workspace=Path(self._manager.get(session_id).workspace),
            text=decision.text,
            intent=decision.intent,
            subject=decision.subject,
            time_scope=decision.time_scope,
        )

    async def _knowledge_reply(
        self,
        session_id: str,
        role: str,
        text: str,
        decision: RouteDecision,
        offline: bool,
        *,
        meta: dict[str, Any] | None = None,
    ) -> Message[dict[str, Any]]:
        """An answer from an agent's store (index, chronicle, library, its answer cache)."""
        payload = {"text": text, "agent": role, "tier": decision.tier, "intent": decision.intent}
        message = Message[dict[str, Any]](
            session_id=session_id,
            source=role,
            target="user",
            type=MessageType.AGENT_REPLY,
            payload={**payload, "answered_from": "knowledge", "offline": offline, **(meta or {})},
        )
        await self.append(message)
        return message

    async def _late_reply(self, reply: Message[Any]) -> None:
        """An answer that arrived after its requester stopped waiting (e.g. a replay)."""
        payload = (
            dict(reply.payload) if isinstance(reply.payload, dict) else {"text": str(reply.payload)}
        )
        await self.append(
            Message[dict[str, Any]](
                session_id=reply.session_id,
                source=reply.source,
                target="user",
                type=MessageType.AGENT_REPLY,
                payload={**payload, "late": True, "response_type": reply.type.value},
                correlation_id=reply.correlation_id,
            )
        )

    def _on_health(self, health: AgentHealth, previous: HealthStatus) -> None:
        if health.status is HealthStatus.HEALTHY:
            text = f"The {health.agent} is working again (was {previous.value})."
            level = "info"
        else:
            detail = f": {health.error}" if health.error else ""
            waited = f" for {health.stalled_for:.0f}s" if health.stalled_for else ""
            text = (
                f"The {health.agent} is {health.status.value}{waited}{detail} "
                f"({health.queue_depth} waiting). Other agents keep working; see /status."
            )
            level = "warning" if health.status is HealthStatus.STALLED else "error"
        self.events.publish(EngineNotice(session_id=health.session_id, level=level, text=text))

    def turn_running(self, session_id: str) -> bool:
        return self.dispatcher.running(session_id)

    def cancel_turn(self, session_id: str) -> bool:
        """Stop the session's running turn (stream and tools); False if none runs."""
        return self.dispatcher.cancel(session_id)

    def usage(self, session_id: str | None = None) -> UsageSummary:
        return summarise(session_id, self.archive.usage_by_agent(session_id))

    def status_text(self, session_id: str) -> str:
        choice = self.turns.choice("architect")
        model = (
            "offline (no model configured)"
            if choice.offline
            else (f"{choice.provider}/{choice.model} ({choice.reason})")
        )
        workspace = Path(self._manager.get(session_id).workspace)
        return render_status(
            self.guide,
            session_id,
            self.describe_sessions(),
            self.usage(session_id),
            model,
            search_line=describe_search(
                self.gateway.index.embedding, self.settings.search.semantic
            ),
            caches=cache_lines(self.knowledge.cache_stats(workspace)),
        )

    def _router(self) -> Router:
        """The Guide's router, its route cache behind the seed's prompt hooks."""
        router = Router(classifier=self._model_classifier, hooks=self.gateway.hooks)
        for hook in route_cache_hooks(router.cache):
            self.gateway.hooks.install(hook)
        return router

    def _model_classifier(self) -> ModelClassifier | None:
        choice = self.turns.choice("guide")
        if choice.offline:
            return None
        return ModelClassifier(self.turns.client(choice.provider), choice.model)

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
