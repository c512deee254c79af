"""Delivering a routed request to an agent in its session, through the Guide.

Each (session, agent) gets an inbox and a consumer the first time it is
asked. The consumer runs the agent's turn in a task of its own, so the user
can cancel the turn without killing the consumer; the reply travels back
through the bus to the waiting requester.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from backend.agents.tool_actions import stored_actions
from backend.agents.turns import TurnRunner
from backend.bus.consumer import Handler
from backend.checkpoints.task_ledger import TASK_TAG, task_tag
from backend.guide.guide import USER, Guide
from backend.guide.routing.decision import RouteDecision, Target
from backend.llm.types import ChatMessage
from backend.messages import Message, MessageType
from backend.sessions.models import Session

# What a user request to each agent is, and what its answer is, in the seed's terms.
MESSAGE_TYPES: dict[Target, tuple[MessageType, MessageType]] = {
    Target.LIBRARIAN: (MessageType.CONTEXT_REQUEST, MessageType.CONTEXT_RESPONSE),
    Target.ARCHIVALIST: (MessageType.HISTORY_REQUEST, MessageType.HISTORY_RESPONSE),
    Target.ACADEMIC: (MessageType.RESEARCH_REQUEST, MessageType.RESEARCH_RESPONSE),
    Target.ARCHITECT: (MessageType.PLAN_REQUEST, MessageType.PLAN_RESPONSE),
    Target.INSPECTOR: (MessageType.INSPECTION_REQUEST, MessageType.INSPECTION_RESULTS),
    Target.TESTER: (MessageType.TEST_PLAN_REQUEST, MessageType.TEST_PLAN_RESPONSE),
}
DEFAULT_TYPES = (MessageType.USER_INPUT, MessageType.AGENT_REPLY)

SessionOf = Callable[[str], Session]
LateReply = Callable[[Message[Any]], Awaitable[None]]
DESK_KEY = "desk"  # a message's metadata naming the desk that handles it instead of a turn
TASK_KEY = "task"  # the plan task a request's turn works for (its edits recorded under it)


class AgentDispatcher:
    def __init__(
        self, *, guide: Guide, turns: TurnRunner, session_of: SessionOf, on_late_reply: LateReply
    ) -> None:
        self.guide = guide
        self.turns = turns
        self._session_of = session_of
        self._on_late_reply = on_late_reply
        # Agents of one session work concurrently: every running turn, by session.
        self._running: dict[str, set[asyncio.Task[Any]]] = {}
        self._desks: dict[str, Handler] = {}

    def add_desk(self, name: str, desk: Handler) -> None:
        """Messages whose ``metadata["desk"]`` is ``name`` are handled by ``desk`` in the
        agent's consumer, not by a model turn: a consult answered from the agent's store,
        a broadcast note kept for its next turn, a question the Architect puts to the user.
        They still travel the Guide's bus, so its flow log, breakers and dead letters apply."""
        self._desks[name] = desk

    def ensure(self, session_id: str, role: str) -> None:
        """``role`` has an inbox and a consumer in ``session_id`` (and the user one for
        late replies)."""
        self.guide.ensure_agent(session_id, USER, self._late)
        self.guide.ensure_agent(session_id, role, self._handler(session_id, role))

    async def ask(
        self, session_id: str, decision: RouteDecision, history: list[ChatMessage]
    ) -> Message[Any]:
        role = decision.target.value
        self.ensure(session_id, role)
        request_type, _ = MESSAGE_TYPES.get(decision.target, DEFAULT_TYPES)
        request = Message[dict[str, Any]](
            session_id=session_id,
            source=USER,
            target=role,
            type=request_type,
            payload={
                "text": decision.text,
                "intent": decision.intent,
                "subject": decision.subject,
                "time_scope": decision.time_scope,
                "history": [m.model_dump(mode="json") for m in history],
            },
        )
        if (tag := TASK_TAG.get()) is not None:  # the turn runs in another task: carried
            request.metadata[TASK_KEY] = tag
        return await self.guide.ask(request)

    def _handler(self, session_id: str, role: str) -> Handler:
        async def handle(message: Message[Any]) -> Message[Any] | None:
            desk = self._desks.get(str(message.metadata.get(DESK_KEY, "")))
            if desk is not None:
                return await desk(message)
            session = self._session_of(session_id)
            history = [ChatMessage.model_validate(m) for m in message.payload["history"]]
            choice = self.turns.choice(role, session)
            tag = message.metadata.get(TASK_KEY)
            with task_tag(tag if isinstance(tag, str) else None):  # the turn's task copies it
                turn = asyncio.create_task(
                    self.turns.run(session, role, history, choice),
                    name=f"sylk-turn-{session.short_id}-{role}",
                )
            running = self._running.setdefault(session_id, set())
            running.add(turn)
            try:
                outcome = await turn
            finally:
                running.discard(turn)
                if not running:
                    self._running.pop(session_id, None)
            _, reply_type = MESSAGE_TYPES.get(Target(role), DEFAULT_TYPES)
            return message.reply(
                source=role,
                type=reply_type,
                payload={
                    "text": outcome.text,
                    "agent": role,
                    "turn_id": outcome.turn_id,
                    "stop": outcome.stop,
                    "error": outcome.error,
                    "provider": choice.provider,
                    "model": choice.model,
                    "usage": outcome.usage.model_dump(),
                    # The turn's tool calls, shown with the answer (backend.agents.tool_actions).
                    **({"actions": stored_actions(outcome.actions)} if outcome.actions else {}),
                    # What the model reasoned, shown apart: never the answer's text.
                    **({"reasoning": outcome.reasoning} if outcome.reasoning else {}),
                },
            )

        return handle

    async def _late(self, message: Message[Any]) -> None:
        await self._on_late_reply(message)

    def running(self, session_id: str) -> bool:
        return bool(self._running.get(session_id))

    def cancel(self, session_id: str) -> bool:
        """Cancel every running turn of the session; False if none was running."""
        turns = [t for t in self._running.get(session_id, ()) if not t.done()]
        for turn in turns:
            turn.cancel()
        return bool(turns)

    async def aclose(self) -> None:
        turns = [t for group in self._running.values() for t in group]
        for turn in turns:
            turn.cancel()
        await asyncio.gather(*turns, return_exceptions=True)
