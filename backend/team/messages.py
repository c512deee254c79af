"""Agents talk through the Guide: consults, broadcasts, and an engineer's question.

Every message here travels the Guide's bus to the target agent's inbox in the session
and is handled by that agent's consumer (a *desk*, :meth:`AgentDispatcher.add_desk`),
so the Guide's checks (active session, known agent), its flow log, breakers and dead
letters apply and the route is visible:

* a consult (``engineer.consult.*``) is a CONTEXT/HISTORY/RESEARCH_REQUEST to the
  Librarian, Archivalist or Academic, answered from its stores without a model as
  before; a caller whose session the Guide does not serve (an MCP client's own
  session) is answered from the stores directly, and the result says so;
* a broadcast (``guide.message.broadcast``) is a high-priority note to each agent; its
  consumer keeps the note in the session (metadata, so it survives a restart) and the
  agent's next turns see the latest notes in their system prompt;
* an engineer's question (``engineer.help.request``) is a TASK_HELP to the Architect,
  who asks the user on the QuestionBoard (``architect.user.clarify`` is the Architect's
  own way) and replies with the user's answer. With no front end to answer, the reply
  says so and tells the engineer to proceed on a stated assumption. The Architect's
  consumer is not held while the user thinks: the answer is sent when it comes.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from backend.agents.dispatch import DESK_KEY, MESSAGE_TYPES, AgentDispatcher
from backend.bus.dead_letter import DeadLetterReason
from backend.bus.errors import BusError
from backend.errors import SessionNotFoundError
from backend.events import ChoiceOption, ChoiceQuestion
from backend.guide.guide import Guide
from backend.guide.routing.decision import Target
from backend.messages import Message, MessageType, Priority
from backend.questions import QuestionBoard
from backend.roles import AGENT_ROLES
from backend.sessions.models import Session
from backend.skills.builtin.engineer import Consult, HelpParams, consult_handler
from backend.skills.builtin.guide import BroadcastParams
from backend.skills.builtin.teams import ClarifyParams
from backend.skills.envelopes import ErrorCode, SkillError
from backend.skills.gateway.gateway import Gateway
from backend.skills.hooks.registry import Hook, HookKind, HookPriority, PromptData
from backend.skills.models import SkillContext
from backend.skills.session_scope import CROSS_SESSION_SCOPE
from backend.team.wiring import install_handler

CONSULT_DESK = "consult"
NOTE_DESK = "broadcast"
CLARIFY_DESK = "clarify"
NOTES_KEY = "broadcast_notes"  # session metadata: {agent: [note, ...]}, newest last
NOTES_KEPT = 5
NOTE_CHARS = 2000
NO_ONE = (
    "No one can answer now (no front end is attached to ask the user): proceed with your "
    "best assumption and state it in your answer."
)
DECLINED = (
    "The user did not answer (declined, or the question was withdrawn): proceed with your "
    "best assumption and state it in your answer."
)

SessionOf = Callable[[str], Session]
SetMetadata = Callable[[str, str, Any], Awaitable[Any]]
Route = dict[str, Any]


class AgentMessages:
    """The Guide-routed messages between a session's agents, and the desks serving them."""

    def __init__(
        self,
        *,
        guide: Guide,
        dispatcher: AgentDispatcher,
        session_of: SessionOf,
        set_metadata: SetMetadata,
        consult: Consult,
        questions: QuestionBoard,
        help_wait_s: float | None = None,
    ) -> None:
        self._guide = guide
        self._dispatcher = dispatcher
        self._session_of = session_of
        self._set_metadata = set_metadata
        self._consult = consult
        self._questions = questions
        self._help_wait_s = help_wait_s or guide.settings.request_timeout_s
        self._asking: set[asyncio.Task[None]] = set()
        dispatcher.add_desk(CONSULT_DESK, self._consult_desk)
        dispatcher.add_desk(NOTE_DESK, self._note_desk)
        dispatcher.add_desk(CLARIFY_DESK, self._clarify_desk)

    def _served(self, session_id: str) -> bool:
        try:
            self._session_of(session_id)
        except SessionNotFoundError:
            return False
        return True

    # -- consults -----------------------------------------------------------------
    async def consult(
        self, ctx: SkillContext, agent: str, question: str
    ) -> tuple[str | None, Route]:
        """``agent``'s answer to ``ctx.agent``'s question, and the route it took."""
        crossing = CROSS_SESSION_SCOPE in ctx.scopes
        if not self._served(ctx.session_id):
            answer = await self._consult(agent, ctx.session_id, ctx.workspace, question, crossing)
            why = "the caller's session is not one the Guide serves (a client's own session)"
            return answer, {"via": "direct", "reason": why}
        self._dispatcher.ensure(ctx.session_id, agent)
        request_type, _ = MESSAGE_TYPES[Target(agent)]
        message = Message[dict[str, Any]](
            session_id=ctx.session_id,
            source=ctx.agent,
            target=agent,
            type=request_type,
            payload={"question": question, "workspace": str(ctx.workspace), "cross": crossing},
            metadata={DESK_KEY: CONSULT_DESK},
        )
        reply = await self._guide.ask(message)
        route = {"via": "guide", "message_id": message.id, "type": request_type.value,
                 "from": ctx.agent, "to": agent, "reply_type": reply.type.value}  # fmt: skip
        answer = reply.payload.get("answer")
        return (str(answer) if answer is not None else None), route

    async def _consult_desk(self, message: Message[Any]) -> Message[Any]:
        agent = str(message.target)
        p = message.payload
        answer = await self._consult(
            agent, message.session_id, Path(p["workspace"]), p["question"], bool(p["cross"])
        )
        _, reply_type = MESSAGE_TYPES[Target(agent)]
        return message.reply(source=agent, type=reply_type, payload={"answer": answer})

    # -- broadcasts ---------------------------------------------------------------
    async def broadcast(self, ctx: SkillContext, p: BroadcastParams) -> dict[str, Any]:
        """Send ``p.message`` to every agent of the session (or ``p.agents``)."""
        unknown = [a for a in p.agents if a not in AGENT_ROLES]
        if unknown:
            raise SkillError(
                ErrorCode.NOT_FOUND,
                f"no agent named {', '.join(map(repr, unknown))} in a Sylk session",
                details={"unknown": unknown, "agents": list(AGENT_ROLES)},
                help_path="guide.message.broadcast",
            )
        self._session_of(ctx.session_id)  # SessionNotFoundError: not a session the Guide serves
        targets = list(dict.fromkeys(p.agents)) or [a for a in AGENT_ROLES if a != ctx.agent]
        broadcast_id = f"bc_{uuid.uuid4().hex[:12]}"
        received: list[str] = []
        refused: dict[str, str] = {}
        for agent in targets:
            self._dispatcher.ensure(ctx.session_id, agent)
            note = Message[dict[str, Any]](
                session_id=ctx.session_id,
                source=ctx.agent,
                target=agent,
                type=MessageType.SYSTEM_NOTICE,
                payload={"text": p.message[:NOTE_CHARS], "from": ctx.agent, "id": broadcast_id},
                metadata={DESK_KEY: NOTE_DESK},
                priority=Priority.HIGH,  # ahead of requests already queued for the agent
            )
            try:
                await self._guide.send(note, timeout=0)
            except BusError as exc:  # a full inbox, an open breaker: say who missed it
                refused[agent] = str(exc)
            else:
                received.append(agent)
        return {
            "broadcast_id": broadcast_id,
            "received": received,
            "refused": refused,
            "seen": "each agent sees the message in the context of its next turns",
        }

    async def _note_desk(self, message: Message[Any]) -> None:
        agent = str(message.target)
        session = self._session_of(message.session_id)
        kept: dict[str, list[dict[str, str]]] = dict(session.metadata.get(NOTES_KEY) or {})
        sent = message.payload
        note = {"id": str(sent["id"]), "from": str(sent["from"]), "text": str(sent["text"]),
                "at": message.timestamp.isoformat()}  # fmt: skip
        kept[agent] = [*kept.get(agent, []), note][-NOTES_KEPT:]
        await self._set_metadata(message.session_id, NOTES_KEY, kept)

    def notes_for(self, session_id: str, agent: str) -> list[dict[str, str]]:
        try:
            kept = self._session_of(session_id).metadata.get(NOTES_KEY) or {}
        except SessionNotFoundError:
            return []
        return list(kept.get(agent, []))

    def notes_hook(self) -> Hook:
        """The pre-prompt hook showing an agent the latest notes broadcast to it."""

        def show(data: PromptData) -> PromptData:
            notes = self.notes_for(data.session_id, data.agent)
            if notes:
                lines = [f"- {n['at'][:19]}Z from the {n['from']}: {n['text']}" for n in notes]
                block = "## Messages broadcast to you (newest last)\n" + "\n".join(lines)
                data.context.append(block)  # the turn's context block, never the system
            return data

        return Hook("broadcast_notes", HookKind.PRE_PROMPT, show, HookPriority.EARLY)

    # -- an engineer's question, through the Architect ----------------------------
    async def request_help(self, ctx: SkillContext, p: HelpParams) -> dict[str, Any]:
        """``ctx.agent``'s question to the user, through the Guide and the Architect."""
        if not self._served(ctx.session_id):
            return _unanswered(p.question, "no_session", NO_ONE, {"via": "none"})
        self._dispatcher.ensure(ctx.session_id, "architect")
        message = Message[dict[str, Any]](
            session_id=ctx.session_id,
            source=ctx.agent,
            target="architect",
            type=MessageType.TASK_HELP,
            payload={"question": p.question, "context": p.context, "options": p.options},
            metadata={DESK_KEY: CLARIFY_DESK},
            ttl=timedelta(seconds=self._help_wait_s),
        )
        reply = await self._guide.ask(message, timeout=self._help_wait_s + 5)
        route = {"via": "guide", "message_id": message.id, "from": ctx.agent, "to": "architect",
                 "type": message.type.value, "reply_type": reply.type.value}  # fmt: skip
        return {"question": p.question, **reply.payload, "route": route}

    async def _clarify_desk(self, message: Message[Any]) -> None:
        """The Architect asks the user in a task of its own and replies when answered."""
        task = asyncio.create_task(self._answer_later(message), name="sylk-clarify")
        self._asking.add(task)
        task.add_done_callback(self._asking.discard)

    async def _answer_later(self, message: Message[Any]) -> None:
        p = message.payload
        outcome = await self.clarify(
            message.session_id, p["question"], list(p["options"]), p.get("context")
        )
        reply = message.reply(
            source="architect", type=MessageType.CLARIFICATION_RESPONSE, payload=outcome
        )
        try:
            await self._guide.bus.respond(reply, timeout=0)
        except BusError as exc:  # the asker gave up or its session closed: keep the answer
            self._guide.bus.dead_letter(reply, DeadLetterReason.UNDELIVERABLE, error=exc)

    async def clarify(
        self, session_id: str, question: str, options: list[str], context: str | None = None
    ) -> dict[str, Any]:
        """Ask the user (options when given, free text otherwise); never raises for
        "nobody answered": the outcome says what happened and what to do."""
        if not self._questions.answered_here:
            return _unanswered(question, "no_one_to_ask", NO_ONE)
        asked = ChoiceQuestion(
            title="The Architect asks",
            prompt=question if not context else f"{question}\n\n{context}",
            options=[ChoiceOption(value=o, label=o) for o in dict.fromkeys(options)],
            free_text=not options,
        )
        try:
            async with asyncio.timeout(self._help_wait_s):
                value = await self._questions.ask(asked, session_id)
        except TimeoutError:
            return _unanswered(question, "timed_out", DECLINED)
        if value is None:
            return _unanswered(question, "declined", DECLINED)
        return {"question": question, "answered": True, "answer": value, "answered_by": "user"}

    async def architect_clarify(self, ctx: SkillContext, p: ClarifyParams) -> dict[str, Any]:
        """``architect.user.clarify``: only the Architect speaks to the user."""
        if ctx.agent != "architect":
            raise SkillError(
                ErrorCode.ACCESS_DENIED,
                f"only the Architect asks the user; the {ctx.agent} asks through "
                "engineer.help.request, which reaches the user through the Architect",
                details={"reason": "architect_only", "agent": ctx.agent},
                help_path="engineer.help.request",
            )
        return await self.clarify(ctx.session_id, p.question, p.options)


def _unanswered(
    question: str, reason: str, answer: str, route: Route | None = None
) -> dict[str, Any]:
    found: dict[str, Any] = {"question": question, "answered": False, "reason": reason,
                             "answer": answer}  # fmt: skip
    if route is not None:
        found["route"] = route
    return found


def install_messages(gateway: Gateway, messages: AgentMessages) -> None:
    """The consults, the broadcast, the engineer's question and the Architect's get their
    Guide-routed handlers; every agent's prompt shows the notes broadcast to it."""
    for agent in ("librarian", "archivalist", "academic"):
        handler = consult_handler(agent, messages.consult)
        install_handler(gateway, f"engineer.consult.{agent}", handler)
    install_handler(gateway, "guide.message.broadcast", messages.broadcast)
    install_handler(gateway, "engineer.help.request", messages.request_help)
    install_handler(gateway, "architect.user.clarify", messages.architect_clarify)
    gateway.hooks.install(messages.notes_hook())
