"""How a request for an agent becomes its answer in the transcript.

:class:`AnswerPipeline` tries, in order: the agent's own stores (the knowledge
desk), the Librarian's cache of model answers, an honest offline answer when no
model is configured, and finally a turn of the agent itself (the configured MCP
servers started, the conversation so far as history). The reply is shaped into a
transcript message, remembered in the cache when it may be, and noted as activity
on the chronicle (history answers may be stale once something was done).

A request for the Engineer is the exception once the engine routes them
(:meth:`AnswerPipeline.route_engineer_requests`): it runs as a one-node pipeline
(engineer -> inspector -> tester), so a quick change is checked too. The pipeline's
own engineer turns come back through :meth:`AnswerPipeline.answer` inside
:func:`pipeline_turn`, and are answered as turns, never as another pipeline.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Protocol

from backend.agents.conversation import HISTORY_LIMIT, HistoryWindow, conversation
from backend.agents.dispatch import AgentDispatcher
from backend.agents.knowledge_desk import KnowledgeDesk, Question
from backend.agents.librarian_cache import CachedReply, LibrarianAnswers, Pending
from backend.agents.turns import TurnRunner
from backend.bus.errors import BusError, describe_failure
from backend.guide.routing.decision import RouteDecision, Target
from backend.knowledge.chronicle.chronicle import Chronicle
from backend.llm.offline import offline_answer
from backend.llm.types import ChatMessage
from backend.memory.keeper import ContextKeeper
from backend.memory.windows import context_window
from backend.messages import Message, MessageType
from backend.sessions.models import Session

Record = Message[dict[str, Any]]
# (session_id, decision) -> the answer recorded: how a request for the Engineer is run
EngineerRequests = Callable[[str, RouteDecision], Awaitable[Record]]

MODEL_ADVISED = "model_advised"
"""Session metadata: the session was told how to configure a model (told once)."""

_IN_PIPELINE: ContextVar[bool] = ContextVar("sylk_pipeline_turn", default=False)


@contextmanager
def pipeline_turn() -> Iterator[None]:
    """Inside: an engineer request is one turn of the running pipeline (the caller's
    task), not a new pipeline."""
    token = _IN_PIPELINE.set(True)
    try:
        yield
    finally:
        _IN_PIPELINE.reset(token)


class TranscriptDesk(Protocol):
    """Where answers are recorded (the engine's session service)."""

    def get(self, session_id: str) -> Session: ...

    async def set_metadata(self, ref: str, key: str, value: Any) -> Session: ...

    async def append(self, message: Record) -> Record: ...

    async def notice(self, session_id: str, text: str, **extra: Any) -> Record: ...

    async def transcript(self, session_id: str, *, limit: int | None = None) -> list[Record]: ...


class AnswerPipeline:
    """``start_tools`` starts the configured MCP servers (once); ``settle`` waits for
    what the turn's hooks are still recording; ``config_source`` is the settings file
    an offline answer points to."""

    def __init__(
        self,
        *,
        sessions: TranscriptDesk,
        turns: TurnRunner,
        desk: KnowledgeDesk,
        cache: LibrarianAnswers,
        dispatcher: AgentDispatcher,
        chronicle: Chronicle,
        start_tools: Callable[[], Awaitable[None]],
        settle: Callable[[], Awaitable[None]],
        config_source: Path | None,
    ) -> None:
        self._sessions = sessions
        self._turns = turns
        self._desk = desk
        self._cache = cache
        self._dispatcher = dispatcher
        self._chronicle = chronicle
        self._start_tools = start_tools
        self._settle = settle
        self._config_source = config_source
        self._engineer_requests: EngineerRequests | None = None
        self._window = HistoryWindow()  # a steady start keeps the prompt cache warm
        # Checkpoints and compaction at each role's thresholds (backend.memory).
        self._memory = ContextKeeper(turns.context, chronicle, conversation)

    def route_engineer_requests(self, run: EngineerRequests | None) -> None:
        """Requests for the Engineer go to ``run`` (a one-node pipeline), except the
        turns of a pipeline (:func:`pipeline_turn`); None: answered as turns."""
        self._engineer_requests = run

    async def answer(self, session_id: str, decision: RouteDecision) -> Record:
        """Ask the agent the Guide chose, in this session, and record its answer."""
        run = self._engineer_requests
        if run is not None and decision.target is Target.ENGINEER and not _IN_PIPELINE.get():
            return await run(session_id, decision)
        role = decision.target.value
        offline = self._turns.choice(role, self._sessions.get(session_id)).offline
        question = self.question(session_id, decision)
        known = await self._desk.answer(role, question, offline=offline)
        if known is not None:
            return await self._stored_reply(session_id, role, known, decision, offline)
        memo = await self._cache.lookup(role, question, offline=offline)
        if isinstance(memo, CachedReply):  # the model answered this before; nothing changed
            return await self._stored_reply(
                session_id, role, memo.text, decision, False, meta=memo.meta
            )
        if offline:  # nothing to call: say honestly what to configure
            return await self._offline(session_id, role, decision)
        return await self._ask_agent(session_id, role, decision, memo)

    def question(self, session_id: str, decision: RouteDecision) -> Question:
        return Question(
            session_id=session_id,
            workspace=Path(self._sessions.get(session_id).workspace),
            text=decision.text,
            intent=decision.intent,
            subject=decision.subject,
            time_scope=decision.time_scope,
        )

    # -- the steps --------------------------------------------------------------
    async def _stored_reply(
        self,
        session_id: str,
        role: str,
        text: str,
        decision: RouteDecision,
        offline: bool,
        *,
        meta: dict[str, Any] | None = None,
    ) -> Record:
        """An answer from an agent's store (index, chronicle, library, its answer cache)."""
        payload = {"text": text, "agent": role, "tier": decision.tier, "intent": decision.intent}
        message = Record(
            session_id=session_id,
            source=role,
            target="user",
            type=MessageType.AGENT_REPLY,
            payload={**payload, "answered_from": "knowledge", "offline": offline, **(meta or {})},
        )
        return await self._sessions.append(message)  # as stored: keys redacted

    async def _offline(self, session_id: str, role: str, decision: RouteDecision) -> Record:
        # The advice on configuring a model is given once per session, then a reminder.
        advised = bool(self._sessions.get(session_id).metadata.get(MODEL_ADVISED))
        answer = offline_answer(decision.text, self._config_source, role, advised=advised)
        routed = {"agent": role, "tier": decision.tier}
        record = await self._sessions.notice(session_id, answer, offline=True, **routed)
        if not advised:
            await self._sessions.set_metadata(session_id, MODEL_ADVISED, True)
        return record

    async def _history(
        self, session_id: str, role: str, decision: RouteDecision
    ) -> list[ChatMessage]:
        """The conversation so far, the line being answered (just recorded) left out,
        metered against the role's model window: checkpointed and compacted as its plan says."""
        transcript = await self._sessions.transcript(session_id, limit=HISTORY_LIMIT + 1)
        records = self._window.cut(session_id, transcript[:-1])
        choice = self._turns.choice(role, self._sessions.get(session_id))
        return await self._memory.prepare(
            session_id,
            role,
            records,
            decision.text,
            window=context_window(self._turns.settings, choice.provider, choice.model),
            call=self._turns.summary_call(session_id, role, choice),
            model=choice.model,
            handoff=_IN_PIPELINE.get(),  # a pipeline's engineer hands off instead
        )

    async def _ask_agent(
        self, session_id: str, role: str, decision: RouteDecision, memo: Pending | None
    ) -> Record:
        await self._start_tools()
        history = await self._history(session_id, role, decision)
        try:
            reply = await self._dispatcher.ask(session_id, decision, history)
            # Context updates the turn's tools caused are saved before its answer.
            await self._settle()
        except BusError as exc:
            return await self._sessions.notice(
                session_id, describe_failure(role, exc), error=type(exc).__name__
            )
        payload = dict(reply.payload)
        failed = await self._failure(session_id, role, payload)
        if failed is not None:
            return failed
        message = await self._record_reply(session_id, role, decision, reply, payload)
        if memo is not None:  # cached only if final and no change batch overlapped the turn
            await self._cache.remember(memo, payload)
        if role != "archivalist":  # something was done: history answers may be stale now
            self._chronicle.note_activity(session_id)
        return message

    async def _failure(self, session_id: str, role: str, payload: dict[str, Any]) -> Record | None:
        """A notice for a turn that ended in an error, or was cancelled before any text."""
        meta = {k: v for k, v in payload.items() if k != "text"}
        if payload.get("stop") == "error":
            text = f"The {role} could not answer: {payload.get('error')}"
            if payload.get("text"):  # what it said before the error is kept and shown
                meta["answer"] = payload["text"]
                text += f"\n\nWhat it said before that:\n\n{payload['text']}"
            return await self._sessions.notice(session_id, text, **meta)
        if payload.get("stop") == "cancelled" and not payload.get("text"):
            text = "Cancelled before any answer arrived."
            return await self._sessions.notice(session_id, text, **meta)
        return None

    async def _record_reply(
        self,
        session_id: str,
        role: str,
        decision: RouteDecision,
        reply: Message[Any],
        payload: dict[str, Any],
    ) -> Record:
        message = Record(
            session_id=session_id,
            source=role,
            target="user",
            type=MessageType.AGENT_REPLY,
            payload={**payload, "response_type": reply.type.value, "tier": decision.tier},
            correlation_id=reply.correlation_id,
        )
        return await self._sessions.append(message)  # as stored: keys redacted


def late_reply(reply: Message[Any]) -> Record:
    """An answer that arrived after its requester stopped waiting (e.g. a replay)."""
    payload = (
        dict(reply.payload) if isinstance(reply.payload, dict) else {"text": str(reply.payload)}
    )
    return Record(
        session_id=reply.session_id,
        source=reply.source,
        target="user",
        type=MessageType.AGENT_REPLY,
        payload={**payload, "late": True, "response_type": reply.type.value},
        correlation_id=reply.correlation_id,
    )
