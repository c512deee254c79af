"""Answers still being written: the text an agent has streamed so far, per session,
and its tool calls as they run.

Steps arrive as engine events; the recorded answer arrives a moment later as a
transcript message. When the turn ends the draft stays on screen, no longer
"answering", until that message replaces it, so the answer never blinks out.
A tool call becomes a block the moment the model asks for it (``running…``),
takes in its command's output as it streams, and its result when it ends: the
same :class:`~backend.agents.tool_actions.ToolAction` the recorded answer
carries, so the block looks the same before and after.

What the model reasons (``reasoning_delta`` steps) is kept apart, as the recorded
answer keeps it (``payload["reasoning"]``: the end of each model call's, joined), and
flagged ``payload["thinking"]`` while the turn runs, so the transcript draws it as a
live "thinking…" block above the text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from backend.message_types import MessageType

if TYPE_CHECKING:  # the engine's models (pydantic) load with the first step, after the frame
    from backend.agents.tool_actions import ToolAction
    from backend.messages import Message

    EngineMessage = Message[dict[str, Any]]

REASONING_KEPT = 4096  # characters of each model call's reasoning the draft keeps (its end)
TURN_ENDS = frozenset({"final", "truncated", "interrupted", "step_limit", "cancelled", "error"})


@dataclass
class _Draft:
    role: str
    text: str = ""
    doing: str = ""
    actions: dict[str, ToolAction] = field(default_factory=dict)
    new_step: bool = False  # a model call began: its text is a new paragraph
    reasoned: list[str] = field(default_factory=list)  # earlier model calls' reasoning
    thinking: str = ""  # the current model call's reasoning so far (its end)

    @property
    def reasoning(self) -> str:
        return "\n\n".join(p.strip() for p in [*self.reasoned, self.thinking] if p.strip())


class AnswerDrafts:
    def __init__(self, clock: Callable[[], datetime]) -> None:
        self._clock = clock
        self._drafts: dict[str, _Draft] = {}
        self._ended: set[str] = set()  # turn over, recorded answer not shown yet

    def step(
        self,
        session_id: str,
        role: str,
        kind: str,
        text: str,
        data: Mapping[str, Any] | None = None,
    ) -> None:
        if kind in TURN_ENDS:
            draft = self._drafts.get(session_id)
            if draft is not None:
                from backend.agents.tool_actions import stopped

                self._ended.add(session_id)
                draft.actions = {k: stopped(a) for k, a in draft.actions.items()}
            return
        if session_id in self._ended:  # a new turn begins
            self._ended.discard(session_id)
            self._drafts.pop(session_id, None)
        draft = self._drafts.setdefault(session_id, _Draft(role))
        draft.doing = "retrying" if kind == "retry" else ""
        if kind in ("model_call", "retry") and draft.thinking:
            if kind == "model_call":  # a retried attempt's reasoning is thought again
                draft.reasoned.append(draft.thinking)
            draft.thinking = ""
        if kind == "model_call":
            draft.new_step = bool(draft.text)
        elif kind == "reasoning_delta":
            kept = draft.thinking + text
            draft.thinking = kept if len(kept) <= REASONING_KEPT else kept[-REASONING_KEPT:]
        elif text:
            if draft.new_step:  # as the recorded answer joins its steps' texts
                draft.text = draft.text.rstrip("\n") + "\n\n"
                draft.new_step = False
            draft.text += text
        if data:
            self._tool_step(draft, kind, data)

    @staticmethod
    def _tool_step(draft: _Draft, kind: str, data: Mapping[str, Any]) -> None:
        from backend.agents.tool_actions import add_output, begin_action, finish_action

        call_id = str(data.get("id", ""))
        if kind == "tool_call":
            arguments = data.get("arguments")
            args = arguments if isinstance(arguments, dict) else {}
            at = len(draft.text)
            draft.actions[call_id] = begin_action(call_id, str(data.get("name", "")), args, at)
            return
        action = draft.actions.get(call_id)
        if action is None:
            return
        if kind == "tool_output":
            draft.actions[call_id] = add_output(action, str(data.get("text", "")))
        elif kind == "tool_result":
            content = str(data.get("content", ""))
            draft.actions[call_id] = finish_action(action, content, bool(data.get("is_error")))

    def answered(self, message: EngineMessage) -> bool:
        """A recorded message replaces a finished draft; True when one was dropped."""
        sid = message.session_id
        if sid in self._ended and message.type is not MessageType.USER_INPUT:
            self._ended.discard(sid)
            self._drafts.pop(sid, None)
            return True
        return False

    def working(self, session_id: str | None) -> str | None:
        """Who is answering in ``session_id`` (``None``: nobody)."""
        sid = session_id or ""
        draft = self._drafts.get(sid)
        return draft.role if draft and sid not in self._ended else None

    def message(self, session_id: str | None) -> EngineMessage | None:
        """The draft as a transcript message, for display only."""
        draft = self._drafts.get(session_id or "")
        if draft is None or session_id is None:
            return None
        from backend.agents.tool_actions import stored_actions
        from backend.messages import Message

        tail = "" if session_id in self._ended else f" … ({draft.doing})" if draft.doing else " …"
        payload: dict[str, Any] = {"text": (draft.text + tail).lstrip()}
        if draft.actions:
            payload["actions"] = stored_actions(draft.actions.values())
        if draft.reasoning:
            payload["reasoning"] = draft.reasoning
            payload["thinking"] = session_id not in self._ended
        return Message(
            id=f"draft-{session_id}",
            session_id=session_id,
            source=draft.role,
            type=MessageType.AGENT_REPLY,
            payload=payload,
            timestamp=self._clock(),
        )
